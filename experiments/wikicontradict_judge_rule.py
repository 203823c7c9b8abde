#!/usr/bin/env python
"""How well does the default-judge rule agree with people, scored without running a model?

Run from the repository root::

    .venv/bin/python experiments/wikicontradict_judge_rule.py [--real FILE.json] [--out FILE]

``wikicontradict_judge.py`` stored, for each of its 180 real labelled responses, the verdicts
of every judge model it asked (each with its spec) and of the matcher. A rule that picks one
of those judges for each producing model can therefore be scored from the file alone: this
script asks today's ``freshwiki.evaluation.default_judge`` which judge it would give a run of
each producer, with the three local models installed as on the validation machine (empty
stand-in files in a temporary folder, so the figure does not depend on this machine's models)
and the configured model left at the 1.5B, and looks up that judge's stored verdict. A
producer whose chosen judge never read its responses is reported as needing a model run
instead of being guessed.

Printed and written (``results/wikicontradict_judge_rule.json``): accuracy, macro F1 and
Cohen's kappa against the labels for the rule as measured (the rule in force when the file was
written), today's rule and the matcher, over all 180 responses, template 5 alone, and per
producing model. Decoding was greedy, so a stored verdict is what the same judge would say
again with the same prompt and weights; the file records the commit its verdicts came from.

Why this is not ``freshwiki runs agree``: the verdicts it scores are stored in
``wikicontradict_judge_real.json`` by ``wikicontradict_judge.py`` (which judges the labelled
answers outside the runner), not in a run, and the figure is of a rule that picks one of
several judges per producing model, which no single run holds. It becomes a caller once those
verdicts are runs (see ``wikicontradict_judge.py``).
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
from freshwiki.evaluation import default_judge
from freshwiki.llm import models
from wikicontradict_judge import short_row

RESULTS = Path(__file__).resolve().parent / "results"
REAL = RESULTS / "wikicontradict_judge_real.json"
OUT = RESULTS / "wikicontradict_judge_rule.json"
MEASURED = "wikicontradict-judge"
"""The scorer column holding the verdicts of the rule in force when the file was written."""
MATCHER = "wikicontradict-match"
CONFIGURED = "local:qwen2.5-coder-1.5b"


def _stored_verdict(item: dict[str, Any], judge: str) -> str | None:
    """The verdict ``judge`` gave ``item`` in the stored run, if it read it."""
    for key, spec in item.items():
        if key.endswith(" spec") and spec == judge:
            return str(item[key.removesuffix(" spec")])
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, default=REAL,
                        help="result file of wikicontradict_judge.py --set real")
    parser.add_argument("--out", type=Path, default=OUT, help="result file (%(default)s)")
    args = parser.parse_args(argv)
    stored = json.loads(args.real.read_text(encoding="utf-8"))
    items: list[dict[str, Any]] = stored["items"]

    with tempfile.TemporaryDirectory(prefix="fw-judge-rule-") as folder:
        for name in models.MODELS:
            (Path(folder) / models.MODELS[name].filename).write_bytes(b"")
        settings = dataclasses.replace(load_settings().settings, models_dir=Path(folder),
                                       model=CONFIGURED)
        choices = {m: default_judge(m, settings) for m in sorted({i["model"] for i in items})}

    rule: list[str | None] = [_stored_verdict(i, choices[i["model"]].spec) for i in items]
    missing = sorted({i["model"] for i, v in zip(items, rule, strict=True) if v is None})
    columns = {"rule as measured": [str(i[MEASURED]) for i in items],
               "matcher": [str(i[MATCHER]) for i in items]}
    if not missing:
        columns = {"rule today": [str(v) for v in rule], **columns}

    def table(idx: list[int]) -> dict[str, dict[str, Any]]:
        gold = [items[k]["human"] for k in idx]
        return {name: short_row(gold, [col[k] for k in idx]) for name, col in columns.items()}

    everything = list(range(len(items)))
    groups: dict[str, list[int]] = {"all": everything,
                                    "template 5": [k for k in everything
                                                   if items[k]["template"] == "5"]}
    for producer in choices:
        groups[f"producer {producer}"] = [k for k in everything if items[k]["model"] == producer]
    rows = {group: table(idx) for group, idx in groups.items()}

    for producer, choice in choices.items():
        was = {i[f"{MEASURED} spec"] for i in items if i["model"] == producer}
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
        "from": {"file": str(args.real.relative_to(RESULTS.parents[1])),
                 "commit": stored.get("commit"), "date": stored.get("date")},
        "installed": sorted(models.MODELS), "configured_model": CONFIGURED,
        "choices": {m: dataclasses.asdict(c) for m, c in choices.items()},
        "needs_model_run": missing, "rows": rows,
    }, data=data_provenance(
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
