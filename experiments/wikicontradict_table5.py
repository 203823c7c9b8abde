#!/usr/bin/env python
r"""WikiContradict's Table 5 for the models this machine runs: all 253 instances, template 5.

Run from the repository root (resumable: the eval set's runs live in the home's results store,
so the same command continues where it stopped, and returns at once when they are complete)::

    .venv/bin/python experiments/wikicontradict_table5.py \
        [--evalset experiments/evalsets/wikicontradict_table5.toml]

The paper (Hou et al., 2024, Table 5) asks seven LLMs every one of its 253 questions with
prompt template 5 (both passages, told they may conflict) and reports, per model, the share of
answers its Llama-3-70B judge calls correct, partially correct and incorrect, over all
instances and over the explicit and implicit contradictions apart. This script does the same
for the runs of the eval set (one per local model), scored by the scorer the eval set names
(the deterministic matcher, the default for template 5 until a judge agrees better with read
labels: see ``wikicontradict_judge.py`` and the validation README). Each share carries a
Wilson 95 % interval: the explicit and implicit columns rest on about 160 and 90 answers.

Result: ``experiments/results/wikicontradict_table5.json``. The paper's own rows are in
``experiments/data/figure_references.json`` (``papers.wikicontradict.table5``), rendered beside
ours by ``make figures``. Text from Wikipedia, CC BY-SA 4.0 (via the WikiContradict release).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from _evalset_filter import only_runs
from _provenance import data_provenance, write_result
from freshwiki.benchmarks.wikicontradict.analysis import TYPES, contradiction_tables
from freshwiki.config import load_settings
from freshwiki.evaluation import (
    ResultsStore,
    default_results_path,
    read_eval_set,
    run_eval_set,
)
from freshwiki.stats import wilson_ci

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "experiments" / "results" / "wikicontradict_table5.json"
EVALSET = ROOT / "experiments" / "evalsets" / "wikicontradict_table5.toml"
TEMPLATE = "5"
"""The paper's Table 5 template; ``--templates`` asks for others (one row per template)."""
err = Console(stderr=True)


def model_rows(run: Any, model: str, templates: Sequence[str] = (TEMPLATE,)
               ) -> list[dict[str, Any]]:
    """One row per scorer and template of ``run``: each class's share, with interval, per type.

    Shares are fractions (0 to 1) of the scored answers of the cell; the paper prints percent.
    """
    rows = []
    for table in contradiction_tables([run], [model]):
        for template in templates:
            if template in table.templates:
                rows.append(_row(run, model, table, template))
    return rows


def _row(run: Any, model: str, table: Any, template: str) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model, "scorer": table.scorer, "run_id": run.info.run_id,
                           "template": template}
    for kind in TYPES:
        cell = table.cell(model, template, kind)
        if cell is None:
            continue
        shares = {}
        for label in table.classes[template]:
            k = cell.counts.get(label, 0)
            ci = wilson_ci(k, cell.n)
            shares[label] = {"k": k, "share": k / cell.n if cell.n else None,
                             "ci": [ci.low, ci.high] if ci is not None else None}
        row[kind] = {"n": cell.n, "shares": shares}
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evalset", type=Path, default=EVALSET,
                        help="eval-set file with one run per model (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--templates", default=TEMPLATE,
                        help="comma-separated templates to tabulate, one row each per model "
                             "and scorer (default: %(default)s, the paper's Table 5)")
    parser.add_argument("--only", action="append", default=None, metavar="LABEL",
                        help="only the eval set's run with this label (repeatable), e.g. one "
                             "model's finished run while another model's is still going")
    args = parser.parse_args()
    templates = [t.strip() for t in args.templates.split(",") if t.strip()]

    settings = load_settings().settings
    eval_set = read_eval_set(args.evalset, settings=settings)
    eval_set = only_runs(eval_set, args.only, args.evalset, parser)
    done = asyncio.run(run_eval_set(eval_set, settings=settings, console=err))
    rows: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    with ResultsStore(default_results_path(settings)) as store:
        for planned, finished in zip(eval_set.runs, done, strict=True):
            summary = finished.summary
            model = planned.model or settings.model
            runs.append({"model": model, "label": planned.label, "run_id": summary.info.run_id,
                         "items": summary.items, "complete": summary.complete,
                         "failures": len(summary.failures)})
            if summary.complete < summary.items:
                err.print(f"[yellow]{model}: {summary.complete}/{summary.items} complete; "
                          "its row is left out until the run finishes[/]")
                continue
            rows.extend(model_rows(store.load_run(summary.info.run_id), model, templates))
    result = {"template": ",".join(templates),
              "evalset": str(args.evalset.resolve().relative_to(ROOT)), "only": args.only,
              "runs": runs, "rows": rows}
    write_result(args.out, result, data=data_provenance(
        {"real": 1.0}, sample="n/a (nothing trained or tuned on these answers; the scorer's "
        "agreement with read labels is in wikicontradict_judge_table5.json)",
        sources="../shared/data/wikicontradict (WikiContradict, CC BY-SA 4.0 text from "
        "Wikipedia)", shares_of="questions (all 253 real WikiContradict questions)"))
    err.print(json.dumps(rows, indent=1)[:3000])
    err.print(f"result in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
