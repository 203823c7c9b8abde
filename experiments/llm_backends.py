#!/usr/bin/env python
"""Benchmark freshwiki's LLM backends through the public API only.

Run from the repository root::

    .venv/bin/python experiments/llm_backends.py [--quick] \
        [--models smollm2-135m,qwen2.5-coder-1.5b]

What is measured, for each named local model (``local:NAME``, in this process):

1. **Prompt processing** (tokens/s): a ~500-token prompt with ``max_tokens=1``;
   ``prompt tok/s = usage.prompt_tokens / latency``. The latency also holds one sampled
   token and the per-call overhead, so this slightly understates the raw evaluation rate.
2. **Generation** (tokens/s): a short prompt with ``max_tokens=128`` at temperature 0.
   Reported two ways: ``raw = completion_tokens / latency`` and the headline
   ``gen tok/s = completion_tokens / (latency - prompt_tokens / prompt_tok_s)``, i.e. with the
   short prompt's evaluation time (estimated from step 1 of the same run) taken out.
   Every prompt in 1 and 2 starts with a fresh nonce, so no KV prefix is reused.
3. **Prefix reuse**: a ~600-token system message of few-shot examples (built at run time from
   lead paragraphs of a local Wikipedia dump; none of that text is stored) followed by
   question A (call 1, cold) and then question B (call 2, warm), ``max_tokens=8``. An
   unrelated prompt runs first so call 1 is really cold. A third call (question C) runs
   after another unrelated prompt, to see whether the RAM prompt cache restores the prefix
   for interleaved prompts. Repeated with different prefixes; the median ratio is reported.
4. **Response-cache hit**: the same request twice through ``open_llm(..., cache=True)``;
   the second call's latency and ``cache_hit``.

And once, against a real OpenAI-compatible server (``python -m llama_cpp.server`` serving
smollm2-135m in a subprocess): N distinct requests (``max_tokens=32``) sent sequentially and
then concurrently with ``asyncio.gather``; throughput of both and their ratio.

All clients use a temporary ``FRESHWIKI_HOME`` and ``cache=False`` except in step 4, so
nothing is ever a response-cache hit by accident. Nothing is asserted: the script reports.
Results go to ``experiments/results/llm_backends.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshwiki.config import Settings, load_settings
from freshwiki.errors import FreshwikiError
from freshwiki.llm import LLM, LLMResult, Message, models, open_llm

ROOT = Path(__file__).resolve().parent
RESULTS_PATH = ROOT / "results" / "llm_backends.json"
WIKI_PATH = Path("/work/shared/data/wikipedia/topics/head_articles_en.json")
DEFAULT_MODELS = "smollm2-135m,qwen2.5-coder-1.5b"
SERVER_MODEL = "smollm2-135m"

PP_TARGET_TOKENS = 500
PREFIX_TARGET_TOKENS = 600
GEN_MAX_TOKENS = 128
PREFIX_MAX_TOKENS = 8
SERVER_REQUESTS = 8
SERVER_MAX_TOKENS = 32
SERVER_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Plan:
    """How many repetitions of each measurement to run."""

    pp_reps: int
    gen_reps: int
    prefix_reps: int
    hit_reps: int
    server_rounds: int


FULL = Plan(pp_reps=3, gen_reps=2, prefix_reps=3, hit_reps=3, server_rounds=3)
QUICK = Plan(pp_reps=2, gen_reps=1, prefix_reps=2, hit_reps=2, server_rounds=2)


# -- helpers ----------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"  .. {msg}", flush=True)


def nonce() -> str:
    return uuid.uuid4().hex[:10]


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def rss_mb() -> dict[str, float]:
    """Current and peak resident memory of this process, in MB (Linux only)."""
    out: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = round(int(rest.split()[0]) / 1024, 1)
    except OSError:
        pass
    return out


def call_record(result: LLMResult) -> dict[str, Any]:
    return {
        "latency_s": round(result.latency_s, 4),
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
        "finish_reason": result.finish_reason,
        "cache_hit": result.cache_hit,
    }


class Corpus:
    """Lead sentences of Wikipedia articles, read at run time and never written anywhere."""

    def __init__(self, path: Path, seed: int = 20240601) -> None:
        data: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
        items = []
        for title, text in data.items():
            if title.startswith("List of") or len(text) < 300:
                continue
            lead = text.strip().split("\n", 1)[0]
            sentences = re.split(r"(?<=[.!?])\s+", lead)
            snippet = " ".join(sentences[:2])[:320]
            items.append((title, snippet, lead))
        random.Random(seed).shuffle(items)
        self._items = items
        self._next = 0

    def take(self, n: int) -> list[tuple[str, str, str]]:
        """The next ``n`` unused articles as (title, short snippet, lead paragraph)."""
        out = self._items[self._next : self._next + n]
        self._next += n
        if len(out) < n:
            raise RuntimeError("ran out of Wikipedia articles")
        return out

    def text_of_chars(self, n_chars: int) -> str:
        """Fresh lead paragraphs joined until about ``n_chars`` characters."""
        parts: list[str] = []
        total = 0
        while total < n_chars:
            ((_, _, lead),) = self.take(1)
            parts.append(lead)
            total += len(lead) + 2
        return "\n\n".join(parts)[:n_chars]

    def few_shot_prefix(self, n_chars: int) -> str:
        """A system message of Q/A examples, about ``n_chars`` characters long."""
        # The nonce comes first so that no two prefixes share more than the chat template's
        # opening tokens: call 1 of each round is then really cold.
        header = (
            f"Session {nonce()}. You answer questions about Wikipedia topics with one short "
            "factual sentence, in the style of these examples.\n\n"
        )
        body = header
        while len(body) < n_chars:
            ((title, snippet, _),) = self.take(1)
            body += f"Q: What is {title}?\nA: {snippet}\n\n"
        return body.rstrip()


# -- local model measurements ----------------------------------------------------------------


async def chat(llm: LLM, messages: list[Message], **kwargs: Any) -> LLMResult:
    return await llm.chat(messages, temperature=0.0, use_cache=False, **kwargs)


async def unrelated_call(llm: LLM) -> LLMResult:
    """A short prompt that shares nothing with what follows: evicts the KV prefix."""
    return await chat(
        llm,
        [Message.system(f"Session {nonce()}."), Message.user("Name a colour.")],
        max_tokens=1,
    )


async def bench_prompt_processing(
    llm: LLM, corpus: Corpus, reps: int, chars_per_token_guess: float
) -> dict[str, Any]:
    calls = []
    for i in range(reps):
        text = corpus.text_of_chars(int(PP_TARGET_TOKENS * chars_per_token_guess))
        messages = [
            Message.system(f"Session {nonce()}. You are a careful reader."),
            Message.user(f"{text}\n\nReply with one word: the topic of the first paragraph."),
        ]
        result = await chat(llm, messages, max_tokens=1)
        rec = call_record(result)
        rec["chars"] = sum(len(m.content) for m in messages)
        rec["prompt_tok_s"] = round(ratio(result.usage.prompt_tokens, result.latency_s), 1)
        calls.append(rec)
        log(
            f"prompt processing {i + 1}/{reps}: {rec['prompt_tokens']} tok in "
            f"{rec['latency_s']:.2f} s -> {rec['prompt_tok_s']:.0f} tok/s"
        )
    total_tokens = sum(c["prompt_tokens"] for c in calls)
    total_chars = sum(c["chars"] for c in calls)
    return {
        "calls": calls,
        "prompt_tokens_median": median([c["prompt_tokens"] for c in calls]),
        "prompt_tok_s": round(median([c["prompt_tok_s"] for c in calls]), 1),
        "chars_per_token": round(ratio(total_chars, total_tokens), 3),
    }


async def bench_generation(
    llm: LLM, corpus: Corpus, reps: int, prompt_tok_s: float
) -> dict[str, Any]:
    calls = []
    for i in range(reps):
        ((title, _, _),) = corpus.take(1)
        messages = [
            Message.system(f"Session {nonce()}. You are a helpful writer."),
            Message.user(f"Write a long, detailed essay about {title}."),
        ]
        result = await chat(llm, messages, max_tokens=GEN_MAX_TOKENS)
        rec = call_record(result)
        prompt_time = ratio(result.usage.prompt_tokens, prompt_tok_s)
        gen_time = max(result.latency_s - prompt_time, 1e-9)
        rec["est_prompt_time_s"] = round(prompt_time, 4)
        rec["gen_tok_s_raw"] = round(ratio(result.usage.completion_tokens, result.latency_s), 2)
        rec["gen_tok_s"] = round(ratio(result.usage.completion_tokens, gen_time), 2)
        calls.append(rec)
        log(
            f"generation {i + 1}/{reps}: {rec['completion_tokens']} tok in "
            f"{rec['latency_s']:.2f} s -> {rec['gen_tok_s']:.1f} tok/s "
            f"(raw {rec['gen_tok_s_raw']:.1f})"
        )
    return {
        "calls": calls,
        "gen_tok_s": round(median([c["gen_tok_s"] for c in calls]), 2),
        "gen_tok_s_raw": round(median([c["gen_tok_s_raw"] for c in calls]), 2),
    }


async def bench_prefix_reuse(
    llm: LLM, corpus: Corpus, reps: int, chars_per_token: float
) -> dict[str, Any]:
    rounds = []
    # Q/A lines tokenize denser than the prose of the calibration prompt; start a little
    # short and re-calibrate from each round's actual prompt tokens.
    cpt = chars_per_token * 0.85
    for i in range(reps):
        prefix = corpus.few_shot_prefix(int(PREFIX_TARGET_TOKENS * cpt))
        (ta, _, _), (tb, _, _), (tc, _, _) = corpus.take(3)

        def ask(title: str, prefix: str = prefix) -> list[Message]:
            return [Message.system(prefix), Message.user(f"Q: What is {title}?")]

        await unrelated_call(llm)
        first = await chat(llm, ask(ta), max_tokens=PREFIX_MAX_TOKENS)
        second = await chat(llm, ask(tb), max_tokens=PREFIX_MAX_TOKENS)
        await unrelated_call(llm)
        interleaved = await chat(llm, ask(tc), max_tokens=PREFIX_MAX_TOKENS)
        rec = {
            "prefix_chars": len(prefix),
            "first": call_record(first),
            "second": call_record(second),
            "after_unrelated": call_record(interleaved),
            "ratio_first_second": round(ratio(first.latency_s, second.latency_s), 2),
            "ratio_first_after_unrelated": round(ratio(first.latency_s, interleaved.latency_s), 2),
        }
        rounds.append(rec)
        cpt = ratio(len(prefix), first.usage.prompt_tokens)
        log(
            f"prefix reuse {i + 1}/{reps}: {first.usage.prompt_tokens} tok prompt; "
            f"cold {first.latency_s:.2f} s, warm {second.latency_s:.2f} s "
            f"({rec['ratio_first_second']:.1f}x), after unrelated "
            f"{interleaved.latency_s:.2f} s ({rec['ratio_first_after_unrelated']:.1f}x)"
        )
    return {
        "rounds": rounds,
        "prompt_tokens_median": median([r["first"]["prompt_tokens"] for r in rounds]),
        "first_s_median": round(median([r["first"]["latency_s"] for r in rounds]), 4),
        "second_s_median": round(median([r["second"]["latency_s"] for r in rounds]), 4),
        "after_unrelated_s_median": round(
            median([r["after_unrelated"]["latency_s"] for r in rounds]), 4
        ),
        "ratio_median": round(median([r["ratio_first_second"] for r in rounds]), 2),
        "ratio_after_unrelated_median": round(
            median([r["ratio_first_after_unrelated"] for r in rounds]), 2
        ),
    }


async def bench_cache_hit(spec: str, settings: Settings, reps: int) -> dict[str, Any]:
    llm = open_llm(spec, settings=settings, cache=True)
    try:
        messages = [
            Message.system(f"Session {nonce()}."),
            Message.user("In one sentence, what is a wiki?"),
        ]
        miss = await llm.chat(messages, max_tokens=16)
        hits = [await llm.chat(messages, max_tokens=16) for _ in range(reps)]
    finally:
        await llm.aclose()
    hit_ms = [h.latency_s * 1000 for h in hits]
    out = {
        "miss": call_record(miss),
        "hits": [call_record(h) for h in hits],
        "hit_ms_median": round(median(hit_ms), 3),
        "all_cache_hit": all(h.cache_hit for h in hits),
        "first_was_miss": not miss.cache_hit,
        "same_text": all(h.text == miss.text for h in hits),
        "speedup": round(ratio(miss.latency_s * 1000, median(hit_ms)), 1),
    }
    log(
        f"cache: miss {miss.latency_s * 1000:.0f} ms, hit {out['hit_ms_median']:.2f} ms "
        f"(cache_hit={out['all_cache_hit']})"
    )
    return out


async def bench_local_model(
    name: str, settings: Settings, corpus: Corpus, plan: Plan
) -> dict[str, Any]:
    spec = f"local:{name}"
    print(f"\n== {spec}", flush=True)
    llm = open_llm(spec, settings=settings, cache=False)
    out: dict[str, Any] = {"spec": spec, "model_id": llm.backend.model_id}
    try:
        started = time.perf_counter()
        warm = await unrelated_call(llm)
        out["load_and_first_call_s"] = round(time.perf_counter() - started, 3)
        out["warmup_call"] = call_record(warm)
        log(f"loaded and warmed up in {out['load_and_first_call_s']:.2f} s")
        pp = await bench_prompt_processing(llm, corpus, plan.pp_reps, chars_per_token_guess=4.0)
        out["prompt_processing"] = pp
        out["generation"] = await bench_generation(llm, corpus, plan.gen_reps, pp["prompt_tok_s"])
        out["prefix_reuse"] = await bench_prefix_reuse(
            llm, corpus, plan.prefix_reps, pp["chars_per_token"]
        )
    finally:
        await llm.aclose()
    out["cache"] = await bench_cache_hit(spec, settings, plan.hit_reps)
    out["memory_mb_after"] = rss_mb()
    return out


# -- OpenAI-compatible server ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_server(url: str, proc: subprocess.Popen[bytes], timeout_s: float) -> float:
    """Poll ``GET url`` until it answers 200; return the seconds it took."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return time.perf_counter() - started
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"server did not answer {url} within {timeout_s:g} s")


def server_messages(i: int) -> list[Message]:
    return [
        Message.system(f"Session {nonce()}."),
        Message.user(f"Request {i}: write two sentences about the number {i + 3}."),
    ]


async def run_batch(llm: LLM, concurrent: bool) -> dict[str, Any]:
    batch = [server_messages(i) for i in range(SERVER_REQUESTS)]
    started = time.perf_counter()
    if concurrent:
        results = await asyncio.gather(*(chat(llm, m, max_tokens=SERVER_MAX_TOKENS) for m in batch))
    else:
        results = [await chat(llm, m, max_tokens=SERVER_MAX_TOKENS) for m in batch]
    wall = time.perf_counter() - started
    completion = sum(r.usage.completion_tokens for r in results)
    return {
        "requests": len(results),
        "wall_s": round(wall, 3),
        "completion_tokens": completion,
        "requests_per_s": round(len(results) / wall, 3),
        "completion_tok_s": round(completion / wall, 2),
        "median_request_latency_s": round(median([r.latency_s for r in results]), 3),
    }


def pooled(batches: list[dict[str, Any]]) -> dict[str, Any]:
    """Throughput over all rounds together: total requests and tokens over total wall time."""
    wall = sum(b["wall_s"] for b in batches)
    requests = sum(b["requests"] for b in batches)
    tokens = sum(b["completion_tokens"] for b in batches)
    return {
        "requests": requests,
        "wall_s": round(wall, 3),
        "completion_tokens": tokens,
        "requests_per_s": round(ratio(requests, wall), 3),
        "completion_tok_s": round(ratio(tokens, wall), 2),
        "median_request_latency_s": round(
            median([b["median_request_latency_s"] for b in batches]), 3
        ),
    }


async def bench_server(settings: Settings, workdir: Path, rounds: int) -> dict[str, Any]:
    print(f"\n== openai-compatible server (llama_cpp.server, {SERVER_MODEL})", flush=True)
    model_file = models.model_path(SERVER_MODEL, settings.models_dir)
    port = free_port()
    threads = os.cpu_count() or 1
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_file),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        # The server defaults to cpu_count // 2 generation threads; use every core, like
        # the in-process backend does (n_threads=0), so the two are comparable.
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
    ]
    out: dict[str, Any] = {
        "command": " ".join(cmd),
        "note": (
            "llama_cpp.server has no parallel-slot option (no --n_parallel); its app "
            "serialises every completion behind one asyncio lock, so concurrent requests "
            "queue on the server and the concurrent/sequential ratio is expected near 1x."
        ),
    }
    server_log = workdir / "llama_server.log"
    with server_log.open("wb") as log_fh:
        proc = subprocess.Popen(cmd, stdout=log_fh, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}/v1"
            out["startup_s"] = round(
                wait_for_server(f"{base}/models", proc, SERVER_START_TIMEOUT_S), 2
            )
            log(f"server up on port {port} after {out['startup_s']:.1f} s")
            spec = f"openai:smollm2@{base}"
            out["spec"] = spec
            llm = open_llm(spec, settings=settings, cache=False)
            try:
                # Warm-up, unmeasured: the server's first requests fault in its own mmap of
                # the weights and are slower than the rest.
                for i in range(3):
                    await chat(llm, server_messages(-1 - i), max_tokens=SERVER_MAX_TOKENS)
                seq_runs, con_runs = [], []
                for i in range(rounds):
                    # Alternate which mode goes first so a drift in machine load (2 shared
                    # cores) does not always land on the same side.
                    for concurrent in (False, True) if i % 2 == 0 else (True, False):
                        batch = await run_batch(llm, concurrent=concurrent)
                        (con_runs if concurrent else seq_runs).append(batch)
                    log(
                        f"round {i + 1}/{rounds}: sequential {seq_runs[-1]['wall_s']:.2f} s "
                        f"({seq_runs[-1]['requests_per_s']:.2f} req/s), concurrent "
                        f"{con_runs[-1]['wall_s']:.2f} s ({con_runs[-1]['requests_per_s']:.2f} "
                        "req/s)"
                    )
                out["rounds"] = {"sequential": seq_runs, "concurrent": con_runs}
                out["sequential"] = pooled(seq_runs)
                out["concurrent"] = pooled(con_runs)
            finally:
                await llm.aclose()
            out["ratio_requests_per_s"] = round(
                ratio(out["concurrent"]["requests_per_s"], out["sequential"]["requests_per_s"]),
                2,
            )
            out["ratio_completion_tok_s"] = round(
                ratio(out["concurrent"]["completion_tok_s"], out["sequential"]["completion_tok_s"]),
                2,
            )
        except Exception as exc:  # report, do not crash the whole benchmark
            out["error"] = f"{type(exc).__name__}: {exc}"
            tail = server_log.read_text(errors="replace")[-2000:]
            out["server_log_tail"] = tail
            print(f"  !! server benchmark failed: {out['error']}\n{tail}", flush=True)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    return out


# -- report ----------------------------------------------------------------------------------


def fmt_x(value: float, a: float, b: float, unit: str = "s") -> str:
    if unit == "ms":
        return f"{value:.1f}x ({a:.0f} / {b:.2f} ms)"
    return f"{value:.1f}x ({a:.2f} / {b:.2f} s)"


def print_table(results: dict[str, Any]) -> None:
    local = results["local"]
    names = list(local)
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, fn: Any) -> None:
        cells = []
        for n in names:
            try:
                cells.append(fn(local[n]))
            except (KeyError, TypeError):
                cells.append("-")
        rows.append((label, cells))

    row("load + first call (s)", lambda r: f"{r['load_and_first_call_s']:.2f}")
    row(
        "prompt tokens (pp test)", lambda r: f"{r['prompt_processing']['prompt_tokens_median']:.0f}"
    )
    row("prompt processing tok/s", lambda r: f"{r['prompt_processing']['prompt_tok_s']:.0f}")
    row("generation tok/s (prompt time removed)", lambda r: f"{r['generation']['gen_tok_s']:.1f}")
    row(
        "generation tok/s (raw: tokens/latency)",
        lambda r: f"{r['generation']['gen_tok_s_raw']:.1f}",
    )
    row(
        "generated tokens (median)",
        lambda r: f"{median([c['completion_tokens'] for c in r['generation']['calls']]):.0f}",
    )
    row("prefix prompt tokens", lambda r: f"{r['prefix_reuse']['prompt_tokens_median']:.0f}")
    row("prefix cold call 1 (s)", lambda r: f"{r['prefix_reuse']['first_s_median']:.2f}")
    row("prefix warm call 2 (s)", lambda r: f"{r['prefix_reuse']['second_s_median']:.2f}")
    row(
        "prefix ratio cold/warm (median)",
        lambda r: fmt_x(
            r["prefix_reuse"]["ratio_median"],
            r["prefix_reuse"]["first_s_median"],
            r["prefix_reuse"]["second_s_median"],
        ),
    )
    row(
        "  per round",
        lambda r: ", ".join(f"{x['ratio_first_second']:.1f}x" for x in r["prefix_reuse"]["rounds"]),
    )
    row(
        "prefix after unrelated call (s)",
        lambda r: f"{r['prefix_reuse']['after_unrelated_s_median']:.2f}",
    )
    row(
        "prefix ratio cold/after-unrelated",
        lambda r: fmt_x(
            r["prefix_reuse"]["ratio_after_unrelated_median"],
            r["prefix_reuse"]["first_s_median"],
            r["prefix_reuse"]["after_unrelated_s_median"],
        ),
    )
    row("cache miss (ms)", lambda r: f"{r['cache']['miss']['latency_s'] * 1000:.0f}")
    row("cache hit (ms, median)", lambda r: f"{r['cache']['hit_ms_median']:.2f}")
    row(
        "cache hit flagged / same text",
        lambda r: f"{r['cache']['all_cache_hit']} / {r['cache']['same_text']}",
    )
    row(
        "cache speed-up miss/hit",
        lambda r: fmt_x(
            r["cache"]["speedup"],
            r["cache"]["miss"]["latency_s"] * 1000,
            r["cache"]["hit_ms_median"],
            unit="ms",
        ),
    )
    row(
        "RSS after model (MB) / peak",
        lambda r: (
            f"{r['memory_mb_after'].get('VmRSS', 0):.0f} / "
            f"{r['memory_mb_after'].get('VmHWM', 0):.0f}"
        ),
    )

    width = max(len(label) for label, _ in rows)
    col = max([len(n) for n in names] + [len(c) for _, cells in rows for c in cells]) + 2
    print("\n" + "=" * (width + 2 + col * len(names)))
    print(
        "local backends (in-process llama.cpp)".ljust(width + 2)
        + "".join(n.rjust(col) for n in names)
    )
    print("-" * (width + 2 + col * len(names)))
    for label, cells in rows:
        print(label.ljust(width + 2) + "".join(c.rjust(col) for c in cells))

    server = results.get("server")
    if server:
        print(
            "\nOpenAI-compatible server (llama_cpp.server, "
            f"{SERVER_REQUESTS} requests x max_tokens={SERVER_MAX_TOKENS}, "
            f"pooled over {len(server.get('rounds', {}).get('sequential', []))} round(s))"
        )
        if "error" in server:
            print(f"  failed: {server['error']}")
        else:
            seq, con = server["sequential"], server["concurrent"]
            print(f"  {'':12}{'wall s':>9}{'req/s':>9}{'compl tok/s':>13}{'med latency s':>15}")
            for label, r in (("sequential", seq), ("concurrent", con)):
                print(
                    f"  {label:12}{r['wall_s']:>9.2f}{r['requests_per_s']:>9.2f}"
                    f"{r['completion_tok_s']:>13.1f}{r['median_request_latency_s']:>15.2f}"
                )
            print(
                f"  ratio concurrent/sequential: req/s "
                f"{server['ratio_requests_per_s']:.2f}x ({con['requests_per_s']:.2f} / "
                f"{seq['requests_per_s']:.2f}), tok/s {server['ratio_completion_tok_s']:.2f}x "
                f"({con['completion_tok_s']:.1f} / {seq['completion_tok_s']:.1f})"
            )
            per_round = ", ".join(
                f"{ratio(c['requests_per_s'], q['requests_per_s']):.2f}x"
                for q, c in zip(
                    server["rounds"]["sequential"], server["rounds"]["concurrent"], strict=True
                )
            )
            print(f"  per round req/s ratio: {per_round}")
            print(f"  note: {server['note']}")
    print(f"\nwall time {results['wall_time_s']:.0f} s; JSON: {results['results_path']}")


# -- main ------------------------------------------------------------------------------------


def ensure_installed(name: str, settings: Settings) -> None:
    models.get_card(name)  # unknown names fail here with the list of known ones
    state = models.status(name, settings.models_dir)
    if state != "installed":
        print(
            f"note: model {name} is {state} in {settings.models_dir}; installing it now "
            f"(same as `{models.install_command(name)}`)",
            flush=True,
        )
        models.install(name, settings.models_dir)


async def run(model_names: list[str], plan: Plan, skip_server: bool) -> dict[str, Any]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="freshwiki-bench-") as tmp:
        settings = load_settings({"home": Path(tmp)}).settings
        for name in dict.fromkeys([*model_names, *([] if skip_server else [SERVER_MODEL])]):
            ensure_installed(name, settings)
        corpus = Corpus(WIKI_PATH)
        results: dict[str, Any] = {
            "meta": meta(settings, model_names, plan),
            "local": {},
        }
        for name in model_names:
            results["local"][name] = await bench_local_model(name, settings, corpus, plan)
        if not skip_server:
            results["server"] = await bench_server(settings, Path(tmp), plan.server_rounds)
    results["wall_time_s"] = round(time.perf_counter() - started, 1)
    return results


def meta(settings: Settings, model_names: list[str], plan: Plan) -> dict[str, Any]:
    try:
        import llama_cpp

        llama_version = getattr(llama_cpp, "__version__", "?")
    except ImportError:  # pragma: no cover
        llama_version = "missing"
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = (0.0, 0.0, 0.0)
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": sys.argv,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in load],
        "llama_cpp_python": llama_version,
        "models": model_names,
        "plan": plan.__dict__,
        "n_ctx": settings.n_ctx,
        "n_threads": settings.n_threads,
        "definitions": {
            "prompt_tok_s": "usage.prompt_tokens / latency of a fresh ~500-token prompt with "
            "max_tokens=1 (median)",
            "gen_tok_s": "completion_tokens / (latency - prompt_tokens / prompt_tok_s) of a "
            "short fresh prompt with max_tokens=128, temperature 0 (median)",
            "gen_tok_s_raw": "completion_tokens / latency of the same call",
            "prefix ratio": "latency of prefix+question A right after an unrelated prompt, "
            "over latency of prefix+question B right after it (max_tokens=8)",
            "prefix ratio after unrelated": "same numerator, over prefix+question C sent "
            "after another unrelated prompt (tests the RAM prompt cache)",
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        default=None,
        help=f"comma-separated named local models (default: {DEFAULT_MODELS})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: smollm2-135m only (unless --models is given), fewer repetitions",
    )
    parser.add_argument("--no-server", action="store_true", help="skip the server benchmark")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    args = parser.parse_args(argv)
    default = "smollm2-135m" if args.quick else DEFAULT_MODELS
    names = [n.strip() for n in (args.models or default).split(",") if n.strip()]
    plan = QUICK if args.quick else FULL
    try:
        results = asyncio.run(run(names, plan, args.no_server))
    except FreshwikiError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.output.parent.mkdir(parents=True, exist_ok=True)
    results["results_path"] = str(args.output)
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
