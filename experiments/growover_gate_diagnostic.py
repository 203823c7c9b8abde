#!/usr/bin/env python
"""Where RiLM's certainty gate helps and where it fails: read from a finished ``ralm-best`` run.

Run from the repository root after ``growover_run.py`` (no model: it only reads the results
store, a few seconds)::

    .venv/bin/python experiments/growover_gate_diagnostic.py     # the newest ralm-best and rilm
    .venv/bin/python experiments/growover_gate_diagnostic.py RALM_BEST_RUN --rilm RILM_RUN

``ralm-best`` records, for every question, the gate's three probabilities for each of the k
retrieved documents (``trace.first.documents``), which document it picked and whether the
gate would have adopted the answer. The sample's metadata says which retrieved passages hold
the evidence, the question's type in this snapshot (New / Changed / Unchanged) and the
snapshot it was first written at (``generated_as``). From those this script measures:

- **ranking within a question**: over every (evidence document, other document) pair of one
  question's top k, how often the evidence document gets the higher P(reliable), the only
  thing Eq. 1 uses; a question-level bootstrap gives the interval;
- **the pick**: how often the gate's document holds the evidence, against the retriever's
  rank 1 on the same questions (the difference is what RaLM-best can gain over top-1);
- **the adopt decision**: how often the gate adopts, per type, against how often the picked
  document holds the evidence; adopt is meant to mean "this answer can be trusted";
- **what P(reliable) follows**: its mean over the evidence documents per type and per
  ``generated_as``, and how much of its variance lies between questions rather than between
  the documents of one question (a gate that judges the document varies within a question);
- **re-retrieval** (from a ``rilm`` run, ``arr=paper`` by default): of the answers the gate
  did not adopt, how many had the evidence in the first top k (which re-retrieval excludes, so
  it can only find another passage), how often the second search finds the evidence when the
  first missed it, and which answer the final pick took in each case.

Writes ``experiments/results/growover_gate_diagnostic.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _provenance import RESULTS, data_provenance, write_result
from freshwiki.config import load_settings
from freshwiki.corpus import read_source
from freshwiki.evaluation import ResultsStore, default_results_path
from freshwiki.stats import Interval, bootstrap_ci, wilson_ci

OUT = RESULTS / "growover_gate_diagnostic.json"
"""The result file the README's gate figures come from."""


def _rounded(ci: Interval | None) -> list[float] | None:
    return None if ci is None else [round(ci.low, 3), round(ci.high, 3)]


def _share(successes: int, trials: int) -> dict[str, Any]:
    return {"k": successes, "n": trials,
            "share": round(successes / trials, 3) if trials else None,
            "ci": _rounded(wilson_ci(successes, trials))}


def newest_run(store: ResultsStore, system: str, *, benchmark_options: Any = None,
               gate: str | None = None, arr: str | None = None) -> str:
    """The newest GrowOVER run of ``system`` in the store (the one growover_run.py made).

    ``benchmark_options``, ``gate`` and ``arr`` narrow it to the same questions, the same
    gate file and one re-retrieval mode.
    """
    runs = [r for r in store.list_runs()
            if r.info.system == system and r.info.benchmark == "growover"
            and benchmark_options in (None, r.info.config.get("benchmark_options"))
            and gate in (None, (r.info.config.get("system_config") or {}).get("gate"))
            and arr in (None, (r.info.config.get("system_config") or {}).get("arr", "paper"))]
    if not runs:
        raise SystemExit(f"no GrowOVER {system} run{f' with arr={arr}' if arr else ''} on "
                         "these questions in the results store: run "
                         "experiments/growover_run.py first, or pass the run id")
    return max(runs, key=lambda r: r.info.created_at).info.run_id


def rereading(traces: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """What re-retrieval could and did do for the answers the gate did not adopt."""
    not_adopted = in_first = found = 0
    outcome: dict[str, int] = defaultdict(int)
    for meta, trace in traces:
        if trace.get("adopted"):
            continue
        not_adopted += 1
        evidence = set(meta.get("evidence_passages") or [])
        first = {d["id"] for d in (trace.get("first") or {}).get("documents") or []}
        second = {d["id"] for d in (trace.get("second") or {}).get("documents") or []}
        had, has = bool(evidence & first), bool(evidence & second)
        in_first += had
        found += has and not had
        where = {(True, False): "first top k", (False, True): "second top k",
                 (True, True): "both", (False, False): "neither"}[had, has]
        outcome[f"evidence in {where}; final pick {trace.get('chosen')}"] += 1
    missed = not_adopted - in_first
    return {"not_adopted": not_adopted,
            "evidence_in_first_top_k": _share(in_first, not_adopted),
            "second_search_finds_evidence_first_missed": _share(found, missed),
            "final_pick_by_where_the_evidence_was": dict(sorted(outcome.items()))}


def diagnose(traces: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """The figures above from ``(metadata, trace)`` pairs of one ``ralm-best`` run."""
    pair_wins: list[float] = []          # one value per question: share of its pairs won
    pairs_won = pairs_total = 0
    pick_hit = rank1_hit = any_hit = 0
    picked_not_rank1 = 0
    adopt_by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # adopted, n, hit
    p_by_type: dict[str, list[float]] = defaultdict(list)
    p_by_origin: dict[str, list[float]] = defaultdict(list)
    p_by_type_origin: dict[str, list[float]] = defaultdict(list)
    question_means: list[float] = []
    within: list[float] = []
    for meta, trace in traces:
        first = trace.get("first") or {}
        docs = sorted(first.get("documents") or [], key=lambda d: d["rank"])
        if not docs:
            continue
        evidence = set(meta.get("evidence_passages") or [])
        reliable = [float(d["probabilities"]["reliable"]) for d in docs]
        hits = [d["id"] in evidence for d in docs]
        chosen = int(first.get("chosen", 1))
        picked_not_rank1 += chosen != 1
        type_ = str(meta.get("type"))
        counts = adopt_by_type[type_]
        counts[0] += bool(trace.get("adopted"))
        counts[1] += 1
        counts[2] += hits[chosen - 1]
        mean = statistics.fmean(reliable)
        question_means.append(mean)
        within.extend((p - mean) ** 2 for p in reliable)
        if any(hits):
            any_hit += 1
            pick_hit += hits[chosen - 1]
            rank1_hit += hits[0]
            origin = str(meta.get("generated_as"))
            for p, hit in zip(reliable, hits, strict=True):
                if hit:
                    p_by_type[type_].append(p)
                    p_by_origin[origin].append(p)
                    p_by_type_origin[f"{type_} / written as {origin}"].append(p)
        won = [1.0 if a > b else 0.5 if a == b else 0.0
               for a, h in zip(reliable, hits, strict=True) if h
               for b, g in zip(reliable, hits, strict=True) if not g]
        if won:
            pairs_won += int(sum(w == 1.0 for w in won))
            pairs_total += len(won)
            pair_wins.append(statistics.fmean(won))

    def means(groups: dict[str, list[float]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, values in sorted(groups.items()):
            out[key] = {"n": len(values), "mean_p_reliable": round(statistics.fmean(values), 3),
                        "ci": _rounded(bootstrap_ci(values) if len(values) > 1 else None)}
        return out

    between = float(np.var(question_means)) if question_means else 0.0
    return {
        "questions": len(traces),
        "ranking_within_question": {
            "questions": len(pair_wins), "pairs": pairs_total, "evidence_higher": pairs_won,
            "mean_per_question": round(statistics.fmean(pair_wins), 3) if pair_wins else None,
            "ci": _rounded(bootstrap_ci(pair_wins) if pair_wins else None),
            "note": "ties count one half in the per-question mean; chance is .5"},
        "pick": {"questions_with_evidence_in_top_k": any_hit,
                 "gate_pick_holds_evidence": _share(pick_hit, any_hit),
                 "retriever_rank1_holds_evidence": _share(rank1_hit, any_hit),
                 "pick_is_not_rank1": _share(picked_not_rank1, len(traces))},
        "adopt_by_type": {t: {"adopted": _share(a, n), "pick_holds_evidence": _share(h, n)}
                          for t, (a, n, h) in sorted(adopt_by_type.items())},
        "p_reliable_of_evidence_documents": {
            "by_type": means(p_by_type), "by_generated_as": means(p_by_origin),
            "by_type_and_generated_as": means(p_by_type_origin)},
        "variance_of_p_reliable": {
            "between_questions": round(between, 4),
            "within_question": round(statistics.fmean(within), 4) if within else None,
            "note": "between: variance of each question's mean over its k documents; within: "
                    "mean squared deviation of a document from its question's mean"},
    }


def gate_snapshot(out: Path, system_config: dict[str, Any]) -> str:
    """The snapshot the run's gate was trained on, from the gate file beside the sources.

    The run records the gate as ``NAME@HASH``; growover_run.py writes gates to its ``--out``
    folder, the parent of ``sources``.
    """
    name = str(system_config.get("gate", "")).split("@", 1)[0]
    path = out / name
    if not name or not path.is_file():
        raise SystemExit(f"gate file {path} not found: pass --sources OUT/sources of the "
                         "growover_run.py run whose gate this run used")
    training = json.loads(path.read_text(encoding="utf-8")).get("training") or {}
    return str(training.get("snapshot", "unknown"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_id", nargs="?", help="a GrowOVER ralm-best run (default: newest)")
    parser.add_argument("--rilm", help="a GrowOVER rilm run (default: the newest with arr=paper "
                        "on the ralm-best run's questions, with its gate)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--sources", type=Path, default=Path("/tmp/runs/growover/sources"),
                        help="growover_run.py's OUT/sources (its constructed.xml says which "
                             "articles have constructed histories)")
    args = parser.parse_args(argv)
    settings = load_settings({}).settings
    with ResultsStore(default_results_path(settings)) as store:
        run_id = (store.resolve_run_id(args.run_id) if args.run_id
                  else newest_run(store, "ralm-best"))
        info = store.run_info(run_id)
        if info.system != "ralm-best":
            raise SystemExit(f"run {run_id} is a {info.system!r} run; give a ralm-best run")
        traces = [(meta, trace) for _, _, meta, _, trace in store.traces(run_id)]
        rilm_id = store.resolve_run_id(args.rilm) if args.rilm else newest_run(
            store, "rilm", benchmark_options=info.config.get("benchmark_options"),
            gate=(info.config.get("system_config") or {}).get("gate"), arr="paper")
        rilm_info = store.run_info(rilm_id)
        if rilm_info.system != "rilm":
            raise SystemExit(f"run {rilm_id} is a {rilm_info.system!r} run; give a rilm run")
        rilm_traces = [(meta, trace) for _, _, meta, _, trace in store.traces(rilm_id)]
    result = {"run_id": run_id, "system": info.system,
              "system_config": info.config.get("system_config"),
              "benchmark_options": info.config.get("benchmark_options"),
              **diagnose(traces),
              "re_retrieval": {"run_id": rilm_id,
                               "system_config": rilm_info.config.get("system_config"),
                               **rereading(rilm_traces)}}
    trained_on = gate_snapshot(args.sources.parent, info.config.get("system_config") or {})
    result["gate_trained_on"] = trained_on
    constructed = args.sources / "constructed.xml"
    if not constructed.is_file():
        raise SystemExit(f"{constructed} not found: pass --sources, the OUT/sources folder of "
                         "the growover_run.py run that built the dataset")
    titles = {rev.page.title for rev in read_source(constructed)}
    real = sum(1 for meta, _ in traces if meta.get("title") not in titles)
    result["questions_real"] = real
    data = data_provenance(
        {"real": real / max(1, len(traces)), "constructed": 1 - real / max(1, len(traces))},
        sample=f"out of sample: the gate was trained on the {trained_on} snapshot's pairs, "
               "these are the questions of the snapshots after it",
        sources="growover_run.py's dataset (../shared/data/wikipedia histories and dump slice, "
                "topics leads, ovos summaries; CC BY-SA)")
    write_result(args.out, result, data=data, command=" ".join(sys.argv))
    print(json.dumps(result, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
