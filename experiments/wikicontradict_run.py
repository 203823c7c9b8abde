#!/usr/bin/env python
r"""WikiContradict on a local model, every template, laid out as the paper's Tables 2 and 5.

Run from the repository root (resumable: it is one ``freshwiki eval`` run in the configured
home's results store, so the same command continues where it stopped)::

    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/wikicontradict_run.py \
        [--model local:qwen2.5-coder-1.5b] [--system vanilla] [--limit 49]

What it does:

1. Runs the eval set ``experiments/evalsets/wikicontradict.toml`` (``--evalset`` another;
   ``--model``, ``--system``, ``--limit`` and ``--judge`` override its one run):
   ``wikicontradict`` with templates 1, 2, 3, 4, 5, 5.1, 5.2, 5.3 and 5.4 on the first 49
   questions (every question of items 0-41, which holds all 40 revised questions, so 5.3 and
   5.4 are asked of 40), greedy, 250 new tokens, judged by the runner's default judge (the
   strongest installed model, which for the 1.5B is the 1.5B itself; the run header says so)
   and by the deterministic matcher. ``freshwiki eval-set run`` on the file makes the same
   run.
2. The share of correct / partially correct / incorrect per template and scorer over all,
   explicit and implicit instances (the paper's Tables 2 and 5), with n.
3. Against labels read by a person for this run's responses (by default
   ``validation/real_labels_single.jsonl``, templates 2 and 3, and
   ``validation/real_labels_detection.jsonl``, 5.2, 5.3 and 5.4: the templates the judge
   validation of ``wikicontradict_judge.py`` does not cover; ``--labels`` repeats), each
   scorer's agreement with them per template: accuracy, Cohen's kappa, precision / recall /
   F1 per class (Wilson intervals). A label counts only where the run's response is the text
   that was read: a response that differs (a replay can serve another answer to an identical
   prompt) is left out and counted.

Result: ``experiments/results/wikicontradict_run.json``; ``freshwiki report RUN_ID`` gives the
same tables as HTML. Text from Wikipedia, CC BY-SA 4.0 (via the WikiContradict release).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from _provenance import data_provenance, write_result
from freshwiki.benchmarks.wikicontradict import (
    LABELS,
    TEMPLATES,
    HumanLabel,
    agreement_report,
    load_human_labels,
)
from freshwiki.benchmarks.wikicontradict.analysis import contradiction_tables
from freshwiki.config import load_settings
from freshwiki.evaluation import (
    ResultsStore,
    default_results_path,
    read_eval_set,
    run_eval_set,
)

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "experiments" / "results" / "wikicontradict_run.json"
EVALSET = ROOT / "experiments" / "evalsets" / "wikicontradict.toml"
VALIDATION = ROOT / "src" / "freshwiki" / "benchmarks" / "wikicontradict" / "validation"
DEFAULT_LABELS = (VALIDATION / "real_labels_single.jsonl",
                  VALIDATION / "real_labels_detection.jsonl")
err = Console(stderr=True)


def read_labels(paths: list[Path]) -> list[HumanLabel]:
    """The labels read for the run's responses; a file that does not exist adds none."""
    return [label for path in paths if path.is_file() for label in load_human_labels(path)]


def shares(run: Any, label: str) -> list[dict[str, Any]]:
    """Per scorer, template and instance type: n and the share of each class, in percent."""
    rows = []
    for table in contradiction_tables([run], [label]):
        for template in table.templates:
            for kind in ("all", "explicit", "implicit"):
                cell = table.cell(label, template, kind)
                if cell is None:
                    continue
                rows.append({"scorer": table.scorer, "template": template, "type": kind,
                             "n": cell.n, **{c: cell.percent(c) for c in table.classes[template]}})
    return rows


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def agreement(run: Any, labels: list[HumanLabel]) -> dict[str, Any]:
    """Each scorer's labels of the read responses against the reader's, per template.

    Only responses whose text is the one that was read count; the others are listed under
    ``"text_differs"``.
    """
    by_key = {(i.sample_id, i.template, i.scorer): i.label for i in run.items}
    texts = {(i.sample_id, i.template): i.output for i in run.items}
    differs = sorted(f"{h.sample_id}/{h.template}" for h in labels
                     if (h.sample_id, h.template) in texts
                     and not same_text(texts[(h.sample_id, h.template)], h.response))
    out: dict[str, Any] = {"text_differs": differs}
    for scorer in sorted({i.scorer for i in run.items}):
        per: dict[str, Any] = {}
        for template in sorted({h.template for h in labels}, key=float):
            mine = [h for h in labels if h.template == template
                    and (h.sample_id, template, scorer) in by_key
                    and f"{h.sample_id}/{template}" not in differs]
            if not mine:
                continue
            gold = [h.label for h in mine]
            predicted = [by_key[(h.sample_id, template, scorer)] for h in mine]
            classes = [c for c in LABELS if c in TEMPLATES[template].classes]
            per[template] = agreement_report(gold, predicted, classes).to_json()
        out[scorer] = per
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evalset", type=Path, default=EVALSET,
                        help="eval-set file with the run (default: %(default)s)")
    parser.add_argument("--model", default=None, help="override the eval set's model")
    parser.add_argument("--system", default=None, help="override the eval set's system")
    parser.add_argument("--limit", type=int, default=None,
                        help="override the eval set's number of questions (49)")
    parser.add_argument("--judge", default=None,
                        help="judge spec, 'default' for the runner's rule, or 'none' "
                        "(default: the eval set's)")
    parser.add_argument("--labels", type=Path, action="append",
                        help="labels read for this run's responses (JSONL; repeat for several; "
                        "default: validation/real_labels_single.jsonl and "
                        "real_labels_detection.jsonl)")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    overrides = {k: v for k, v in (("model", args.model), ("system", args.system),
                                   ("limit", args.limit)) if v is not None}
    if args.judge is not None:
        overrides["judge"] = None if args.judge.strip().lower() == "none" else args.judge
    eval_set = read_eval_set(args.evalset, settings=load_settings().settings)
    if len(eval_set.runs) != 1:
        raise SystemExit(f"{args.evalset} has {len(eval_set.runs)} runs; this script reports "
                         "on one (`freshwiki eval-set run` runs them all)")
    planned = dataclasses.replace(eval_set.runs[0], **overrides)
    # The model under test is also the configured one, as before, so the default judge is
    # chosen for it whatever this machine's configuration says.
    settings = load_settings({"model": planned.model} if planned.model else {}).settings
    eval_set = dataclasses.replace(eval_set, runs=(planned,))
    started = time.perf_counter()
    [done] = asyncio.run(run_eval_set(eval_set, settings=settings, console=err))
    summary = done.summary
    seconds = time.perf_counter() - started
    model = planned.model or settings.model
    templates = list(planned.templates or TEMPLATES)
    with ResultsStore(default_results_path(settings)) as store:
        run = store.load_run(summary.info.run_id)
    label = f"{planned.system}/{model}"
    label_files = args.labels or list(DEFAULT_LABELS)
    labels = read_labels(label_files)
    judge = summary.info.config.get("judge")
    result = {
        "run_id": summary.info.run_id, "model": model, "system": planned.system,
        "judge": judge, "templates": templates, "questions": planned.limit,
        "items": summary.items, "complete": summary.complete,
        "failures": len(summary.failures), "seconds_this_call": round(seconds, 1),
        "means": [{"template": m.template, "scorer": m.scorer, "mean": m.mean, "n": m.n,
                   "n_total": m.n_total} for m in summary.means],
        "shares": shares(run, label),
        "labels": {"files": [str(p.resolve().relative_to(ROOT)) for p in label_files
                             if p.is_file()], "n": len(labels)},
        "agreement": agreement(run, labels) if labels else {},
    }
    write_result(args.out, result, data=data_provenance(
        {"real": 1.0}, sample="n/a for the run (nothing trained or tuned); the scorers' "
        "agreement with the read labels: see the README (which labels were read before which "
        "prompt was written)",
        sources="../shared/data/wikicontradict (WikiContradict, CC BY-SA 4.0 text from "
        "Wikipedia); revised passages for 5.3/5.4 from benchmarks/wikicontradict/data/"
        "revisions.jsonl", shares_of="questions (real WikiContradict items; the 5.3/5.4 "
        "passages are real passages with minimal edits written for this project)"))
    err.print(json.dumps({k: v for k, v in result.items() if k not in ("shares",)},
                         indent=1)[:4000])
    err.print(f"run {summary.info.run_id}: {summary.complete}/{summary.items} complete; "
              f"result in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
