"""Per-turn cost of grounded chat against the plain LLM, same model, same machine, same run.

For each question the plain LLM answers alone (the anchor), then ``GroundedChat`` answers in
each mode asked for (default: ``fast``, with the cloze verifier on). Every call bypasses the
response cache, so each turn pays for its tokens. Printed per system: mean / median seconds per
turn, the time until the first reply text reaches the caller (the reply streams sentence by
sentence through the citation guard), LLM calls, prompt and generated tokens, KV-reused prompt
tokens, and the ratio to the anchor with a 95 % bootstrap interval over questions.

Questions: the first ``--questions`` usable ones of ``experiments/data/qa.jsonl`` taken in turn
from the recent, tail and head sets (questions written by the model from real lead paragraphs
of the default corpus and checked by script; see ``qa_data.py``). Goals (issue 12): fast mode
≤ 3x the plain LLM per turn; first reply text ≤ 60 % of the turn. Run::

    .venv/bin/python experiments/chat_latency.py [--questions 20] [--modes fast,full]
    .venv/bin/python experiments/chat_latency.py --lookup 4   # also fast with lookup decoding

Writes ``experiments/results/chat_latency.json``. The default corpus index is built first if
this home has none (a few minutes, once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from _provenance import data_provenance, write_result
from freshwiki.chat import ChatMessage, GroundedChat
from freshwiki.config import load_settings
from freshwiki.llm import open_llm
from freshwiki.retrieval import open_search_index
from freshwiki.systems.vanilla import vanilla_messages

HERE = Path(__file__).parent
QA = HERE / "data" / "qa.jsonl"
REVIEW = HERE / "data" / "qa_review.jsonl"
RESULTS = HERE / "results" / "chat_latency.json"


def questions(count: int) -> list[dict[str, Any]]:
    """The first ``count`` usable questions, taking recent, tail and head in turn."""
    rows = [json.loads(line) for line in QA.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    flawed = {json.loads(line)["title"] for line in REVIEW.read_text(encoding="utf-8")
              .splitlines() if line.strip()}
    usable = [r for r in rows if "question" in r and r["title"] not in flawed]
    by_set = {k: [r for r in usable if r["set"] == k] for k in ("recent", "tail", "head")}
    picked: list[dict[str, Any]] = []
    while len(picked) < count and any(by_set.values()):
        for name in ("recent", "tail", "head"):
            if by_set[name] and len(picked) < count:
                picked.append(by_set[name].pop(0))
    return picked


@dataclass
class Tally:
    """Per-turn measurements of one system."""

    seconds: list[float] = field(default_factory=list)
    first_text: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    completion_tokens: list[int] = field(default_factory=list)
    reused_tokens: list[int] = field(default_factory=list)

    def row(self, anchor: list[float]) -> dict[str, Any]:
        mean = statistics.fmean(self.seconds)
        low, high = ratio_interval(self.seconds, anchor)
        share = [f / s for f, s in zip(self.first_text, self.seconds, strict=True) if s]
        return {
            "mean_s": round(mean, 2), "median_s": round(statistics.median(self.seconds), 2),
            "first_text_s": round(statistics.fmean(self.first_text), 2),
            "first_text_share": round(statistics.fmean(share), 3) if share else None,
            "calls": round(statistics.fmean(self.calls), 2),
            "prompt_tokens": round(statistics.fmean(self.prompt_tokens)),
            "completion_tokens": round(statistics.fmean(self.completion_tokens)),
            "reused_prompt_tokens": round(statistics.fmean(self.reused_tokens)),
            "x_plain": round(mean / statistics.fmean(anchor), 2),
            "x_plain_95": [round(low, 2), round(high, 2)],
        }


def ratio_interval(seconds: list[float], anchor: list[float], draws: int = 2000
                   ) -> tuple[float, float]:
    """95 % bootstrap interval of mean(seconds) / mean(anchor), questions resampled in pairs."""
    rng = random.Random(12)
    n = len(seconds)
    ratios = []
    for _ in range(draws):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(sum(seconds[i] for i in picks) / sum(anchor[i] for i in picks))
    ratios.sort()
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws) - 1]


async def measure(asked: list[str], modes: list[str], model: str | None, lookup: int = 0
                  ) -> dict[str, Tally]:
    settings = load_settings({"model": model} if model else {}).settings
    index = open_search_index(settings)
    llm = open_llm(settings.model, settings=settings, cache=False)
    engines = {mode: GroundedChat(llm, index, mode=mode) for mode in modes}  # type: ignore[arg-type]
    extra = []
    if lookup:
        # The same model with prompt-lookup decoding, a second llama.cpp context: each fast
        # turn is answered with and without it, interleaved, against the same anchor.
        guessed = load_settings({**({"model": model} if model else {}),
                                 "lookup_tokens": lookup}).settings
        extra.append(open_llm(guessed.model, settings=guessed, cache=False))
        for mode in modes:
            engines[f"{mode}+lookup{lookup}"] = GroundedChat(extra[0], index, mode=mode)  # type: ignore[arg-type]
    tallies = {name: Tally() for name in ("plain", *engines)}
    console = Console(stderr=True)
    try:
        # One untimed warm-up call loads the weights.
        await llm.chat(vanilla_messages("Hello"), max_tokens=4)
        for number, question in enumerate(asked, start=1):
            started = time.perf_counter()
            first = 0.0
            streamed = llm.stream(vanilla_messages(question), max_tokens=512, tag="bench:plain")
            async for delta in streamed:
                if delta.strip() and not first:
                    first = time.perf_counter() - started
            plain = tallies["plain"]
            plain.seconds.append(time.perf_counter() - started)
            plain.first_text.append(first or plain.seconds[-1])
            usage = streamed.result.usage
            plain.calls.append(1)
            plain.prompt_tokens.append(usage.prompt_tokens)
            plain.completion_tokens.append(usage.completion_tokens)
            plain.reused_tokens.append(usage.cached_prompt_tokens)
            for mode, engine in engines.items():
                started = time.perf_counter()
                first = 0.0
                stream = engine.stream([ChatMessage("user", question)])
                async for delta in stream:
                    if delta.strip() and not first:
                        first = time.perf_counter() - started
                reply = stream.reply
                tally = tallies[mode]
                tally.seconds.append(time.perf_counter() - started)
                tally.first_text.append(first or tally.seconds[-1])
                trace = reply.trace
                tally.calls.append(trace.llm_calls)
                tally.prompt_tokens.append(trace.prompt_tokens)
                tally.completion_tokens.append(trace.completion_tokens)
                tally.reused_tokens.append(sum(s.cached_prompt_tokens for s in trace.stages))
            console.print(f"[dim]{number}/{len(asked)} done[/dim]")
    finally:
        await llm.aclose()
        for other in extra:
            await other.aclose()
        index.close()
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--modes", default="fast")
    parser.add_argument("--model", default=None, help="Model spec (default: configured).")
    parser.add_argument("--lookup", type=int, default=0,
                        help="also answer each question in every mode with prompt-lookup "
                             "decoding guessing this many tokens (the lever issue 12 lists)")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    picked = questions(args.questions)
    started = time.perf_counter()
    before = os.getloadavg()
    tallies = asyncio.run(measure([q["question"] for q in picked], modes, args.model,
                                  args.lookup))
    anchor = tallies["plain"].seconds
    rows = {name: tally.row(anchor) for name, tally in tallies.items()}
    table = Table(title=f"Per-turn cost, {len(picked)} questions (anchor: plain LLM, "
                        "95 % bootstrap interval)")
    for column in ("system", *next(iter(rows.values())).keys()):
        table.add_column(column, justify="left" if column == "system" else "right")
    for name, row in rows.items():
        table.add_row(name, *(str(v) for v in row.values()))
    console = Console()
    console.print(table)
    goals: dict[str, Any] = {}
    fast = rows.get("fast")
    if fast:
        goals["fast_x_plain_le_3"] = fast["x_plain"] <= 3
        goals["first_text_share_le_0.6"] = (fast["first_text_share"] or 1) <= 0.6
        console.print(f"goal fast ≤ 3× plain: {'MET' if goals['fast_x_plain_le_3'] else 'NOT MET'}"
                      f" ({fast['x_plain']}× {fast['x_plain_95']}); first reply text "
                      f"{fast['first_text_share']:.0%} of the turn (goal ≤ 60 %: "
                      f"{'MET' if goals['first_text_share_le_0.6'] else 'NOT MET'})")
    settings = load_settings({"model": args.model} if args.model else {}).settings
    after = os.getloadavg()
    write_result(RESULTS, {
        "model": settings.model,
        "seconds": round(time.perf_counter() - started, 1),
        # Other processes slow the anchor and the grounded turn alike, but not by the same
        # factor (long prompts suffer more): the load says how quiet the machine was.
        "load_average_1min": {"before": round(before[0], 2), "after": round(after[0], 2)},
        "systems": rows, "goals": goals,
    }, data=data_provenance(
        {"constructed": 1.0}, sample="n/a",
        sources=["../shared/data/wikipedia/topics (WikiChat topic leads, CC BY-SA)"],
        questions=len(picked),
        by_set={k: sum(q["set"] == k for q in picked) for k in ("recent", "tail", "head")},
        provenance="questions written by the default model from real lead paragraphs, "
                   "checked by script; measured, response cache off"))
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
