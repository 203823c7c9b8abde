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

Every turn is timed through the evaluation runner, as the ``chat_latency`` benchmark (which
times the system's whole ``respond`` and stores the seconds in the output's trace): one run per
system, stored, resumed question by question when the command is run again, exported with
``freshwiki runs export``. The runner is called once per question and system so the order
above still holds.

Writes ``experiments/results/chat_latency.json`` (``--out``: a name there or a path; with the
load average before and after, and the runs' ids). The default corpus index is built first if
this home has none (a few minutes, once).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from _provenance import data_provenance, write_result
from freshwiki.benchmarks.chat_latency import chat_latency_benchmark
from freshwiki.benchmarks.chat_latency.analysis import Tally, latency_row
from freshwiki.chat import DEFAULT_K, GroundedChat
from freshwiki.config import Settings, load_settings
from freshwiki.evaluation import ResultsStore, default_results_path, evaluate
from freshwiki.llm import open_llm
from freshwiki.retrieval import open_search_index, resolve_index_name
from freshwiki.seams import System
from freshwiki.systems.grounded import GroundedSystem
from freshwiki.systems.rag import RagSystem
from freshwiki.systems.vanilla import VanillaSystem, vanilla_messages

HERE = Path(__file__).parent
RESULTS = HERE / "results" / "chat_latency.json"
K = 5


async def measure(settings: Settings, options: dict[str, Any], count: int, modes: list[str],
                  store: Path) -> tuple[dict[str, Tally], dict[str, str], int]:
    """Every question through every system, interleaved, each turn a runner output.

    Returns each system's timings (question order), its run id, and the questions asked.
    """
    benchmark = chat_latency_benchmark(settings, options)
    samples = list(benchmark.samples())[:count]
    index = open_search_index(settings)
    index_name = resolve_index_name(settings)
    llm = open_llm(settings.model, settings=settings, cache=False)  # timings: never cached
    systems: dict[str, System] = {
        "plain": VanillaSystem(llm),
        "rag": RagSystem(llm, settings, k=K, index_name=index_name, index=index),
        **{mode: GroundedSystem(llm, settings, mode=mode, index_name=index_name,
                                engine=GroundedChat(llm, index, mode=mode))  # mode's own k
           for mode in modes}}
    templates = {name: "dated" if name == "plain" else "qa" for name in systems}
    runs: dict[str, str] = {}
    console = Console(stderr=True)
    try:
        with ResultsStore(store) as results:
            # Untimed warm-up: loads the weights and the embedder.
            await llm.chat(vanilla_messages("Hello"), max_tokens=4)
            index.search("warm up", 1)
            for number in range(1, len(samples) + 1):
                order = ["rag", *modes] if number % 2 else [*modes, "rag"]
                for name in ["plain", *order]:
                    summary = await evaluate(
                        benchmark, systems[name], llm=llm, store=results, scorers=[],
                        model_spec=settings.model, templates=[templates[name]], limit=number,
                        benchmark_options=options, concurrency=1, label=name, simulator=llm)
                    runs[name] = summary.info.run_id
                console.print(f"[dim]{number}/{len(samples)} done[/dim]")
            tallies = {name: Tally() for name in systems}
            for name, tally in tallies.items():
                for sample in samples:
                    output = results.get_output(runs[name], sample.id, templates[name])
                    if output is not None:
                        tally.add_trace(sample.id, output.trace, output.cache_hit)
    finally:
        await llm.aclose()
        index.close()
    return tallies, runs, len(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--modes", default="checked")
    parser.add_argument("--model", default=None, help="Model spec (default: configured).")
    parser.add_argument("--split", default="test", choices=("test", "dev"),
                        help="the evaluation set's split (dev: for development timings)")
    parser.add_argument("--out", default=None,
                        help="result file name under experiments/results, or a path")
    parser.add_argument("--store", type=Path, default=None,
                        help="the runs database (default: the home's runs/runs.sqlite)")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    settings = load_settings({"model": args.model} if args.model else {}).settings
    options = {"split": args.split}
    picked = list(chat_latency_benchmark(settings, options).samples())[: args.questions]
    started = time.perf_counter()
    before = os.getloadavg()
    tallies, runs, _ = asyncio.run(measure(settings, options, args.questions, modes,
                                           args.store or default_results_path(settings)))
    after = os.getloadavg()
    cached = {name: t.cache_hits for name, t in tallies.items() if t.cache_hits}
    if cached:
        print(f"warning: turns served from the response cache (not timings): {cached}",
              file=sys.stderr)
    anchor = tallies["rag"].seconds
    rows = {name: latency_row(tally, anchor) for name, tally in tallies.items()}
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
    out = (Path(args.out) if args.out and Path(args.out).parent != Path(".")
           else RESULTS.with_name(args.out) if args.out else RESULTS)
    write_result(out, {
        "model": settings.model,
        "k": {"rag": K, **{mode: DEFAULT_K[mode] for mode in modes}},
        "seconds": round(time.perf_counter() - started, 1),
        # Other processes slow both systems, not by the same factor (long prompts suffer
        # more): the load says how quiet the machine was.
        "load_average_1min": {"before": round(before[0], 2), "after": round(after[0], 2)},
        "systems": rows, "goals": goals,
        "per_question": {name: [round(s, 2) for s in t.seconds] for name, t in tallies.items()},
        "runs": runs,
    }, data=data_provenance(
        {"constructed": 1.0}, sample="n/a (a timing; nothing is tuned on it)",
        sources="../shared/data/wikipedia/topics (WikiChat topic leads, CC BY-SA)",
        questions=len(picked),
        by_set={k: sum(q.metadata["set"] == k for q in picked)
                for k in ("head", "tail", "recent")},
        provenance="questions of the frozen chat evaluation set (test split), written by "
                   "project maintainers from real lead paragraphs; measured, response cache "
                   "off"))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
