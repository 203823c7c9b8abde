#!/usr/bin/env python
"""How well does the default-judge rule agree with people, scored without running a model?

Run from the repository root::

    .venv/bin/python experiments/wikicontradict_judge_rule.py [--real FILE.json] [--out FILE]
        [--from-file]

``wikicontradict_judge.py --set real`` judges each of its 180 real labelled responses with
every judge it asks: today by replaying them through the runner (the ``replay`` system, one
run per source run and judge, listed under ``runs`` in its result file); the committed
``wikicontradict_judge_real.json`` was written before that, and keeps the verdicts in its
``items`` instead (each with the judge's spec). A rule that picks one of those judges for each
producing model can therefore be scored without a model: this script asks today's
``freshwiki.evaluation.default_judge`` which judge it would give a run of each producer, with
the three local models installed as on the validation machine (empty stand-in files in a
temporary folder, so the figure does not depend on this machine's models) and the configured
model left at the 1.5B, and takes, for each source run, the verdicts that judge gave. A
producer whose chosen judge never read its responses is reported as needing a model run
instead of being guessed.

Where the verdicts come from: the runs the file lists, from this machine's runs store (run
``wikicontradict_judge.py`` first, or ``freshwiki runs import`` them), or, when the file lists
no runs (or with ``--from-file``), the file's own items, taken as runs of the same shape (one
per source run and judge, holding the texts that were read). Either way every figure is
``freshwiki runs agree`` (:func:`freshwiki.evaluation.agree_runs`, each run against the labels
of its own answers): accuracy, macro F1 and Cohen's kappa against the labels for the rule as
measured (the judge rule in force when the file was written), today's rule and the matcher,
over all 180 responses, template 5 alone, and per producing model. Printed and written to
``results/wikicontradict_judge_rule.json`` (with ``runs`` when they came from the store).
Decoding was greedy, so a stored verdict is what the same judge would say again with the same
prompt and weights; the file records the commit its verdicts came from.

Why the committed figure is scored from the file: its verdicts were given with the judge's
earlier examples and partly by the 0.5B; today's code renders today's examples, so no run made
now can hold them. A figure of today's prompt comes from ``--real
results/wikicontradict_judge_real_balanced.json`` once that file is rewritten with runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from _provenance import data_provenance, write_result
from freshwiki.config import load_settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation import (
    ResultsStore,
    RunInfo,
    RunResults,
    default_judge,
    default_results_path,
)
from freshwiki.llm import models
from freshwiki.results import ScoredItem
from wikicontradict_judge import (
    JUDGE,
    MATCH,
    ROOT,
    Column,
    Labelled,
    measure,
    read_labelled,
    short_row,
)

RESULTS = ROOT / "experiments" / "results"
REAL = RESULTS / "wikicontradict_judge_real.json"
OUT = RESULTS / "wikicontradict_judge_rule.json"
CONFIGURED = "local:qwen2.5-coder-1.5b"

Verdicts = tuple[dict[str, RunResults], dict[tuple[str, str], RunResults]]
"""(source run → the run of the rule as measured, (source run, judge spec) → a run it judged)."""


def from_store(stored: dict[str, Any]) -> Verdicts:
    """The replay runs the result file lists, loaded from this machine's store."""
    with ResultsStore(default_results_path(load_settings().settings)) as store:
        runs = {run_id: store.load_run(run_id)
                for by_group in stored["runs"].values() for run_id in by_group.values()}
    by_spec: dict[tuple[str, str], RunResults] = {}
    for by_group in stored["runs"].values():
        for group, run_id in by_group.items():
            spec = str(runs[run_id].info.config.get("judge_spec"))
            by_spec.setdefault((group, spec), runs[run_id])
    return {g: runs[r] for g, r in stored["runs"][JUDGE].items()}, by_spec


def from_items(stored: dict[str, Any], labelled: list[Labelled]) -> Verdicts:
    """The file's per-item verdicts as runs: one per source run and judge column.

    Each holds the judge's verdicts and the matcher's, on the texts that were read (the
    labels file's), so ``runs agree`` compares them exactly as it compares a replay run.
    """
    items: list[dict[str, Any]] = stored["items"]
    if [(i["sample_id"], i["template"], i["human"]) for i in items] != [
            (x.row.sample_id, x.row.template, x.row.label) for x in labelled]:
        raise FreshwikiError(
            "the result file's items are not the labels file's lines in order",
            hint="score it with the labels file it was written from (its labels_file).")
    now = dt.datetime.now(dt.UTC)
    columns = [key.removesuffix(" spec") for key in items[0] if key.endswith(" spec")]
    measured: dict[str, RunResults] = {}
    by_spec: dict[tuple[str, str], RunResults] = {}
    for name in columns:
        for group in dict.fromkeys(x.group for x in labelled):
            mine = [(i, x) for i, x in zip(items, labelled, strict=True) if x.group == group]
            specs = {str(i[f"{name} spec"]) for i, _ in mine}
            if len(specs) != 1:
                raise FreshwikiError(f"column {name!r} names several judges for run {group}",
                                     hint="one judge per source run and column is expected.")
            spec = specs.pop()
            scored = tuple(
                ScoredItem(x.row.sample_id, x.row.template, scorer, 0.0, label=str(i[column]),
                           explanation=str(i.get(f"{column} explanation", "")),
                           output=x.row.response or "")
                for i, x in mine for scorer, column in ((JUDGE, name), (MATCH, MATCH)))
            run = RunResults(RunInfo(f"{group}/{spec}", "wikicontradict", "replay", spec,
                                     {"judge_spec": spec}, "", {}, now, now), scored)
            if name == JUDGE:
                measured[group] = run
            by_spec.setdefault((group, spec), run)
    return measured, by_spec


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, default=REAL,
                        help="result file of wikicontradict_judge.py --set real")
    parser.add_argument("--out", type=Path, default=OUT, help="result file (%(default)s)")
    parser.add_argument("--from-file", action="store_true",
                        help="take the verdicts from the file's items even when it lists runs")
    args = parser.parse_args(argv)
    stored = json.loads(args.real.read_text(encoding="utf-8"))
    labels_path = ROOT / stored["labels_file"]
    labelled = read_labelled(labels_path, by_run=True)
    use_runs = "runs" in stored and not args.from_file
    measured, by_spec = from_store(stored) if use_runs else from_items(stored, labelled)

    with tempfile.TemporaryDirectory(prefix="fw-judge-rule-") as folder:
        for name in models.MODELS:
            (Path(folder) / models.MODELS[name].filename).write_bytes(b"")
        settings = dataclasses.replace(load_settings().settings, models_dir=Path(folder),
                                       model=CONFIGURED)
        choices = {m: default_judge(m, settings) for m in sorted({x.model for x in labelled})}

    producer_of = {x.group: x.model for x in labelled}
    today = {g: by_spec.get((g, choices[m].spec)) for g, m in producer_of.items()}
    missing = sorted({producer_of[g] for g, run in today.items() if run is None})
    columns = {"rule as measured": Column(JUDGE, measured), "matcher": Column(MATCH, measured)}
    if not missing:
        columns = {"rule today": Column(JUDGE, {g: r for g, r in today.items()
                                                if r is not None}), **columns}

    def table(chosen: list[Labelled]) -> dict[str, dict[str, Any]]:
        return {name: short_row(measure(col, chosen, labels_path))
                for name, col in columns.items()}

    groups: dict[str, list[Labelled]] = {
        "all": labelled, "template 5": [x for x in labelled if x.row.template == "5"]}
    for producer in choices:
        groups[f"producer {producer}"] = [x for x in labelled if x.model == producer]
    rows = {group: table(chosen) for group, chosen in groups.items() if chosen}

    for producer, choice in choices.items():
        was = {str(measured[g].info.config.get("judge_spec"))
               for g, m in producer_of.items() if m == producer}
        print(f"{producer}: judged then by {', '.join(sorted(was))}; today by {choice.spec}"
              f"{' (itself)' if choice.same_as_model else ''}")
    if missing:
        print(f"needs a model run: no stored verdict of today's judge for {', '.join(missing)}")
    for group, by_name in rows.items():
        for name, row in by_name.items():
            print(f"  {group:<36} {name:<18} n={row['n']:<4} acc {row['accuracy']:.3f} "
                  f"macro-F {row['macro_f1']:.3f} kappa {row['kappa']:.3f} "
                  f"C-F1 {row['correct_f1']:.3f}")

    real = args.real.resolve()
    payload: dict[str, Any] = {
        "from": {"file": str(real.relative_to(ROOT)) if real.is_relative_to(ROOT)
                 else str(args.real), "commit": stored.get("commit"),
                 "date": stored.get("date")},
        "installed": sorted(models.MODELS), "configured_model": CONFIGURED,
        "choices": {m: dataclasses.asdict(c) for m, c in choices.items()},
        "needs_model_run": missing, "rows": rows,
    }
    if use_runs:
        payload["runs"] = {name: {g: r.info.run_id for g, r in col.runs.items()}
                           for name, col in columns.items()}
    path = write_result(args.out, payload, data=data_provenance(
        {"real": 1.0},
        sample="out of sample: the same 180 labelled real responses and the judges' stored "
               "verdicts as wikicontradict_judge_real.json; the new rule was chosen after "
               "seeing those figures, so its agreement here is the figure that chose it, not "
               "a fresh test of it",
        figure="measured (recomputed from stored verdicts; no model was run)",
        sources="experiments/results/wikicontradict_judge_real.json (labels: "
                "src/freshwiki/benchmarks/wikicontradict/validation/real_labels.jsonl)"))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
