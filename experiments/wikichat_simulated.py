#!/usr/bin/env python
r"""WikiChat's Table 1 for freshwiki's systems: simulated conversations by topic kind.

Run from the repository root (resumable: the eval set's runs live in the home's results
store, so the same command continues where it stopped)::

    .venv/bin/python experiments/wikichat_simulated.py [--limit N]

The paper (Semnani et al., 2023) has a simulated user talk with each chatbot about 20 head,
20 tail and 20 recent topics and reports, per topic kind, the share of the chatbots' claims
that Wikipedia supports (Table 1, crowdworkers deciding) and 1-5 ratings of relevance,
informativeness, naturalness and non-repetition, plus a temporal-correctness share. This
script runs ``experiments/evalsets/wikichat_simulated.toml`` (four systems: vanilla, rag, the
grounded chat's default mode and its ``wikichat`` mode) and tabulates the same cells:

- **factuality**: supported claims / all claims of the kind's conversations (micro, as the
  paper), with a 95 % bootstrap interval that resamples conversations (claims of one
  conversation are not independent);
- **conversationality**: the judge's mean 1-5 rating per dimension and the temporally correct
  share, each with a bootstrap interval over conversations.

The judge is the eval set's (the strongest installed model). Its factuality verdicts are
checked against claims read by hand with ``wikichat_factuality_check.py``; this result names
that check and how many claims it rests on, and calls the factuality figures unvalidated until
it reaches 100. The conversationality judge is checked the paper's way (two readers rate
turns under the judge's rubric; ``wikichat_conversationality_check.py``); this result carries
that check's kappas and the readers' means, and says whether the judge's ratings can be read.

``--only LABEL`` (repeatable) tabulates only those runs of the eval set, e.g. the finished ones
while another is still being run by another process. ``--limit N`` takes the first N topics
of the eval set (interleaved head, tail, recent): the same runs, so a later, larger limit
continues them. Result:
``experiments/results/wikichat_simulated.json``. Text from Wikipedia, CC BY-SA 4.0.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from _evalset_filter import only_runs
from _provenance import data_provenance, write_result
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, default_results_path, read_eval_set, run_eval_set
from freshwiki.stats import bootstrap_ci, ratio_bootstrap_ci

ROOT = Path(__file__).resolve().parents[1]
EVALSET = ROOT / "experiments" / "evalsets" / "wikichat_simulated.toml"
RESULT = ROOT / "experiments" / "results" / "wikichat_simulated.json"
CHECK = ROOT / "experiments" / "results" / "wikichat_factuality_check.json"
CONVERSATIONALITY_CHECK = (ROOT / "experiments" / "results"
                           / "wikichat_conversationality_check.json")
RATINGS = ("relevant", "informational", "natural", "non_repetitive")
KINDS = ("head", "tail", "recent")
VALIDATION_MIN = 100
"""Claims read by hand before the factuality figures are quoted (issue 35)."""
TURNS_MIN = 50
"""Turns rated by hand before the conversationality ratings are quoted (issue 35; the
paper's own check of its judge used 50)."""
KAPPA_MIN = 0.4
"""The judge's kappa with every reader, on every dimension, for its ratings to count as
agreeing with people ("moderate" agreement; the paper's GPT-4 judge had .11-.67 with its
two authors, its authors .28-.61 with each other)."""
err = Console(stderr=True)


def factuality_cell(items: Sequence[Any]) -> dict[str, Any]:
    """Micro factuality of ``items`` (chat-factuality scores, one per conversation)."""
    supported = [float(i.data.get("supported", 0)) for i in items]
    claims = [float(i.data.get("claims", 0)) for i in items]
    total = sum(claims)
    cell: dict[str, Any] = {"conversations": len(items), "claims": int(total),
                            "supported": int(sum(supported)),
                            "no_claims": sum(1 for c in claims if c == 0)}
    if total:
        cell["factuality"] = sum(supported) / total
        # Conversations without claims add nothing to either sum; left out of the resampling
        # so that no resample is all of them (0 / 0).
        with_claims = [(s, c) for s, c in zip(supported, claims, strict=True) if c]
        low, high = ratio_bootstrap_ci([s for s, _ in with_claims], [c for _, c in with_claims])
        cell["ci"] = [low, high]
    return cell


def rating_cell(items: Sequence[Any], dimension: str) -> dict[str, Any]:
    """Mean 1-5 rating (or the temporally correct share) over conversations."""
    if dimension == "temporally_correct":
        values = [float(i.value) for i in items]
    else:
        values = [float(i.data["mean_1_to_5"]) for i in items]
    if not values:
        return {"conversations": 0}
    ci = bootstrap_ci(values)
    return {"conversations": len(values), "mean": sum(values) / len(values),
            "ci": [ci.low, ci.high] if ci else None}


def tabulate(run: Any) -> dict[str, Any]:
    """Per topic kind and overall: factuality and the conversationality dimensions."""
    by_scorer: dict[str, list[Any]] = {}
    for item in run.items:
        by_scorer.setdefault(item.scorer, []).append(item)
    table: dict[str, Any] = {}
    for kind in (*KINDS, "all"):
        def pick(name: str, kind: str = kind) -> list[Any]:
            return [i for i in by_scorer.get(name, [])
                    if kind == "all" or i.metadata.get("category") == kind]
        cell = {"factuality": factuality_cell(pick("chat-factuality"))}
        for dimension in (*RATINGS, "temporally_correct"):
            cell[dimension] = rating_cell(pick("chat-" + dimension.replace("_", "-")),
                                          dimension)
        table[kind] = cell
    return table


def topic_evidence(store: ResultsStore, run_id: str) -> dict[str, Any]:
    """How much of each topic's own article the chat found: distinct passages, characters.

    Read from the grounded run's traces (every passage retrieved in any turn of the topic's
    conversation whose title is the topic). The paper's WikiChat retrieves from all of
    Wikipedia; here the corpus holds what ``../shared`` has of each topic, so this says how
    much there was to say before the chat could only repeat itself or refuse.
    """
    passages: dict[str, dict[str, int]] = {}
    for sample_id, _template, _metadata, _text, trace in store.traces(run_id, key="chat"):
        topic = sample_id.split("/", 1)[1]
        seen = passages.setdefault(topic, {})
        for turn in (trace or {}).get("turns", []):
            for p in turn.get("trace", {}).get("chat", {}).get("passages", []):
                if p.get("title") == topic:
                    seen[p["passage_id"]] = len(p.get("text", ""))
    counts = [len(v) for v in passages.values()]
    chars = [sum(v.values()) for v in passages.values()]
    if not counts:
        return {}
    return {"topics": len(counts), "passages_mean": sum(counts) / len(counts),
            "passages_max": max(counts), "topics_with_one_passage_or_none":
            sum(c <= 1 for c in counts), "characters_mean": sum(chars) / len(chars),
            "characters_max": max(chars)}


def goals(tables: dict[str, dict[str, Any]], grounded: str, rag: str) -> dict[str, Any]:
    """Issue 35's goals: grounded factuality >= rag's per kind; ratings within .5 of rag's."""
    out: dict[str, Any] = {}
    if grounded not in tables or rag not in tables:
        return out
    for kind in (*KINDS, "all"):
        g, r = tables[grounded][kind], tables[rag][kind]
        gf, rf = g["factuality"].get("factuality"), r["factuality"].get("factuality")
        entry: dict[str, Any] = {"factuality_grounded": gf, "factuality_rag": rf,
                                 "factuality_met": None if gf is None or rf is None
                                 else gf >= rf}
        for dimension in RATINGS:
            gm, rm = g[dimension].get("mean"), r[dimension].get("mean")
            entry[f"{dimension}_gap"] = None if gm is None or rm is None else gm - rm
            entry[f"{dimension}_met"] = None if gm is None or rm is None else gm >= rm - 0.5
        out[kind] = entry
    return out


def validation_status() -> dict[str, Any]:
    """How many claims the factuality judge was checked on, from the check's result file."""
    if not CHECK.is_file():
        return {"claims_read": 0, "status": "unvalidated (no claims read by hand yet)"}
    check = json.loads(CHECK.read_text(encoding="utf-8"))
    binary = check.get("binary", {})
    n = int(binary.get("n", 0))
    precision = (binary.get("supports") or {}).get("precision")
    kappa = binary.get("kappa")
    if n < VALIDATION_MIN:
        status = f"unvalidated ({n} claims read by hand, fewer than {VALIDATION_MIN})"
    elif precision is None or kappa is None:
        status = f"checked on {n} claims read by hand"
    else:
        # Checked is not the same as right: the status says how far the figure can be read.
        status = (f"checked on {n} claims read by hand: kappa {kappa:.2f}; of the claims it "
                  f"calls supported, {precision:.0%} are"
                  + (", so its factuality figures overstate support" if precision < 0.8
                     else ""))
    return {"claims_read": n, "status": status, "accuracy": binary.get("accuracy"),
            "kappa": binary.get("kappa"), "supports": binary.get("supports"),
            "file": str(CHECK.relative_to(ROOT)), "commit": check.get("commit")}


def conversationality_status(readers: Path | None = None) -> dict[str, Any]:
    """What the check against turns rated by hand says of the conversationality judge.

    ``agrees`` needs at least :data:`TURNS_MIN` turns and the judge's kappa with each reader
    at least :data:`KAPPA_MIN` on every dimension. The readers' own means per system are
    carried over: where the judge does not agree, they are the ratings to read (for the turns
    they rated). ``readers``: the check whose means are carried, when it is not the judge's
    check (the turns of the runs in the table, read after a change of the chat).
    """
    if not CONVERSATIONALITY_CHECK.is_file():
        return {"turns_rated": 0, "status": "unvalidated (no turns rated by hand yet)"}
    check = json.loads(CONVERSATIONALITY_CHECK.read_text(encoding="utf-8"))
    means = check if readers is None else json.loads(readers.read_text(encoding="utf-8"))
    with_judge = {pair: cell for pair, cell in check.get("pairs", {}).items()
                  if pair.endswith("~ judge")}
    n = min((cell[RATINGS[0]]["n"] for cell in with_judge.values()), default=0)
    kappas = {pair: {d: cell[d]["kappa"] for d in RATINGS} for pair, cell in with_judge.items()}
    lowest = min((k if k is not None else -1.0 for cell in kappas.values()
                  for k in cell.values()), default=None)
    if n < TURNS_MIN:
        status = f"unvalidated ({n} turns rated by hand, fewer than {TURNS_MIN})"
    elif lowest is not None and lowest >= KAPPA_MIN:
        status = f"agrees with the readers (kappa >= {KAPPA_MIN} on every dimension, {n} turns)"
    else:
        status = (f"disagrees with the readers ({n} turns; lowest kappa {lowest:.2f}, below "
                  f"{KAPPA_MIN}): its ratings are not evidence; read the readers' means")
    return {"turns_rated": n, "status": status, "kappa_with_readers": kappas,
            "readers_by_system": {
                system: {rater: {d: cell[d]["mean"] for d in RATINGS}
                         for rater, cell in row.items() if rater not in ("turns", "judge")}
                | {"turns": row["turns"]}
                for system, row in means.get("by_system", {}).items()},
            "readers_runs": means.get("runs"),
            "file": str(CONVERSATIONALITY_CHECK.relative_to(ROOT)),
            "readers_file": str((readers or CONVERSATIONALITY_CHECK).resolve().relative_to(ROOT)),
            "commit": check.get("commit")}


def readers_goals(status: dict[str, Any], grounded: str, rag: str) -> dict[str, Any]:
    """The ratings goal (grounded within .5 of rag) on the readers' means, per dimension.

    Each system's rating is the mean of the readers' means; empty unless both were rated.
    """
    by_system = status.get("readers_by_system", {})
    if grounded not in by_system or rag not in by_system:
        return {}
    out: dict[str, Any] = {"turns": {"grounded": by_system[grounded]["turns"],
                                     "rag": by_system[rag]["turns"]}}
    for dimension in RATINGS:
        def mean(system: str, dimension: str = dimension) -> float:
            values = [float(r[dimension]) for name, r in by_system[system].items()
                      if name != "turns"]
            return sum(values) / len(values)
        gap = mean(grounded) - mean(rag)
        out[dimension] = {"grounded": mean(grounded), "rag": mean(rag), "gap": gap,
                          "met": gap >= -0.5}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evalset", type=Path, default=EVALSET)
    parser.add_argument("--limit", type=int, default=None,
                        help="the first N topics instead of the eval set's limit")
    parser.add_argument("--only", action="append", default=None, metavar="LABEL",
                        help="only the eval set's run with this label (repeatable), e.g. the "
                             "finished runs while another is still going in another process")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--readers", type=Path, default=None,
                        help="the conversationality check whose readers' means to carry "
                        "(default: the judge's check); a `score` of the table's own runs' "
                        "turns when the chat changed after the judge's check was read")
    args = parser.parse_args()

    settings = load_settings().settings
    eval_set = read_eval_set(args.evalset, settings=settings)
    eval_set = only_runs(eval_set, args.only, args.evalset, parser)
    if args.limit is not None:
        eval_set = dataclasses.replace(eval_set, runs=tuple(
            dataclasses.replace(planned, limit=args.limit) for planned in eval_set.runs))
    done = asyncio.run(run_eval_set(eval_set, settings=settings, console=err))
    runs: list[dict[str, Any]] = []
    tables: dict[str, dict[str, Any]] = {}
    with ResultsStore(default_results_path(settings)) as store:
        for planned, finished in zip(eval_set.runs, done, strict=True):
            summary = finished.summary
            label = planned.label or planned.system
            runs.append({"label": label, "system": planned.system,
                         "options": dict(planned.options or {}),
                         "model": planned.model or settings.model,
                         "run_id": summary.info.run_id, "items": summary.items,
                         "complete": summary.complete, "failures": len(summary.failures)})
            if summary.complete < summary.items:
                err.print(f"[yellow]{label}: {summary.complete}/{summary.items} complete; "
                          "left out until it finishes[/]")
                continue
            tables[label] = tabulate(store.load_run(summary.info.run_id))
    labels = {r["system"] + ("/" + str(r["options"].get("mode")) if r["options"].get("mode")
                             else ""): r["label"] for r in runs}
    grounded_run = next((r["run_id"] for r in runs if r["system"] == "grounded"
                         and not r["options"].get("mode") and r["label"] in tables), None)
    with ResultsStore(default_results_path(settings)) as store:
        evidence = topic_evidence(store, grounded_run) if grounded_run else {}
    conversational = conversationality_status(args.readers)
    result = {
        "evalset": str(args.evalset.resolve().relative_to(ROOT)),
        "limit": args.limit if args.limit is not None else eval_set.runs[0].limit,
        "only": args.only, "runs": runs, "tables": tables,
        "goals": goals(tables, labels.get("grounded", ""), labels.get("rag", "")),
        "factuality_judge": validation_status(),
        "conversationality_judge": conversational,
        "goals_readers": readers_goals(conversational, labels.get("grounded", ""),
                                       labels.get("rag", "")),
        "topic_evidence": evidence,
    }
    write_result(args.out, result, data=data_provenance(
        {"real": 1.0}, sample="n/a (nothing trained or tuned on these conversations)",
        sources="topics: ../shared/data/wikipedia/topics (WikiChat's head, tail and recent "
        "lists); evidence: the configured corpus index",
        shares_of="topics (real Wikipedia articles); the user turns are simulated by the "
        "model, as in the paper"))
    for label, table in tables.items():
        cells = ", ".join(f"{k} {table[k]['factuality'].get('factuality', float('nan')):.3f}"
                          f" ({table[k]['factuality']['claims']} claims)"
                          for k in (*KINDS, "all"))
        err.print(f"{label}: factuality {cells}")
    err.print(f"result in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
