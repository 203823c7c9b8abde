#!/usr/bin/env python
"""How well does the default-judge rule agree with people, scored without running a model?

Run from the repository root, after ``wikicontradict_judge.py --set real`` has stored its
replay runs in this machine's runs store (or they were imported with ``freshwiki runs
import``)::

    .venv/bin/python experiments/wikicontradict_judge_rule.py [--real FILE.json] [--out FILE]

``wikicontradict_judge.py`` replays each of its 180 real labelled responses through the runner
once per judge it asks (the ``replay`` system, one run per source run and judge) and lists
those runs in its result file (``runs``). A rule that picks one of those judges for each
producing model can therefore be scored from the runs alone: this script asks today's
``freshwiki.evaluation.default_judge`` which judge it would give a run of each producer, with
the three local models installed as on the validation machine (empty stand-in files in a
temporary folder, so the figure does not depend on this machine's models) and the configured
model left at the 1.5B, and takes, for each producer, the replay runs that judge scored. A
producer whose chosen judge never read its responses is reported as needing a model run
instead of being guessed.

Every figure is ``freshwiki runs agree`` (:func:`freshwiki.evaluation.agree_runs`, over the
chosen runs, each against the labels of its own answers): accuracy, macro F1 and Cohen's kappa
against the labels for the rule as measured (the judge rule in force when the runs were
judged), today's rule and the matcher, over all 180 responses, template 5 alone, and per
producing model. Printed and written to ``results/wikicontradict_judge_rule.json``, whose
``runs`` key names the runs each column read. Decoding was greedy, so a stored verdict is what
the same judge would say again with the same prompt and weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from _provenance import data_provenance, write_result
from freshwiki.config import load_settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation import ResultsStore, RunResults, default_judge, default_results_path
from freshwiki.llm import models
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, default=REAL,
                        help="result file of wikicontradict_judge.py --set real")
    parser.add_argument("--out", type=Path, default=OUT, help="result file (%(default)s)")
    args = parser.parse_args(argv)
    stored = json.loads(args.real.read_text(encoding="utf-8"))
    if "runs" not in stored:
        raise FreshwikiError(
            f"{args.real} names no replay runs (it was written before the judges ran through "
            "the runner)",
            hint="run experiments/wikicontradict_judge.py --set real first.")
    labels_path = ROOT / stored["labels_file"]
    items = read_labelled(labels_path, by_run=True)

    with ResultsStore(default_results_path(load_settings().settings)) as store:
        runs: dict[str, RunResults] = {
            run_id: store.load_run(run_id)
            for by_group in stored["runs"].values() for run_id in by_group.values()}
    measured = {g: runs[r] for g, r in stored["runs"][JUDGE].items()}

    with tempfile.TemporaryDirectory(prefix="fw-judge-rule-") as folder:
        for name in models.MODELS:
            (Path(folder) / models.MODELS[name].filename).write_bytes(b"")
        settings = dataclasses.replace(load_settings().settings, models_dir=Path(folder),
                                       model=CONFIGURED)
        choices = {m: default_judge(m, settings) for m in sorted({i.model for i in items})}

    def judged_by(spec: str, group: str) -> RunResults | None:
        """The replay run of ``group``'s answers that judge ``spec`` scored, if any."""
        for by_group in stored["runs"].values():
            run = runs.get(by_group.get(group, ""))
            if run is not None and run.info.config.get("judge_spec") == spec:
                return run
        return None

    producer_of = {i.group: i.model for i in items}
    today = {g: judged_by(choices[m].spec, g) for g, m in producer_of.items()}
    missing = sorted({producer_of[g] for g, run in today.items() if run is None})
    columns = {"rule as measured": Column(JUDGE, measured), "matcher": Column(MATCH, measured)}
    if not missing:
        columns = {"rule today": Column(JUDGE, {g: r for g, r in today.items()
                                                if r is not None}), **columns}

    def table(chosen: list[Labelled]) -> dict[str, dict[str, Any]]:
        return {name: short_row(measure(col, chosen, labels_path))
                for name, col in columns.items()}

    groups: dict[str, list[Labelled]] = {"all": items,
                                         "template 5": [i for i in items if i.row.template == "5"]}
    for producer in choices:
        groups[f"producer {producer}"] = [i for i in items if i.model == producer]
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

    path = write_result(args.out, {
        "from": {"file": str(args.real.resolve().relative_to(ROOT))
                 if args.real.resolve().is_relative_to(ROOT) else str(args.real),
                 "commit": stored.get("commit"), "date": stored.get("date")},
        "installed": sorted(models.MODELS), "configured_model": CONFIGURED,
        "choices": {m: dataclasses.asdict(c) for m, c in choices.items()},
        "needs_model_run": missing, "rows": rows,
        "runs": {name: {g: r.info.run_id for g, r in col.runs.items()}
                 for name, col in columns.items()},
    }, data=data_provenance(
        {"real": 1.0},
        sample="out of sample: the same 180 labelled real responses and the judges' stored "
               "verdicts as wikicontradict_judge_real.json; the new rule was chosen after "
               "seeing those figures, so its agreement here is the figure that chose it, not "
               "a fresh test of it",
        figure="measured (recomputed from stored runs; no model was run)",
        sources="the replay runs listed in experiments/results/wikicontradict_judge_real.json "
                "(labels: src/freshwiki/benchmarks/wikicontradict/validation/real_labels.jsonl)"))
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
