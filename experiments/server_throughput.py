#!/usr/bin/env python
"""The evaluation runner against a real parallel server: how close does it get to saturation?

A server with parallel slots (llama.cpp's own ``llama-server``, continuous batching) is only
worth its slots if the client keeps them busy. This script measures, in one run on one
machine, the same WikiContradict requests sent two ways to the same server:

1. **Anchor** (the server's saturated throughput): a plain ``httpx.AsyncClient`` posts every
   request at once, so the server's own queue refills a slot the moment one frees; nothing
   on the client side can do better. Measured before the runner phases and again after them
   (the drift between the two says how steady the machine was); the ratios use their mean.
2. **Runner** at ``http_concurrency`` 1, 2 and 4: ``freshwiki.evaluation.run_evaluation``
   with the ``vanilla`` system and ``openai:MODEL@URL``, i.e. the whole evaluation path (the
   benchmark renders each prompt, the LLM client's semaphore, the OpenAI SDK, the results
   store committing every output and its match score) timed around the one call. Each phase
   gets a fresh ``FRESHWIKI_HOME``, so its response cache starts empty and every item goes to
   the server (the script checks that no output was a cache hit).
3. **Cache re-run**: the last runner phase's evaluation once more, same response cache, a new
   results store (so the runner redoes every item), *after the server has stopped*: every
   answer must come from the response cache, and must equal the answer it stored.

Fairness. The requests are the first ``--items`` questions of WikiContradict rendered by
template 5 (both passages, with the warning that they may disagree; see ``TEMPLATE`` for why
not 4), greedy, with a fixed ``--max-tokens`` (the benchmark itself asks for 250; shorter
answers keep the run short and are the same for both sides).
The anchor's JSON bodies are the ones the OpenAI-compatible backend sends (model, messages,
max_tokens, temperature, top_p, seed, stream); ``tests/evaluation/test_server_throughput.py``
checks that both sides send identical bodies. Every phase runs on a freshly started server
(so no phase finds another's prompts in the slots' KV cache; ``--cache-ram 0`` turns off the
server's host-memory prompt cache too) after one unrelated warm-up request. The server's own
``/metrics`` counters (prompt tokens processed, tokens generated) are read per phase, so the
work done is compared too, not only the wall time.

The machine is shared: each phase records how much CPU other processes took
(``CpuMeter``) and is redone (``--attempts``) when it exceeds ``--max-other-share``;
``--quiet-wait`` first waits for the cores to be free.

Goals (issue 15): runner at concurrency 4 ≥ 0.9 of saturation (requests/s); cache re-run
≥ 100x faster than the run that filled the cache. Run from the repository root::

    .venv/bin/python experiments/server_throughput.py [--quick] [--model NAME|PATH.gguf]

The first run builds ``llama-server`` with ``scripts/build_llama_server.sh`` (~10 minutes on
2 cores, once, into ~/.cache/freshwiki/bin). Writes
``experiments/results/server_throughput.json`` (``--quick``: ``server_throughput_quick.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from freshwiki.benchmarks.wikicontradict import (
    DATASET_FILE,
    WikiContradict,
    load_wikicontradict,
)
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, run_evaluation
from freshwiki.llm import models
from freshwiki.seams import Sample, Task

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import data_provenance, write_result

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
BUILD_SCRIPT = ROOT / "scripts" / "build_llama_server.sh"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
MODEL_ALIAS = "bench-model"
"""The name both clients ask the server for (``--alias``), so their bodies are identical."""
TEMPLATE = "5"
"""Both passages, told they may disagree: answers run to tens of tokens, so generation (where
a server's parallel slots pay, by batching the decoding of several requests) is a real share
of the work. Template 4 asks for a short answer: ~5 tokens each, a workload almost wholly
prompt evaluation, where slots gain nothing (measured: one request at a time was *faster*
than all at once, since a lone slot reuses the shared instruction prefix of the last prompt)."""
SERVER_START_TIMEOUT_S = 180.0
REQUEST_TIMEOUT_S = 900.0
WARMUP = [{"role": "user", "content": "Count from one to five."}]


@dataclass(frozen=True)
class Plan:
    items: int
    max_tokens: int
    slots: int
    ctx_per_slot: int
    concurrencies: tuple[int, ...]


FULL = Plan(items=48, max_tokens=64, slots=4, ctx_per_slot=2048, concurrencies=(1, 2, 4))
QUICK = Plan(items=8, max_tokens=16, slots=4, ctx_per_slot=2048, concurrencies=(1, 4))


class FixedLengthWikiContradict(WikiContradict):
    """WikiContradict with every prompt unchanged and one fixed generation cap.

    The cap is part of ``describe()`` and so of the run identity: a run with short answers is
    never mistaken for (or resumed as) a run with the benchmark's own 250-token cap.
    """

    def __init__(self, path: Path, samples: Sequence[Sample], max_tokens: int) -> None:
        super().__init__(path, samples)
        self.max_tokens = max_tokens

    def describe(self) -> Mapping[str, Any]:
        return {**super().describe(), "max_tokens": self.max_tokens}

    def render(self, sample: Sample, template: str) -> Task:
        return replace(super().render(sample, template), max_tokens=self.max_tokens)


def load_benchmark(dataset: Path, max_tokens: int) -> FixedLengthWikiContradict:
    return FixedLengthWikiContradict(dataset, load_wikicontradict(dataset), max_tokens)


def item_ids(bench: WikiContradict, items: int) -> list[str]:
    """The sample ids of the first ``items`` questions: the keys phases are compared by."""
    return [s.id for s in list(bench.samples())[:items]]


def anchor_bodies(bench: FixedLengthWikiContradict, items: int,
                  model: str) -> dict[str, dict[str, Any]]:
    """Sample id → the chat-completion body the OpenAI backend sends for that task.

    Field for field what ``OpenAICompatibleBackend`` posts for a call with the client's
    defaults (top_p 1, seed 0, no stop, no schema); the plumbing test compares the two.
    """
    bodies = {}
    for sample in list(bench.samples())[:items]:
        task = bench.render(sample, TEMPLATE)
        bodies[sample.id] = {
            "model": model,
            "messages": [m.to_dict() for m in task.messages],
            "max_tokens": task.max_tokens,
            "temperature": task.temperature,
            "top_p": 1.0,
            "seed": 0,
            "stream": False,
        }
    return bodies


@dataclass
class Phase:
    """One measured pass over the items: who sent them, how fast, and what came back."""

    name: str
    client: str
    concurrency: int
    wall_s: float
    requests: int
    prompt_tokens: int
    completion_tokens: int
    failures: int = 0
    cache_hits: int = 0
    texts: dict[str, str] = field(default_factory=dict)
    prompt_tokens_by_item: dict[str, int] = field(default_factory=dict)
    server: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.wall_s if self.wall_s > 0 else float("nan")

    @property
    def completion_tokens_per_s(self) -> float:
        return self.completion_tokens / self.wall_s if self.wall_s > 0 else float("nan")

    @property
    def prompt_tokens_per_s(self) -> float:
        return self.prompt_tokens / self.wall_s if self.wall_s > 0 else float("nan")

    def summary(self) -> dict[str, Any]:
        """What the result file keeps (the texts only as a count of distinct ones)."""
        body = asdict(self)
        body.pop("texts")
        body.update(requests_per_s=round(self.requests_per_s, 4),
                    completion_tokens_per_s=round(self.completion_tokens_per_s, 2),
                    prompt_tokens_per_s=round(self.prompt_tokens_per_s, 2),
                    wall_s=round(self.wall_s, 4))
        return body


def _progress(console: Console | None) -> Progress | None:
    if console is None:
        return None
    return Progress(TextColumn("{task.description}"), BarColumn(bar_width=16),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=console)


async def run_anchor(base_url: str, bodies: Mapping[str, Mapping[str, Any]], *,
                     name: str = "anchor", console: Console | None = None) -> Phase:
    """Post every body at once with a plain async client; the server queues what it cannot run."""
    progress = _progress(console)
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
        bar = None
        if progress is not None:
            progress.start()
            bar = progress.add_task(name, total=len(bodies))

        async def post(body: Mapping[str, Any]) -> dict[str, Any]:
            response = await client.post(f"{base_url}/chat/completions", json=dict(body))
            response.raise_for_status()
            if progress is not None and bar is not None:
                progress.update(bar, advance=1)
            return dict(response.json())

        started = time.perf_counter()
        try:
            answers = await asyncio.gather(*(post(b) for b in bodies.values()))
        finally:
            if progress is not None:
                progress.stop()
        wall = time.perf_counter() - started
    texts, prompt_by_item = {}, {}
    completion = 0
    for key, answer in zip(bodies, answers, strict=True):
        texts[key] = answer["choices"][0]["message"]["content"] or ""
        prompt_by_item[key] = int(answer["usage"]["prompt_tokens"])
        completion += int(answer["usage"]["completion_tokens"])
    return Phase(name=name, client="httpx", concurrency=len(bodies), wall_s=wall,
                 requests=len(bodies), prompt_tokens=sum(prompt_by_item.values()),
                 completion_tokens=completion, texts=texts, prompt_tokens_by_item=prompt_by_item)


async def run_runner(base_url: str, bench: FixedLengthWikiContradict, *, items: int,
                     concurrency: int, home: Path, name: str, store_path: Path | None = None,
                     console: Console | None = None,
                     settings_overrides: Mapping[str, Any] | None = None) -> Phase:
    """One ``run_evaluation`` call (vanilla system, no judge) timed around the call itself.

    ``http_concurrency`` is the LLM client's bound on requests in flight; the runner keeps
    its default of twice that many items in flight. ``home`` holds the response cache: a new
    folder means every call goes to the server, the same folder again means none does.
    """
    overrides = {"home": home, "http_concurrency": concurrency, "cache": True,
                 # The anchor waits as long: a call cut off and retried would redo its work.
                 "timeout": REQUEST_TIMEOUT_S, **(settings_overrides or {})}
    settings = load_settings(overrides).settings
    started = time.perf_counter()
    summary = await run_evaluation(
        bench, system="vanilla", model=f"openai:{MODEL_ALIAS}@{base_url}", judge=None,
        templates=[TEMPLATE], limit=items, settings=settings, store_path=store_path,
        cache=True, console=console,
    )
    wall = time.perf_counter() - started
    path = store_path or home / "runs" / "runs.sqlite"
    texts, prompt_by_item = {}, {}
    completion = hits = 0
    with ResultsStore(path) as store:
        for key in item_ids(bench, items):
            output = store.get_output(summary.info.run_id, key, TEMPLATE)
            if output is None:
                continue
            texts[key] = output.text
            prompt_by_item[key] = output.usage.prompt_tokens
            completion += output.usage.completion_tokens
            hits += int(output.cache_hit)
    return Phase(name=name, client="freshwiki eval", concurrency=concurrency, wall_s=wall,
                 requests=len(texts), prompt_tokens=sum(prompt_by_item.values()),
                 completion_tokens=completion, failures=len(summary.failures), cache_hits=hits,
                 texts=texts, prompt_tokens_by_item=prompt_by_item)


# -- the server ---------------------------------------------------------------------------------


def llama_server_binary(explicit: str | None) -> Path:
    """``--server`` if given, else the cached build (built on first use by the script)."""
    if explicit:
        return Path(explicit)
    proc = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True,
                          check=False)
    if proc.returncode != 0:
        sys.exit(f"error: {BUILD_SCRIPT.name} failed (exit {proc.returncode}); see its output "
                 "above, or pass --server PATH to an existing llama-server")
    return Path(proc.stdout.strip().splitlines()[-1])


def model_file(spec: str) -> Path:
    """A named model from ``freshwiki models`` (installed if missing) or a GGUF path."""
    if spec.endswith(".gguf"):
        return Path(spec).expanduser()
    return models.install(spec, load_settings().settings.models_dir)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Server:
    url: str
    pid: int


@contextmanager
def llama_server(binary: Path, model: Path, plan: Plan, log: Path) -> Iterator[Server]:
    """A fresh ``llama-server`` on 127.0.0.1 with ``plan.slots`` slots, warmed up.

    ``--ctx-size`` is the total over all slots. ``--cache-ram 0``: no host-memory prompt cache,
    so a phase cannot reuse the KV state of an earlier phase's prompts.
    """
    port = _free_port()
    args = [str(binary), "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--parallel", str(plan.slots), "--ctx-size", str(plan.slots * plan.ctx_per_slot),
            "--alias", MODEL_ALIAS, "--metrics", "--cache-ram", "0", "--no-webui"]
    with log.open("ab") as fh:
        fh.write(f"\n$ {' '.join(args)}\n".encode())
        fh.flush()
        proc = subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT)
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                sys.exit(f"error: llama-server exited early (code {proc.returncode}); "
                         f"see {log}")
            try:
                if httpx.get(f"{root}/health", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                sys.exit(f"error: llama-server did not become healthy in "
                         f"{SERVER_START_TIMEOUT_S:g} s; see {log}")
            time.sleep(0.25)
        httpx.post(f"{root}/v1/chat/completions", timeout=REQUEST_TIMEOUT_S,
                   json={"model": MODEL_ALIAS, "messages": WARMUP, "max_tokens": 8,
                         "temperature": 0.0}).raise_for_status()
        yield Server(f"{root}/v1", proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_METRIC = re.compile(r"^llamacpp:(\w+)\s+([0-9.eE+-]+)$", re.MULTILINE)


def server_metrics(base_url: str) -> dict[str, float]:
    """The server's Prometheus counters (``--metrics``), e.g. ``prompt_tokens_total``."""
    text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=10.0).text
    return {name: float(value) for name, value in _METRIC.findall(text)}


def _delta(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    keys = ("prompt_tokens_total", "tokens_predicted_total", "prompt_seconds_total",
            "tokens_predicted_seconds_total", "n_decode_total")
    return {k: round(after[k] - before.get(k, 0.0), 3) for k in keys if k in after}


def _busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _process_cpu_s(pid: int | str) -> float:
    """User + system CPU seconds of one process (``/proc/PID/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class CpuMeter:
    """Who used the CPU during a phase: the server, this process, or someone else.

    The machine is shared (other sessions run tests and experiments on the same cores), and
    llama.cpp's threads degrade badly when they lose their cores, so every phase records how
    much of the machine other processes took; a figure is only as good as that share is small.
    """

    server_pid: int
    start: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        self.start = self._now()

    def _now(self) -> tuple[float, float, float, float]:
        return (time.perf_counter(), _busy_cpu_s(), _process_cpu_s(self.server_pid),
                _process_cpu_s("self"))

    def read(self) -> dict[str, float]:
        now = self._now()
        wall, busy, server, me = (b - a for a, b in zip(self.start, now, strict=True))
        other = max(0.0, busy - server - me)
        cores = os.cpu_count() or 1
        return {"wall_s": round(wall, 2), "server_cpu_s": round(server, 2),
                "client_cpu_s": round(me, 2), "other_cpu_s": round(other, 2),
                "other_share": round(other / (wall * cores), 4) if wall > 0 else 0.0}


def wait_until_quiet(limit_s: float, console: Console, *, share: float = 0.1) -> float:
    """Wait (up to ``limit_s``) until other processes use under ``share`` of the machine.

    Measured over 5 s windows from ``/proc/stat``; returns the last window's busy share.
    """
    cores = os.cpu_count() or 1
    deadline = time.monotonic() + limit_s
    while True:
        busy, mine = _busy_cpu_s(), _process_cpu_s("self")
        time.sleep(5.0)
        used = (_busy_cpu_s() - busy - (_process_cpu_s("self") - mine)) / (5.0 * cores)
        if used < share or time.monotonic() >= deadline:
            return used
        console.print(f"machine {used:.0%} busy with other work; waiting for it to quiet down")


# -- the run ------------------------------------------------------------------------------------


def compare(anchors: Sequence[Phase], runners: Sequence[Phase]) -> dict[str, Any]:
    """Each runner phase's throughput over the mean anchor's, in requests/s and tokens/s."""
    req = sum(a.requests_per_s for a in anchors) / len(anchors)
    tok = sum(a.completion_tokens_per_s for a in anchors) / len(anchors)
    return {
        "anchor_requests_per_s": round(req, 4),
        "anchor_completion_tokens_per_s": round(tok, 2),
        "anchor_drift": round(anchors[-1].requests_per_s / anchors[0].requests_per_s, 4),
        "runner": {
            str(r.concurrency): {
                "requests_ratio": round(r.requests_per_s / req, 4),
                "tokens_ratio": round(r.completion_tokens_per_s / tok, 4),
            }
            for r in runners
        },
    }


def same_work(reference: Phase, other: Phase) -> dict[str, Any]:
    """Whether ``other`` sent the same prompts (per-item prompt tokens) and got the same text."""
    keys = sorted(reference.prompt_tokens_by_item)
    return {
        "same_prompt_tokens": all(other.prompt_tokens_by_item.get(k)
                                  == reference.prompt_tokens_by_item[k] for k in keys),
        "identical_texts": sum(other.texts.get(k) == reference.texts[k] for k in keys),
        "items": len(keys),
    }


def _table(phases: Sequence[Phase], ratios: Mapping[str, Any], rerun: Phase,
           speedup: float) -> Table:
    table = Table(title="llama-server throughput: anchor (httpx, all at once) vs freshwiki eval")
    for col in ("phase", "conc.", "wall s", "req/s", "prompt tok/s", "gen tok/s",
                "req ratio", "tok ratio", "failures", "cache hits"):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for p in [*phases, rerun]:
        r = ratios["runner"].get(str(p.concurrency)) if p.client != "httpx" else None
        if p is rerun:
            r = None
        table.add_row(p.name, str(p.concurrency), f"{p.wall_s:.2f}", f"{p.requests_per_s:.3f}",
                      f"{p.prompt_tokens_per_s:.1f}", f"{p.completion_tokens_per_s:.1f}",
                      f"{r['requests_ratio']:.3f}" if r else "", f"{r['tokens_ratio']:.3f}" if r
                      else "", str(p.failures), str(p.cache_hits))
    table.caption = (f"cache re-run: {rerun.wall_s * 1000:.0f} ms, {speedup:.0f}x faster than "
                     f"the run that filled the cache")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 items, 16 tokens, c=1 and 4")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="model name or GGUF path")
    parser.add_argument("--server", help="an existing llama-server binary (default: build one)")
    parser.add_argument("--items", type=int, help="questions per phase")
    parser.add_argument("--max-tokens", type=int, help="generation cap per answer")
    parser.add_argument("--slots", type=int, help="the server's parallel slots (--parallel)")
    parser.add_argument("--concurrency", help="runner concurrencies, comma-separated")
    parser.add_argument("--output", type=Path, help="result file")
    parser.add_argument("--quiet-wait", type=float, default=0.0, metavar="SECONDS",
                        help="before each phase, wait up to this long for other processes "
                        "to leave the cores alone")
    parser.add_argument("--max-other-share", type=float, default=0.05, metavar="SHARE",
                        help="redo a phase in which other processes took more than this "
                        "share of the machine (default 0.05)")
    parser.add_argument("--attempts", type=int, default=3,
                        help="tries per phase under --max-other-share (default 3)")
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    plan = replace(
        plan,
        items=args.items or plan.items,
        max_tokens=args.max_tokens or plan.max_tokens,
        slots=args.slots or plan.slots,
        concurrencies=(tuple(int(c) for c in args.concurrency.split(","))
                       if args.concurrency else plan.concurrencies),
    )
    output = args.output or RESULTS / (
        "server_throughput_quick.json" if args.quick else "server_throughput.json")
    console = Console(stderr=True)

    binary = llama_server_binary(args.server)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             check=False)
    model = model_file(args.model)
    dataset = load_settings().settings.data_dir / DATASET_FILE
    bench = load_benchmark(dataset, plan.max_tokens)
    bodies = anchor_bodies(bench, plan.items, MODEL_ALIAS)
    console.print(f"llama-server {binary} ({(version.stdout + version.stderr).strip()[:80]}); "
                  f"model {model.name}; {plan}")

    with tempfile.TemporaryDirectory(prefix="fw-server-throughput-") as tmp_name:
        tmp = Path(tmp_name)
        log = tmp / "llama-server.log"

        def measured(label: str, make: Any) -> Phase:
            """Run one phase on a fresh server; redo it while others took the cores."""
            for attempt in range(1, args.attempts + 1):
                if args.quiet_wait:
                    wait_until_quiet(args.quiet_wait, console)
                with llama_server(binary, model, plan, log) as server:
                    before = server_metrics(server.url)
                    meter = CpuMeter(server.pid)
                    phase: Phase = asyncio.run(make(server.url, attempt))
                    phase.cpu = {**meter.read(), "attempt": attempt}
                    phase.server = _delta(before, server_metrics(server.url))
                console.print(f"{label}: {phase.requests} requests in {phase.wall_s:.1f} s "
                              f"({phase.requests_per_s:.3f} req/s, "
                              f"{phase.prompt_tokens_per_s:.1f} prompt tok/s, "
                              f"{phase.completion_tokens_per_s:.1f} gen tok/s)")
                if phase.cpu["other_share"] <= args.max_other_share:
                    break
                console.print(f"[yellow]other processes took {phase.cpu['other_share']:.0%} "
                              f"of the machine during {label} (attempt {attempt} of "
                              f"{args.attempts})")
            return phase

        anchors = [measured("anchor (before)", lambda base, _: run_anchor(
            base, bodies, name="anchor-before", console=console))]
        runners: list[Phase] = []
        used: dict[int, tuple[str, Path]] = {}
        for c in plan.concurrencies:

            def make(base: str, attempt: int, c: int = c) -> Any:
                # A new home per attempt: its response cache must start empty.
                home = tmp / f"home-c{c}-{attempt}"
                used[c] = (base, home)
                return run_runner(base, bench, items=plan.items, concurrency=c, home=home,
                                  name=f"runner-c{c}", console=console)

            runners.append(measured(f"runner c={c}", make))
        anchors.append(measured("anchor (after)", lambda base, _: run_anchor(
            base, bodies, name="anchor-after", console=console)))

        # The server is down now: the re-run can only be answered from the response cache.
        last = runners[-1]
        last_url, last_home = used[last.concurrency]
        rerun = asyncio.run(run_runner(
            last_url, bench, items=plan.items, concurrency=last.concurrency,
            home=last_home, name="cache-rerun",
            store_path=tmp / "rerun.sqlite", settings_overrides={"max_retries": 0,
                                                                  "timeout": 5.0}))
        server_log_tail = log.read_text(errors="replace")[-4000:]

    ratios = compare(anchors, runners)
    speedup = last.wall_s / rerun.wall_s
    checks = {
        "runner_vs_anchor": {r.name: same_work(anchors[0], r) for r in runners},
        "anchor_after_vs_before": same_work(anchors[0], anchors[1]),
        "rerun_vs_filling_run": same_work(last, rerun),
        "rerun_all_cache_hits": rerun.cache_hits == plan.items,
        "no_cache_hits_in_measured_runs": all(r.cache_hits == 0 for r in runners),
        "no_failures": all(p.failures == 0 for p in [*runners, rerun]),
        "max_other_cpu_share": max(p.cpu["other_share"] for p in [*anchors, *runners]),
    }
    top = ratios["runner"][str(max(plan.concurrencies))]
    goals = {
        "runner_at_max_concurrency_vs_saturation": {"value": top["requests_ratio"],
                                                    "goal": 0.9,
                                                    "met": top["requests_ratio"] >= 0.9},
        "cache_rerun_speedup": {"value": round(speedup, 1), "goal": 100.0,
                                "met": speedup >= 100.0},
    }
    Console(stderr=True, width=140).print(_table([*anchors, *runners], ratios, rerun, speedup))
    console.print_json(data={"checks": checks, "goals": goals})

    payload = {
        "plan": asdict(plan),
        "model": {"name": args.model, "file": model.name},
        "server": {"binary": str(binary), "version": (version.stdout + version.stderr).strip(),
                   "args": {"parallel": plan.slots, "ctx_size": plan.slots * plan.ctx_per_slot,
                            "cache_ram": 0},
                   "log_tail": server_log_tail},
        "phases": [p.summary() for p in [*anchors, *runners, rerun]],
        "ratios": ratios,
        "cache_rerun": {"wall_s": round(rerun.wall_s, 4),
                        "filling_run_wall_s": round(last.wall_s, 4),
                        "speedup": round(speedup, 1)},
        "checks": checks,
        "goals": goals,
    }
    data = data_provenance(
        {"real": 1.0}, sample="n/a (nothing is trained or tuned; a speed measurement)",
        figure="measured",
        sources=f"../shared/data/{DATASET_FILE} (WikiContradict, MIT licence): the first "
                f"{plan.items} questions, template {TEMPLATE}",
        items=plan.items,
    )
    path = write_result(output, payload, data=data)
    console.print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    # A plain `kill` then still runs the `finally` blocks that stop llama-server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
