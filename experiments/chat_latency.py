"""Per-turn cost of grounded chat against the plain LLM, same model, same machine, same run.

For each question the plain LLM answers alone (the anchor), then ``GroundedChat`` answers in
``fast`` and ``full`` mode. Every call bypasses the response cache, so each turn pays for its
tokens. Printed per system: mean / median seconds per turn, LLM calls, prompt and generated
tokens, KV-reused prompt tokens, and the latency ratio to the anchor (WikiChat reports 4.75x;
the goal for fast mode is ≤ 2.5x).

Questions are about articles in the default corpus (the WikiChat topic leads), written by hand:
two popular, two rarely viewed, two recent topics. Run::

    .venv/bin/python experiments/chat_latency.py [--questions 6] [--modes fast,full]

The default corpus index is built first if this home has none (a few minutes, once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from freshwiki.chat import ChatMessage, GroundedChat
from freshwiki.config import load_settings
from freshwiki.llm import open_llm
from freshwiki.retrieval import open_search_index
from freshwiki.systems.vanilla import vanilla_messages

QUESTIONS = (
    "What did KickassTorrents provide, and what happened to it?",
    "Who created the TV series Silicon Valley and what is it about?",
    "What kind of plant is Clasmatocolea fasciculata and where does it grow?",
    "For which team did the cricketer Cecil Lowell play?",
    "When did the Israel–Hamas war begin?",
    "Who won Bigg Boss 17?",
)

RESULTS = Path(__file__).parent / "results" / "chat_latency.json"


@dataclass
class Tally:
    """Per-turn measurements of one system."""

    seconds: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    completion_tokens: list[int] = field(default_factory=list)
    reused_tokens: list[int] = field(default_factory=list)

    def row(self, anchor: float) -> dict[str, float]:
        mean = statistics.fmean(self.seconds)
        return {
            "mean_s": round(mean, 2), "median_s": round(statistics.median(self.seconds), 2),
            "calls": round(statistics.fmean(self.calls), 2),
            "prompt_tokens": round(statistics.fmean(self.prompt_tokens)),
            "completion_tokens": round(statistics.fmean(self.completion_tokens)),
            "reused_prompt_tokens": round(statistics.fmean(self.reused_tokens)),
            "x_plain": round(mean / anchor, 2) if anchor else 0.0,
        }


async def measure(questions: list[str], modes: list[str], model: str | None) -> dict[str, Tally]:
    settings = load_settings({"model": model} if model else {}).settings
    index = open_search_index(settings)
    llm = open_llm(settings.model, settings=settings, cache=False)
    engines = {mode: GroundedChat(llm, index, mode=mode) for mode in modes}  # type: ignore[arg-type]
    tallies = {name: Tally() for name in ("plain", *modes)}
    try:
        # One untimed warm-up call loads the weights.
        await llm.chat(vanilla_messages("Hello"), max_tokens=4)
        for number, question in enumerate(questions, start=1):
            started = time.perf_counter()
            result = await llm.chat(vanilla_messages(question), max_tokens=512, tag="bench:plain")
            plain = tallies["plain"]
            plain.seconds.append(time.perf_counter() - started)
            plain.calls.append(1)
            plain.prompt_tokens.append(result.usage.prompt_tokens)
            plain.completion_tokens.append(result.usage.completion_tokens)
            plain.reused_tokens.append(result.usage.cached_prompt_tokens)
            for mode, engine in engines.items():
                started = time.perf_counter()
                reply = await engine.respond([ChatMessage("user", question)])
                tally = tallies[mode]
                tally.seconds.append(time.perf_counter() - started)
                trace = reply.trace
                tally.calls.append(trace.llm_calls)
                tally.prompt_tokens.append(trace.prompt_tokens)
                tally.completion_tokens.append(trace.completion_tokens)
                tally.reused_tokens.append(sum(s.cached_prompt_tokens for s in trace.stages))
            Console(stderr=True).print(f"[dim]{number}/{len(questions)} done[/dim]")
    finally:
        await llm.aclose()
        index.close()
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--modes", default="fast,full")
    parser.add_argument("--model", default=None, help="Model spec (default: configured).")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    tallies = asyncio.run(measure(list(QUESTIONS[: args.questions]), modes, args.model))
    anchor = statistics.fmean(tallies["plain"].seconds)
    rows = {name: tally.row(anchor) for name, tally in tallies.items()}
    table = Table(title=f"Per-turn cost, {args.questions} questions (anchor: plain LLM)")
    for column in ("system", *next(iter(rows.values())).keys()):
        table.add_column(column, justify="left" if column == "system" else "right")
    for name, row in rows.items():
        table.add_row(name, *(str(v) for v in row.values()))
    Console().print(table)
    fast = rows.get("fast")
    if fast:
        verdict = "MET" if fast["x_plain"] <= 2.5 else "NOT MET"
        Console().print(f"goal fast mode ≤ 2.5× plain: {verdict} ({fast['x_plain']}×; "
                        "WikiChat reports 4.75×)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
