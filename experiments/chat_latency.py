"""Per-turn time of the grounded chat against retrieve-then-answer, same model, same run.

For each question, with the response cache off: the plain LLM answers alone (closed book),
the rag system answers (retrieve 5 passages, its default; one call: the anchor), and the
grounded chat answers in each mode asked for (default: ``checked``, which reads 3 whole
passages, its default). Rag and the grounded chat take turns
going first, question by question, so neither always meets a warmer machine. Printed per
system: mean and median seconds per turn, the seconds until the first released text reached
the caller (the grounded chat streams sentences as they pass their check; for rag and the plain
LLM the turn's end), LLM calls, prompt / generated / KV-reused tokens, and the ratio of means to
rag's turn with a 95 % bootstrap interval over questions (paired).

Goals (issue 31): the default mode's turn ≤ 1.3 times rag's; its first released text
≤ 1.15 times rag's whole turn.

Questions: the answerable and two-part items of the frozen chat evaluation set's test split
(``experiments/data/chat_eval/``), taken in turn from the head, tail and recent sets in file
order: questions that need an answer, the costlier case (a question the corpus does not cover
is answered "I don't know" without a call). Run on a quiet machine::

    .venv/bin/python experiments/chat_latency.py [--questions 30] [--modes checked,wikichat]

Writes ``experiments/results/chat_latency.json`` (with the load average before and after).
The default corpus index is built first if this home has none (a few minutes, once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from _provenance import data_provenance, write_result
from freshwiki.chat import DEFAULT_K, ChatMessage, GroundedChat
from freshwiki.config import load_settings
from freshwiki.llm import Message, open_llm
from freshwiki.retrieval import open_search_index
from freshwiki.seams import Sample, Task
from freshwiki.stats import ratio_bootstrap_ci
from freshwiki.systems.rag import RagSystem
from freshwiki.systems.vanilla import vanilla_messages

HERE = Path(__file__).parent
QUESTIONS = HERE / "data" / "chat_eval" / "questions.jsonl"
RESULTS = HERE / "results" / "chat_latency.json"
K = 5


def questions(count: int, split: str = "test") -> list[dict[str, Any]]:
    """The first ``count`` answerable / two-part items, head, tail and recent in turn."""
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    usable = [r for r in rows if r["split"] == split and r["kind"] in ("answerable",
                                                                         "two_part")]
    by_set = {k: [r for r in usable if r["set"] == k] for k in ("head", "tail", "recent")}
    picked: list[dict[str, Any]] = []
    while len(picked) < count and any(by_set.values()):
        for name in ("head", "tail", "recent"):
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

    def add(self, seconds: float, first_text: float | None, calls: int, prompt: int,
            completion: int, reused: int) -> None:
        """One turn (``first_text`` None: the text came at the end of the turn)."""
        self.seconds.append(seconds)
        self.first_text.append(first_text or seconds)
        self.calls.append(calls)
        self.prompt_tokens.append(prompt)
        self.completion_tokens.append(completion)
        self.reused_tokens.append(reused)

    def row(self, anchor: list[float]) -> dict[str, Any]:
        mean = statistics.fmean(self.seconds)
        low, high = ratio_bootstrap_ci(self.seconds, anchor)
        first_low, first_high = ratio_bootstrap_ci(self.first_text, anchor)
        return {
            "mean_s": round(mean, 2), "median_s": round(statistics.median(self.seconds), 2),
            "first_text_s": round(statistics.fmean(self.first_text), 2),
            "calls": round(statistics.fmean(self.calls), 2),
            "prompt_tokens": round(statistics.fmean(self.prompt_tokens)),
            "completion_tokens": round(statistics.fmean(self.completion_tokens)),
            "reused_prompt_tokens": round(statistics.fmean(self.reused_tokens)),
            "x_rag": round(mean / statistics.fmean(anchor), 3),
            "x_rag_95": [round(low, 3), round(high, 3)],
            "first_text_x_rag": round(statistics.fmean(self.first_text)
                                      / statistics.fmean(anchor), 3),
            "first_text_x_rag_95": [round(first_low, 3), round(first_high, 3)],
        }


async def measure(asked: list[str], modes: list[str], model: str | None
                  ) -> dict[str, Tally]:
    settings = load_settings({"model": model} if model else {}).settings
    index = open_search_index(settings)
    llm = open_llm(settings.model, settings=settings, cache=False)
    rag = RagSystem(llm, settings, k=K, index=index)
    engines = {mode: GroundedChat(llm, index, mode=mode) for mode in modes}  # mode's own k
    tallies = {name: Tally() for name in ("plain", "rag", *engines)}
    console = Console(stderr=True)

    async def plain(question: str) -> None:
        started = time.perf_counter()
        result = await llm.chat(vanilla_messages(question), max_tokens=512, tag="bench:plain")
        usage = result.usage
        tallies["plain"].add(time.perf_counter() - started, None, 1, usage.prompt_tokens,
                             usage.completion_tokens, usage.cached_prompt_tokens)

    async def retrieve_then_answer(question: str) -> None:
        task = Task(sample=Sample(id=question, input=question), template="qa",
                    messages=(Message.user(question),), query=question, max_tokens=512)
        started = time.perf_counter()
        output = await rag.respond(task)
        usage = output.usage
        tallies["rag"].add(time.perf_counter() - started, None, 1, usage.prompt_tokens,
                           usage.completion_tokens, usage.cached_prompt_tokens)

    async def grounded(mode: str, question: str) -> None:
        started = time.perf_counter()
        first = 0.0
        stream = engines[mode].stream([ChatMessage("user", question)])
        async for delta in stream:
            if delta.strip() and not first:
                first = time.perf_counter() - started
        trace = stream.reply.trace
        tallies[mode].add(time.perf_counter() - started, first or None, trace.llm_calls,
                          trace.prompt_tokens, trace.completion_tokens,
                          sum(s.cached_prompt_tokens for s in trace.stages))

    try:
        # Untimed warm-up: loads the weights and the embedder.
        await llm.chat(vanilla_messages("Hello"), max_tokens=4)
        index.search("warm up", 1)
        for number, question in enumerate(asked, start=1):
            await plain(question)
            order = ["rag", *modes] if number % 2 else [*modes, "rag"]
            for name in order:
                await (retrieve_then_answer(question) if name == "rag"
                       else grounded(name, question))
            console.print(f"[dim]{number}/{len(asked)} done[/dim]")
    finally:
        await llm.aclose()
        index.close()
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--modes", default="checked")
    parser.add_argument("--model", default=None, help="Model spec (default: configured).")
    parser.add_argument("--split", default="test", choices=("test", "dev"),
                        help="the evaluation set's split (dev: for development timings)")
    parser.add_argument("--out", default=None, help="result file name under experiments/results")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    picked = questions(args.questions, args.split)
    started = time.perf_counter()
    before = os.getloadavg()
    tallies = asyncio.run(measure([q["question"] for q in picked], modes, args.model))
    after = os.getloadavg()
    anchor = tallies["rag"].seconds
    rows = {name: tally.row(anchor) for name, tally in tallies.items()}
    table = Table(title=f"Per-turn cost, {len(picked)} questions (anchor: rag's turn, 95 % "
                        "bootstrap interval)")
    for column in ("system", *next(iter(rows.values())).keys()):
        table.add_column(column, justify="left" if column == "system" else "right")
    for name, row in rows.items():
        table.add_row(name, *(str(v) for v in row.values()))
    console = Console()
    console.print(table)
    goals: dict[str, Any] = {}
    default = rows.get("checked")
    if default:
        goals["turn_x_rag_le_1.3"] = default["x_rag"] <= 1.3
        goals["first_text_x_rag_le_1.15"] = default["first_text_x_rag"] <= 1.15
        console.print(
            f"checked turn {default['x_rag']}× rag {default['x_rag_95']} (goal ≤ 1.3: "
            f"{'MET' if goals['turn_x_rag_le_1.3'] else 'NOT MET'}); first released text "
            f"{default['first_text_x_rag']}× rag's turn {default['first_text_x_rag_95']} "
            f"(goal ≤ 1.15: {'MET' if goals['first_text_x_rag_le_1.15'] else 'NOT MET'})")
    settings = load_settings({"model": args.model} if args.model else {}).settings
    write_result(RESULTS.with_name(args.out) if args.out else RESULTS, {
        "model": settings.model,
        "k": {"rag": K, **{mode: DEFAULT_K[mode] for mode in modes}},
        "seconds": round(time.perf_counter() - started, 1),
        # Other processes slow both systems, not by the same factor (long prompts suffer
        # more): the load says how quiet the machine was.
        "load_average_1min": {"before": round(before[0], 2), "after": round(after[0], 2)},
        "systems": rows, "goals": goals,
        "per_question": {name: [round(s, 2) for s in t.seconds] for name, t in tallies.items()},
    }, data=data_provenance(
        {"constructed": 1.0}, sample="n/a (a timing; nothing is tuned on it)",
        sources="../shared/data/wikipedia/topics (WikiChat topic leads, CC BY-SA)",
        questions=len(picked),
        by_set={k: sum(q["set"] == k for q in picked) for k in ("head", "tail", "recent")},
        provenance="questions of the frozen chat evaluation set (test split), written by "
                   "project maintainers from real lead paragraphs; measured, response cache "
                   "off"))
    print(f"wrote {RESULTS.with_name(args.out) if args.out else RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
