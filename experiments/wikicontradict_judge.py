#!/usr/bin/env python
"""How well do the WikiContradict scorers agree with human labels?

Run from the repository root::

    .venv/bin/python experiments/wikicontradict_judge.py [--set real|handwritten|both]
        [--judge local:qwen2.5-coder-1.5b] [--real-judge default|SPEC]
        [--also-judge local:qwen2.5-coder-1.5b|none] [--labels FILE.jsonl] [--dataset PATH]
        [--out results.json] [--real-out results.json] [--show-errors] [--threads 1]

Two labelled sets, each written to its own result file because they rest on different data:

* ``real`` (``validation/real_labels.jsonl``): responses the three local models produced in
  real ``freshwiki eval wikicontradict`` runs (systems vanilla and rag, templates 1, 4, 5),
  each labelled C / PC / IC by reading it against the question, passages and gold answers
  under the paper's rules, before either scorer had seen it. Each response is judged by the
  model the runner would choose by default for a run of the model that produced it
  (``freshwiki.evaluation.default_judge`` with the models installed on the machine), unless
  ``--real-judge`` names one judge for all. A second judge (``--also-judge``, by default the
  1.5B) then reads every response, its own included, so the two judge models can be told
  apart from the rule that pairs them with producers. Result:
  ``results/wikicontradict_judge_real.json``. The committed result was measured under the
  earlier rule (never the producer itself: the 0.5B judged the 1.5B); the rule that replaced
  it is scored from that file's verdicts, without a model, by
  ``wikicontradict_judge_rule.py``.
* ``handwritten`` (``validation/human_labels.jsonl``, or ``--labels FILE``): the 40 responses a
  person wrote and labelled (templates 4 and 5), judged by ``--judge``. Result:
  ``results/wikicontradict_judge.json``.

Both scorers (the LLM judge ``wikicontradict-judge`` and the deterministic
``wikicontradict-match``) label every response exactly as a run would: the sample is rendered
with its template into a ``Task`` and the response becomes an ``Output``. Printed per scorer,
as the paper's Table 3 lays out its judge's validation: accuracy, macro F1 and precision /
recall / F1 of each class (Wilson 95 % intervals in the result file), plus Cohen's kappa and
the confusion matrix; for the real set also per template (template 5 alone is what the paper
validated its judge on), producing model, system, explicit / implicit contradiction and judge,
and the label shares per producing model (as the paper's Table 4 sets human against judge).

The judges run with a temporary ``FRESHWIKI_HOME`` and no response cache, so every call is a
real generation, one judge model loaded at a time. Nothing is asserted: the script reports.

Why this is not ``freshwiki runs agree``: that command compares the verdicts a run stored with
labels, and these verdicts are in no run. The handwritten set's responses were written by a
person, not produced by a system; the real set's responses come from several runs (their ids
are in the labels file, in a store that is not in the repository) and are each judged here by
a judge chosen per producing model, plus a second judge, none of them the run's own. The
labels files are already in the ``runs agree`` format (``sample_id``, ``template``, ``label``,
``response``, ``labeller``), so for a run that holds those answers ``freshwiki runs agree RUN
--labels validation/real_labels.jsonl --scorer wikicontradict-judge`` gives that run's judge's
figures. Making this script a caller needs the answers as a run: a system that replays the
labelled responses, so that the runner stores them and scores them with the chosen judge.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
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
    agreement_report,
    builtin_human_labels,
    builtin_real_labels,
    load_human_labels,
)
from freshwiki.config import Settings, load_settings
from freshwiki.errors import FreshwikiError

# The runner's own default-judge rule rather than a copy of it, so the figures follow the rule
# the code applies.
from freshwiki.evaluation import default_judge
from freshwiki.llm import open_llm

RESULTS = Path(__file__).resolve().parent / "results"
HANDWRITTEN_PATH = RESULTS / "wikicontradict_judge.json"
REAL_PATH = RESULTS / "wikicontradict_judge_real.json"

PAPER_PER_CLASS: dict[str, dict[str, float]] = {
    "correct": {"precision": 0.726, "recall": 0.900, "f1": 0.804},
    "partially_correct": {"precision": 0.961, "recall": 0.876, "f1": 0.917},
    "incorrect": {"precision": 0.478, "recall": 0.550, "f1": 0.512},
}
PAPER: dict[str, Any] = {
    "judge": "Llama-3-70B-instruct (WikiContradictEval, few-shot, asked for the label)",
    "data": "240 real responses of 5 LLMs to template 5 (WikiContradict_HumanEval), labelled "
            "by two of the paper's authors, disagreements resolved",
    "accuracy": 0.854, "macro_f1": 0.744, "per_class": PAPER_PER_CLASS,
}
"""The paper's Table 3 row for its best open judge (section 5)."""

SHORT = {"correct": "C", "partially_correct": "PC", "incorrect": "IC"}


Memo = dict[tuple[str, str, str, str], tuple[str, str]]
"""(judge spec, sample id, template, response) -> (label, explanation), within one run."""


async def _judge_all(bench: WikiContradict, labels: Sequence[HumanLabel],
                     judge_of: Callable[[HumanLabel], str], settings: Settings, memo: Memo,
                     ) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """Judge labels and explanations in ``labels`` order, one judge model loaded at a time.

    A response this run has already put to the same judge is not asked again: decoding is
    greedy, so the second call would only repeat the first.
    """
    predicted = [""] * len(labels)
    why = [""] * len(labels)
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(labels):
        key = (judge_of(item), item.sample_id, item.template, item.response)
        if key in memo:
            predicted[i], why[i] = memo[key]
        else:
            groups.setdefault(judge_of(item), []).append(i)
    calls: list[dict[str, Any]] = []
    for spec, indexes in groups.items():
        judge = open_llm(spec, settings=settings, cache=False)
        since = time.time()  # the call log is shared by every judge of the run
        started = time.perf_counter()
        try:
            scorer = JudgeScorer(judge)
            for i in indexes:
                predicted[i], why[i] = await _score(scorer, bench, labels[i])
                item = labels[i]
                memo[(spec, item.sample_id, item.template, item.response)] = (
                    predicted[i], why[i])
        finally:
            await judge.aclose()
        seconds = time.perf_counter() - started
        for row in judge.call_log.summary(since=since) if judge.call_log else []:
            calls.append({"judge": spec, "model_id": judge.backend.model_id,
                          "responses": len(indexes), "seconds": seconds, "calls": row.calls,
                          "prompt_tokens": row.prompt_tokens,
                          "cached_prompt_tokens": row.cached_prompt_tokens,
                          "completion_tokens": row.completion_tokens,
                          "mean_latency_s": row.mean_latency_s})
    return predicted, why, calls


async def _score(scorer: Scorer, bench: WikiContradict, item: HumanLabel) -> tuple[str, str]:
    samples = _samples(bench)
    if item.sample_id not in samples:
        raise FreshwikiError(
            f"human label for unknown sample {item.sample_id!r}",
            hint="the labels file must name samples of the WikiContradict dataset.",
        )
    task = bench.render(samples[item.sample_id], item.template)
    score = await scorer.score(task, Output(text=item.response))
    return score.label or "", score.explanation


_SAMPLES: dict[int, dict[str, Any]] = {}


def _samples(bench: WikiContradict) -> dict[str, Any]:
    if id(bench) not in _SAMPLES:
        _SAMPLES[id(bench)] = {s.id: s for s in bench.samples()}
    return _SAMPLES[id(bench)]


def short_row(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Accuracy, kappa, macro-F1 and the 'correct' class's P/R/F1 of one scorer."""
    report = agreement_report(gold, predicted)
    correct = report.per_class["correct"]
    return {"n": report.n, "accuracy": report.accuracy, "kappa": report.kappa,
            "macro_f1": report.macro_f1, "correct_precision": correct.precision,
            "correct_recall": correct.recall, "correct_f1": correct.f1}


def _by(key: Callable[[HumanLabel], str], labels: Sequence[HumanLabel], gold: list[str],
        predicted: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """``{group: {scorer: short row}}`` for every value of ``key``."""
    out: dict[str, dict[str, Any]] = {}
    for value in sorted({key(h) for h in labels}):
        idx = [i for i, h in enumerate(labels) if key(h) == value]
        out[value] = {name: short_row([gold[i] for i in idx], [p[i] for i in idx])
                      for name, p in predicted.items()}
    return out


def _shares(labels: Sequence[HumanLabel], gold: list[str], predicted: dict[str, list[str]],
            key: Callable[[HumanLabel], str]) -> dict[str, dict[str, dict[str, float]]]:
    """Per group, the share of each class by human and by each scorer (the paper's Table 4)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    columns = {"human": gold, **predicted}
    for value in sorted({key(h) for h in labels}):
        idx = [i for i, h in enumerate(labels) if key(h) == value]
        out[value] = {name: {lab: sum(col[i] == lab for i in idx) / len(idx) for lab in LABELS}
                      for name, col in columns.items()}
    return out


def _print_report(name: str, gold: list[str], predicted: list[str]) -> None:
    r = agreement_report(gold, predicted)
    cells = "  ".join(f"{SHORT[lab]} {s.precision:.3f}/{s.recall:.3f}/{s.f1:.3f}"
                      for lab, s in r.per_class.items() if lab in SHORT)
    print(f"  {name:<30} n={r.n:<4} acc {r.accuracy:.3f}  macro-F {r.macro_f1:.3f}  "
          f"kappa {r.kappa:.3f}  (P/R/F) {cells}")
    names = [lab for lab in r.confusion if lab in SHORT]
    print("      human \\ scorer " + "".join(f"{SHORT[n]:>5}" for n in names))
    for g in names:
        print(f"      {SHORT[g]:>14} " + "".join(f"{r.confusion[g][p]:>5}" for p in names))


def _print_paper() -> None:
    cells = "  ".join(f"{SHORT[lab]} {v['precision']:.3f}/{v['recall']:.3f}/{v['f1']:.3f}"
                      for lab, v in PAPER_PER_CLASS.items())
    print(f"  {'paper, Llama-3-70B':<30} n=240  acc {PAPER['accuracy']:.3f}  macro-F "
          f"{PAPER['macro_f1']:.3f}  (template 5 only)  (P/R/F) {cells}")


async def _evaluate(bench: WikiContradict, labels: list[HumanLabel],
                    judges: dict[str, Callable[[HumanLabel], str]], settings: Settings,
                    show_errors: bool) -> dict[str, Any]:
    """Score ``labels`` with every judge rule and with the matcher.

    ``judges`` maps a scorer name to the judge model of each response; the first rule is the
    one the breakdown by judge shows.
    """
    gold = [h.label for h in labels]
    predicted: dict[str, list[str]] = {}
    explanations: dict[str, list[str]] = {}
    calls: list[dict[str, Any]] = []
    memo: Memo = {}
    for name, judge_of in judges.items():
        predicted[name], explanations[name], new_calls = await _judge_all(
            bench, labels, judge_of, settings, memo)
        calls.extend({"scorer": name, **c} for c in new_calls)
    matcher = MatchScorer()
    predicted[matcher.name], explanations[matcher.name] = [], []
    for item in labels:
        label, why = await _score(matcher, bench, item)
        predicted[matcher.name].append(label)
        explanations[matcher.name].append(why)
    if show_errors:
        for name, labs in predicted.items():
            for item, p, w in zip(labels, labs, explanations[name], strict=True):
                if p != item.label:
                    print(f"  [{name}] {item.sample_id} t{item.template} {item.model}: human "
                          f"{item.label} ({item.reason}), scorer {p} -- {w}")
    items = [{"sample_id": h.sample_id, "template": h.template, "model": h.model,
              "system": h.system, "run_id": h.run_id, "human": h.label,
              **{f"{name} spec": judge_of(h) for name, judge_of in judges.items()},
              **{name: predicted[name][i] for name in predicted},
              **{f"{name} explanation": explanations[name][i] for name in predicted}}
             for i, h in enumerate(labels)]
    first_name, first_rule = next(iter(judges.items()))
    return {
        "n": len(labels),
        "label_counts": {lab: gold.count(lab) for lab in LABELS},
        "scorers": {name: agreement_report(gold, p).to_json() for name, p in predicted.items()},
        "judge_calls": calls,
        "by_template": _by(lambda h: h.template, labels, gold, predicted),
        "by_model": _by(lambda h: h.model or "(hand-written)", labels, gold, predicted),
        "by_system": _by(lambda h: h.system or "(hand-written)", labels, gold, predicted),
        "by_contradiction": _by(_contradiction(bench), labels, gold, predicted),
        "by_judge": _by(first_rule, labels, gold, {first_name: predicted[first_name]}),
        "shares_by_model": _shares(labels, gold, predicted,
                                   lambda h: h.model or "(hand-written)"),
        "shares_by_template": _shares(labels, gold, predicted, lambda h: h.template),
        "items": items,
        "_gold": gold, "_predicted": predicted,
    }


def _contradiction(bench: WikiContradict) -> Callable[[HumanLabel], str]:
    samples = _samples(bench)
    return lambda h: str(samples[h.sample_id].metadata["contradiction"])


def _print_set(title: str, labels: list[HumanLabel], result: dict[str, Any]) -> None:
    gold, predicted = result.pop("_gold"), result.pop("_predicted")
    print(f"\n== {title}: {result['n']} responses {result['label_counts']}")
    for name, p in predicted.items():
        _print_report(name, gold, p)
    _print_paper()
    for template in sorted({h.template for h in labels}):
        idx = [i for i, h in enumerate(labels) if h.template == template]
        print(f"  template {template}:")
        for name, p in predicted.items():
            _print_report(name, [gold[i] for i in idx], [p[i] for i in idx])
    for group in ("by_model", "by_system", "by_contradiction", "by_judge"):
        for value, rows in result[group].items():
            for name, row in rows.items():
                print(f"  {group[3:]:<13} {value:<28} {name:<30} n={row['n']:<4} "
                      f"acc {row['accuracy']:.3f} kappa {row['kappa']:.3f} "
                      f"C-F1 {row['correct_f1']:.3f}")
    for value, cols in result["shares_by_model"].items():
        shown = "  ".join(f"{col}: " + "/".join(f"{100 * v:.0f}" for v in shares.values())
                          for col, shares in cols.items())
        print(f"  shares C/PC/IC % {value:<28} {shown}")
    for call in result["judge_calls"]:
        print(f"  {call['scorer']} {call['judge']}: {call['responses']} responses in "
              f"{call['seconds']:.0f} s, prompt tokens {call['prompt_tokens']} "
              f"({call['cached_prompt_tokens']} from the KV cache), completion "
              f"{call['completion_tokens']}")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("real", "handwritten", "both"), default="both",
                        dest="which", help="which labelled set(s) to score (default: both)")
    parser.add_argument("--judge", default="local:qwen2.5-coder-1.5b",
                        help="judge model spec for the hand-written set")
    parser.add_argument("--real-judge", default="default",
                        help="judge for the real set: 'default' (per response, the runner's "
                        "default judge for the producing model) or a model spec")
    parser.add_argument("--also-judge", default="local:qwen2.5-coder-1.5b",
                        help="a second judge for every real response, the producer's own "
                        "answers included (default: %(default)s; 'none' to skip)")
    parser.add_argument("--labels", type=Path, action="append",
                        help="labels JSONL replacing the hand-written set (default: built-in; "
                        "repeat to pool several files)")
    parser.add_argument("--items", default=None,
                        help="with --labels: keep only WikiContradict items LO-HI (by the "
                        "number in wc-NNN-qM), e.g. 0-20 for a development half and 21-41 "
                        "for the half held out")
    parser.add_argument("--sample", default=None,
                        help="with --labels: what the result file says about in / out of "
                        "sample (default: 'as the labels file says')")
    parser.add_argument("--dataset", type=Path,
                        default=load_settings().settings.data_dir / DATASET_FILE)
    parser.add_argument("--out", type=Path, default=HANDWRITTEN_PATH,
                        help="result file of the hand-written set (default: %(default)s)")
    parser.add_argument("--real-out", type=Path, default=REAL_PATH,
                        help="result file of the real set (default: %(default)s)")
    parser.add_argument(
        "--threads", type=int, help="llama.cpp threads (1 is far faster on a busy machine)"
    )
    parser.add_argument("--show-errors", action="store_true", help="print each disagreement")
    args = parser.parse_args(argv)

    bench = WikiContradict.from_file(args.dataset)
    home = tempfile.mkdtemp(prefix="fw-wcjudge-")
    os.environ["FRESHWIKI_HOME"] = home
    overrides = {"n_threads": args.threads} if args.threads else {}
    settings = load_settings(overrides).settings

    if args.which in ("real", "both"):
        real = builtin_real_labels()

        def real_judge(item: HumanLabel) -> str:
            if args.real_judge != "default":
                return str(args.real_judge)
            return default_judge(item.model, settings).spec

        judges: dict[str, Callable[[HumanLabel], str]] = {"wikicontradict-judge": real_judge}
        if args.also_judge != "none":
            judges[f"wikicontradict-judge [{args.also_judge} for all]"] = (
                lambda _h: str(args.also_judge))
        result = await _evaluate(bench, real, judges, settings, args.show_errors)
        _print_set("real responses", real, result)
        models = sorted({h.model for h in real})
        self_judged = {name: sum(rule(h) == h.model for h in real)
                       for name, rule in judges.items()}
        path = write_result(args.real_out, {
            "labels_file": "src/freshwiki/benchmarks/wikicontradict/validation/real_labels.jsonl",
            "judge_rule": "default" if args.real_judge == "default" else args.real_judge,
            "also_judge": args.also_judge,
            "self_judged": self_judged, "producers": models, "paper": PAPER, **result,
        }, data=data_provenance(
            {"real": 1.0},
            sample="out of sample. The responses are real outputs of the three local models "
                   "on 62 questions chosen by seed (benchmark options sample=9, seed=1..6 for "
                   "templates 1, 4, 5; seeds 7 and 8 for more 1.5B template-5 answers), "
                   "labelled by reading before either scorer ran on them. The matcher's rules "
                   "were last changed before (commit 4409457); the judge's examples were last "
                   "changed after (commit 4ba9005), chosen on WikiContradict items 0-20 of "
                   "another run's template 2/3 and 5.2-5.4 answers, without looking at these "
                   "labels or this set's verdicts. The matcher's rules rest on other data: the "
                   "40 hand-written "
                   "responses (validation/human_labels.jsonl) and the hand-written cases of "
                   "tests/benchmarks/test_wikicontradict_match.py; the judge's prompt examples "
                   "are invented. Neither was tuned on these responses. The labeller belongs "
                   "to the team that wrote both scorers, so the labels are not independent of "
                   "its reading of the paper's rules",
            figure="measured",
            sources="responses from `freshwiki eval wikicontradict` runs (run ids per item; "
                    "../shared/data/wikicontradict/wikicontradict.json, MIT), labels and "
                    "one-line reasons in validation/real_labels.jsonl",
            labelled_by="one reader (an AI assistant, Claude), by reading each response "
                        "against its question, passages and gold answers; no second labeller",
            responses=len(real)))
        print(f"results: {path}")

    if args.which in ("handwritten", "both"):
        hand = ([h for path in args.labels for h in load_human_labels(path)] if args.labels
                else builtin_human_labels())
        if args.items:
            low, high = (int(x) for x in args.items.split("-"))
            hand = [h for h in hand if low <= int(h.sample_id.split("-")[1]) <= high]
        result = await _evaluate(bench, hand,
                                 {"wikicontradict-judge": lambda _h: str(args.judge)},
                                 settings, args.show_errors)
        named = ", ".join(str(p) for p in args.labels or [])
        _print_set("hand-written responses" if args.labels is None else named, hand, result)
        builtin = args.labels is None
        path = write_result(args.out, {
            "judge": args.judge, "labels_file": named or "built-in",
            "items": args.items or "all", "paper": PAPER, **result,
        }, data=data_provenance(
            {"constructed": 1.0} if builtin else {"real": 1.0},
            sample="the matcher's rules and the 40 responses were written by the same person, "
                   "so the matcher's figure is in sample; the judge has no trained part"
            if builtin else (args.sample or "as the labels file says"),
            figure="measured",
            sources="40 responses written by hand (not model outputs) to WikiContradict "
                    "questions, templates 4 and 5, labelled by hand" if builtin
            else f"responses and labels from {named}"))
        print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
