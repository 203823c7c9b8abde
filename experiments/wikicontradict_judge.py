#!/usr/bin/env python
"""How well do the WikiContradict scorers agree with human labels?

Run from the repository root::

    .venv/bin/python experiments/wikicontradict_judge.py [--judge local:qwen2.5-coder-1.5b]
        [--labels FILE.jsonl] [--dataset PATH] [--out results.json] [--show-errors]
        [--threads 1]

Both scorers (the LLM judge ``wikicontradict-judge`` and the deterministic
``wikicontradict-match``) label every response of a human-labels file (default: the 40
hand-written, hand-labelled responses shipped in
``freshwiki/benchmarks/wikicontradict/validation/human_labels.jsonl``). Each response is scored
exactly as a run would score it: the sample is rendered with its template into a ``Task`` and
the response becomes an ``Output``. Printed per scorer: precision, recall and F1 on the
"correct" class (the number the paper reports: 0.804 for its Llama-3-70B judge), three-class
accuracy, Cohen's kappa, the confusion matrix, and the judge's time and tokens.

The judge runs with a temporary ``FRESHWIKI_HOME`` and no response cache, so every call is a
real generation. Nothing is asserted: the script reports.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _provenance import data_provenance, write_result
from freshwiki.benchmarks import Output, Scorer
from freshwiki.benchmarks.wikicontradict import (
    DATASET_FILE,
    LABELS,
    HumanLabel,
    JudgeScorer,
    MatchScorer,
    WikiContradict,
    builtin_human_labels,
    cohens_kappa,
    confusion_matrix,
    load_human_labels,
    percent_agreement,
    precision_recall_f1,
)
from freshwiki.config import load_settings
from freshwiki.errors import FreshwikiError
from freshwiki.llm import open_llm

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "wikicontradict_judge.json"
PAPER_F1 = 0.804
"""F1 on "correct" of the paper's WikiContradictEval judge (Llama-3-70B) against humans."""


async def _label_all(
    scorer: Scorer, bench: WikiContradict, labels: list[HumanLabel]
) -> tuple[list[str], list[str], float]:
    """Predicted labels, explanations, and wall-clock seconds for the whole file."""
    samples = {s.id: s for s in bench.samples()}
    predicted: list[str] = []
    explanations: list[str] = []
    started = time.perf_counter()
    for item in labels:
        if item.sample_id not in samples:
            raise FreshwikiError(
                f"human label for unknown sample {item.sample_id!r}",
                hint="the labels file must name samples of the WikiContradict dataset.",
            )
        task = bench.render(samples[item.sample_id], item.template)
        score = await scorer.score(task, Output(text=item.response))
        predicted.append(score.label or "")
        explanations.append(score.explanation)
    return predicted, explanations, time.perf_counter() - started


def _report(name: str, gold: list[str], predicted: list[str]) -> dict[str, Any]:
    prf = precision_recall_f1(gold, predicted)
    return {
        "scorer": name,
        "n": len(gold),
        "precision": prf.precision,
        "recall": prf.recall,
        "f1": prf.f1,
        "accuracy": percent_agreement(gold, predicted),
        "kappa": cohens_kappa(gold, predicted),
        "confusion": confusion_matrix(gold, predicted),
    }


def _print_confusion(matrix: dict[str, dict[str, int]]) -> None:
    short = {"correct": "C", "partially_correct": "P", "incorrect": "I"}
    names = [n for n in matrix if n in short] + [n for n in matrix if n not in short]
    print("    human \\ scorer  " + "  ".join(f"{short.get(n, n):>3}" for n in names))
    for g in names:
        row = "  ".join(f"{matrix[g][p]:>3}" for p in names)
        print(f"    {short.get(g, g):>15}  {row}")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", default="local:qwen2.5-coder-1.5b", help="judge model spec")
    parser.add_argument("--labels", type=Path, help="human labels JSONL (default: built-in)")
    parser.add_argument("--dataset", type=Path,
                        default=load_settings().settings.data_dir / DATASET_FILE)
    parser.add_argument("--out", type=Path, default=RESULTS_PATH,
                        help="where to write the results (default: %(default)s)")
    parser.add_argument(
        "--threads", type=int, help="llama.cpp threads (1 is far faster on a busy machine)"
    )
    parser.add_argument("--show-errors", action="store_true", help="print each disagreement")
    args = parser.parse_args(argv)

    labels = load_human_labels(args.labels) if args.labels else builtin_human_labels()
    bench = WikiContradict.from_file(args.dataset)
    gold = [h.label for h in labels]
    counts = {lab: gold.count(lab) for lab in LABELS}
    print(f"{len(labels)} human-labelled responses {counts}")

    home = tempfile.mkdtemp(prefix="fw-wcjudge-")
    os.environ["FRESHWIKI_HOME"] = home
    overrides = {"n_threads": args.threads} if args.threads else {}
    judge = open_llm(args.judge, settings=load_settings(overrides).settings, cache=False)
    rows: list[dict[str, Any]] = []
    details: dict[str, list[str]] = {}
    try:
        for scorer in (JudgeScorer(judge), MatchScorer()):
            predicted, why, seconds = await _label_all(scorer, bench, labels)
            row = _report(scorer.name, gold, predicted)
            row["seconds"] = seconds
            rows.append(row)
            details[scorer.name] = predicted
            if args.show_errors:
                for item, p, w in zip(labels, predicted, why, strict=True):
                    if p != item.label:
                        print(f"  [{scorer.name}] {item.sample_id} t{item.template}: human "
                              f"{item.label}, scorer {p} -- {w}")
    finally:
        await judge.aclose()
    summary = judge.call_log.summary() if judge.call_log else []

    print(f"\njudge: {args.judge} ({judge.backend.model_id})")
    print(f"{'scorer':<22} {'P(correct)':>10} {'R(correct)':>10} {'F1':>6} {'acc':>6} "
          f"{'kappa':>6} {'seconds':>8}")
    for row in rows:
        print(f"{row['scorer']:<22} {row['precision']:>10.3f} {row['recall']:>10.3f} "
              f"{row['f1']:>6.3f} {row['accuracy']:>6.3f} {row['kappa']:>6.3f} "
              f"{row['seconds']:>8.1f}")
    print(f"{'paper (Llama-3-70B)':<22} {'':>10} {'':>10} {PAPER_F1:>6.3f}")
    for row in rows:
        print(f"\n  {row['scorer']} confusion (rows: human; C/P/I = correct/partial/incorrect)")
        _print_confusion(row["confusion"])
    for calls in summary:
        print(f"\njudge calls: {calls.calls}, prompt tokens {calls.prompt_tokens} "
              f"({calls.cached_prompt_tokens} reused from the KV cache), completion tokens "
              f"{calls.completion_tokens}, mean latency {calls.mean_latency_s:.1f} s")
    builtin = args.labels is None
    path = write_result(args.out, {
        "judge": args.judge, "model_id": judge.backend.model_id, "rows": rows,
        "predicted": details, "paper_f1": PAPER_F1, "labels_file": str(args.labels or
                                                                        "built-in"),
        "label_counts": counts,
    }, data=data_provenance(
        {"constructed": 1.0} if builtin else {"real": 1.0},
        sample="the matcher's rules and the 40 responses were written by the same person, "
               "so the matcher's figure is in sample; the judge has no trained part"
        if builtin else "as the labels file says",
        figure="measured",
        sources="40 responses written by hand (not model outputs) to WikiContradict "
                "questions, templates 4 and 5, labelled by hand" if builtin
        else f"responses and labels from {args.labels}"))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
