#!/usr/bin/env python
"""The WikiContradict judge before and after its examples changed, on two halves of a run.

The development half and the held-out half of the same real answers, scored from stored
verdicts (no model is run).

Run from the repository root, after ``wikicontradict_run.py`` has judged the run with
today's prompt::

    .venv/bin/python experiments/wikicontradict_judge_heldout.py \
        [--before 9e1b82e027aa] [--after RUN_ID] [--out FILE]

The labels are the ones read for the real run's template 2 / 3 answers
(``validation/real_labels_single.jsonl``) and 5.2 / 5.3 / 5.4 answers
(``validation/real_labels_detection.jsonl``). Both runs hold the same answers (the second
replays the first's from the response cache) and differ in the judge's prompt only:
``--before`` was judged with the examples in which every one-answer example gave answer 1,
``--after`` with today's (balanced, plus a pair of answers one day apart). Today's examples
were chosen by their agreement on items 0-20 (``wikicontradict_judge_dev_v1/v2.json``), so
that half is in sample for the choice; items 21-41 were not looked at while choosing, so that
half is out of sample. A label counts only where both runs scored the response and it is the
text that was read.

Printed and written (``results/wikicontradict_judge_heldout.json``): per half, per template
and pooled, accuracy, Cohen's kappa and precision / recall of *correct* (Wilson intervals) for
the judge before, the judge after and the deterministic matcher (unchanged, so out of sample
on both halves).

Each figure is ``freshwiki runs agree RUN --labels FILE --scorer NAME`` on the labels of one
half and template (:func:`freshwiki.evaluation.agree`, Wilson at z = 1.96 as the file has
always held, an undefined precision or recall written 0.0 and an undefined kappa 1.0 as
before); the script only chooses the labels: those both runs scored, on the text read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from _provenance import data_provenance, write_result
from freshwiki.config import load_settings
from freshwiki.evaluation import (
    LabelRow,
    ResultsStore,
    RunAgreement,
    RunResults,
    agree,
    default_results_path,
    read_labels,
)
from wikicontradict_run import DEFAULT_LABELS, same_text

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
HALVES = {"development (items 0-20, in sample for the choice)": (0, 20),
          "held out (items 21-41, out of sample)": (21, 41)}
JUDGE = "wikicontradict-judge"
MATCH = "wikicontradict-match"


def _item(label: LabelRow) -> int:
    return int(label.sample_id.split("-")[1])


def _row(run: RunResults, labels: list[LabelRow], scorer: str) -> dict[str, Any]:
    """``runs agree`` of ``scorer`` in ``run`` on ``labels``, in the file's row schema."""
    result: RunAgreement = agree(run, labels, DEFAULT_LABELS[0].parent, scorer, z=1.96,
                                 resamples=200)
    correct = next((c for c in result.per_class if c.label == "correct"), None)

    def pair(interval: Any) -> list[float] | None:
        return None if interval is None else [interval.low, interval.high]

    return {"n": result.n, "hits": sum(result.matrix[i][i] for i in range(len(result.classes))),
            "accuracy": result.accuracy,
            "kappa": 1.0 if result.kappa is None else result.kappa,
            "correct_precision": (correct.precision if correct else None) or 0.0,
            "correct_recall": (correct.recall if correct else None) or 0.0,
            "correct_precision_ci95": pair(correct.precision_ci if correct else None),
            "correct_recall_ci95": pair(correct.recall_ci if correct else None)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="9e1b82e027aa",
                        help="run judged with the earlier examples (default: %(default)s)")
    parser.add_argument("--after", default=None,
                        help="run judged with today's examples (default: the run_id of "
                        "results/wikicontradict_run.json)")
    parser.add_argument("--out", type=Path, default=RESULTS / "wikicontradict_judge_heldout.json")
    args = parser.parse_args()
    after_id = args.after or json.loads(
        (RESULTS / "wikicontradict_run.json").read_text(encoding="utf-8"))["run_id"]

    settings = load_settings().settings
    with ResultsStore(default_results_path(settings)) as store:
        before, after = store.load_run(args.before), store.load_run(after_id)
    labels = [row for path in DEFAULT_LABELS if path.is_file() for row in read_labels(path)]

    def verdicts(run: Any) -> tuple[dict[tuple[str, str, str], str], dict[tuple[str, str], str]]:
        return ({(i.sample_id, i.template, i.scorer): i.label for i in run.items},
                {(i.sample_id, i.template): i.output for i in run.items})

    b_labels, b_text = verdicts(before)
    a_labels, a_text = verdicts(after)
    kept, left_out = [], []
    for h in labels:
        key = (h.sample_id, h.template)
        scored = all((*key, scorer) in table for table, scorer in (
            (b_labels, JUDGE), (a_labels, JUDGE), (a_labels, MATCH)))
        if scored and h.response is not None and all(
                key in t and same_text(t[key], h.response) for t in (b_text, a_text)):
            kept.append(h)
        else:
            left_out.append(f"{h.sample_id}/{h.template}")  # not scored, or another text
    scorers = {"judge before": (before, JUDGE), "judge after (today)": (after, JUDGE),
               "matcher": (after, MATCH)}

    halves: dict[str, Any] = {}
    for half, (low, high) in HALVES.items():
        mine = [h for h in kept if low <= _item(h) <= high]
        if not mine:
            continue
        per: dict[str, Any] = {}
        templates = sorted({h.template for h in mine}, key=float)
        for template in [*templates, "pooled"]:
            chosen = [h for h in mine if template in ("pooled", h.template)]
            per[template] = {name: _row(run, chosen, scorer)
                             for name, (run, scorer) in scorers.items()}
        halves[half] = per

    for half, per in halves.items():
        print(half)
        for template, rows in per.items():
            cells = "  ".join(f"{name} {r['hits']}/{r['n']} k {r['kappa']:.2f}"
                              for name, r in rows.items())
            print(f"  {template:>6}  {cells}")
    if left_out:
        print(f"left out (text differs from what was read): {', '.join(left_out)}",
              file=sys.stderr)

    path = write_result(args.out, {
        "before_run": before.info.run_id, "after_run": after.info.run_id,
        "judge_model": after.info.config.get("judge"),
        "labels_files": [str(p.relative_to(ROOT)) for p in DEFAULT_LABELS],
        "labels": len(labels), "left_out": left_out, "halves": halves,
    }, data=data_provenance(
        {"real": 1.0},
        sample="items 0-20: in sample for the choice of today's examples (two variants were "
               "tried there); items 21-41: out of sample (not looked at while choosing). The "
               "matcher did not change: out of sample on both",
        sources="answers of run 6c4800fe2123 (Qwen2.5-Coder-1.5B, vanilla, WikiContradict "
                "items 0-41, ../shared/data/wikicontradict), replayed by both runs; labels "
                "read by one reader (an AI assistant, Claude) before any scorer's label was "
                "seen"))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
