#!/usr/bin/env python
r"""The simulated-chat factuality judge against claims read by hand (WikiChat, issue 35 item 4).

WikiChat's Table 1 counts a conversation's claims that Wikipedia supports; the paper had
crowdworkers decide. freshwiki's ``chat-factuality`` scorer has the judge model decide, claim by
claim, against passages it retrieves from the corpus. Before its figure is quoted, this script
measures how often that judge agrees with a person on the same claim and the same passages.

Three steps, run from the repository root::

    # 1. draw the claims to read (seeded), before anyone sees a verdict; commit the sample
    #    (a later batch: add --exclude for each earlier batch file)
    .venv/bin/python experiments/wikichat_factuality_check.py sample RUN_ID... \
        --n 120 --out experiments/data/wikichat_factuality/sample.jsonl
    # 2. a reading file without the judge's verdicts (claim, turn, reply, the 5 passages)
    .venv/bin/python experiments/wikichat_factuality_check.py export \
        experiments/data/wikichat_factuality/sample.jsonl --out /tmp/claims_to_read.md
    #    ... labels written into src/freshwiki/benchmarks/simulated_chat/validation/ ...
    # 3. agreement of the judge with the labels
    .venv/bin/python experiments/wikichat_factuality_check.py score \
        --labels src/freshwiki/benchmarks/simulated_chat/validation/factuality_labels.jsonl
    #    (a later judge: add --runs NEW_RUN_ID...; labelled claims are found in them by
    #    system, conversation, turn and claim text, as run ids change with the judge's code)

What a label means: whether *the passages the judge was shown* state the claim (SUPPORTS),
contradict it (REFUTES), or neither (NOT ENOUGH INFO). So the check measures the judge's
reading, not the retrieval behind it: a true claim whose passage was not retrieved is NOT
ENOUGH INFO for the reader as for the judge. The factuality score counts SUPPORTS against the
rest, so the headline agreement is on that split; the three-way table is reported too.

Result: ``experiments/results/wikichat_factuality_check.json``. Text from Wikipedia,
CC BY-SA 4.0 (the passages come from the corpus index).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from _hand_check import CONVERSATIONS, check_parser, read_rows, scored_items, write_check
from freshwiki.chat.query import time_intent_of
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, default_results_path
from freshwiki.retrieval import LazyIndex, resolve_index_name
from freshwiki.stats import class_scores, cohens_kappa, confusion, wilson_ci

ROOT = Path(__file__).resolve().parents[1]
SCORER = "chat-factuality"
VERDICTS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
EVIDENCE_K = 5
"""Passages the factuality scorer retrieves per claim (its ``EVIDENCE_K``); ``export`` checks
that the judge's cited passages are among the ones this retrieves again."""
RESULT = ROOT / "experiments" / "results" / "wikichat_factuality_check.json"
LABELS = (ROOT / "src" / "freshwiki" / "benchmarks" / "simulated_chat" / "validation"
          / "factuality_labels.jsonl")
err = Console(stderr=True)


def claim_key(run_id: str, sample_id: str, turn: int, index: int) -> str:
    """A claim's id: run, conversation, turn (from 1) and claim (from 1) within the turn."""
    return f"{run_id}:{sample_id}:t{turn}:c{index}"


def all_claims(store: ResultsStore, run_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Every claim the factuality scorer judged in ``run_ids``, with its verdict and context."""
    claims = []
    for run_id, system, item, trace in scored_items(store, run_ids, SCORER):
        turns = trace.get("turns", [])
        for t, turn in enumerate(item.data.get("turns", []), start=1):
            said = turns[t - 1] if t - 1 < len(turns) else {}
            user, reply = said.get("user", ""), said.get("reply", "")
            for c, check in enumerate(turn.get("claims", []), start=1):
                claims.append({
                    "key": claim_key(run_id, item.sample_id, t, c),
                    "run_id": run_id, "system": system,
                    "sample_id": item.sample_id,
                    "category": item.metadata.get("category", ""),
                    "topic": item.metadata.get("title", item.sample_id),
                    "turn": t, "user": user, "reply": reply,
                    "today": trace.get("today", ""),
                    "claim": check["claim"], "verdict": check["verdict"],
                    "rationale": check.get("rationale", ""),
                    "evidence": list(check.get("evidence", [])),
                })
    return claims


def draw(claims: Sequence[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """Up to ``n`` claims, as even as possible over systems, in a seeded order.

    Each system's claims are shuffled with ``random.Random(f"{seed}:{system}")``, then the
    systems take turns, so a system with many claims does not crowd out one with few.
    """
    by_system: dict[str, list[dict[str, Any]]] = {}
    for claim in sorted(claims, key=lambda c: c["key"]):
        by_system.setdefault(claim["system"], []).append(claim)
    for system, items in by_system.items():
        random.Random(f"{seed}:{system}").shuffle(items)
    picked: list[dict[str, Any]] = []
    while len(picked) < n and any(by_system.values()):
        for system in sorted(by_system):
            if by_system[system] and len(picked) < n:
                picked.append(by_system[system].pop(0))
    return picked


def not_drawn(claims: Sequence[dict[str, Any]], drawn: Sequence[dict[str, Any]]
              ) -> list[dict[str, Any]]:
    """``claims`` that no earlier batch drew, by key or by place.

    An earlier batch names its claims by run id; the same claim in a later run of the same
    conversation (the judge's code changed) has another key, so it is matched by place
    (system, conversation, turn, claim text) too.
    """
    keys = {c["key"] for c in drawn}
    places = {_claim_place(c) for c in drawn}
    return [c for c in claims if c["key"] not in keys and _claim_place(c) not in places]


def cmd_sample(args: argparse.Namespace) -> int:
    with ResultsStore(default_results_path(load_settings().settings)) as store:
        claims = all_claims(store, [store.resolve_run_id(r) for r in args.run_ids])
    drawn = [json.loads(line)["key"] for path in args.exclude
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    claims = not_drawn(claims, list(_by_key(drawn).values()) if drawn else [])
    if not claims:
        raise SystemExit(f"no {SCORER} claims in runs {', '.join(args.run_ids)} that earlier "
                         "batches (--exclude) did not draw: score more conversations first "
                         "(`freshwiki eval-set run ...`)")
    picked = draw(claims, args.n, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for claim in picked:
            fh.write(json.dumps({"key": claim["key"], "system": claim["system"],
                                 "category": claim["category"]}) + "\n")
    counts = Counter(c["system"] for c in picked)
    err.print(f"{len(picked)} of {len(claims)} claims drawn (seed {args.seed}): "
              + ", ".join(f"{s} {k}" for s, k in sorted(counts.items())) + f" -> {args.out}")
    return 0


def _by_key(keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The claims named by ``keys``, read from the configured runs store."""
    runs = sorted({k.split(":", 1)[0] for k in keys})
    with ResultsStore(default_results_path(load_settings().settings)) as store:
        found = {c["key"]: c for c in all_claims(store, runs)}
    missing = [k for k in keys if k not in found]
    if missing:
        raise SystemExit(f"{len(missing)} sampled claims are not in the runs store (first: "
                         f"{missing[0]}); import the runs bundle first (`freshwiki runs "
                         "import`)")
    return found


def retrieved(index: Any, claim: dict[str, Any]) -> list[Any]:
    """The passages the scorer retrieved for ``claim``: the same search, run again.

    The scorer stores only the passages its verdict cites; the reader must see all it was
    shown, or a claim the judge wrongly called unsupported would look unsupported to the
    reader too. The search is deterministic for one index, which ``cmd_export`` checks.
    """
    today = dt.date.fromisoformat(claim["today"]) if claim["today"] else dt.date.today()
    hits: list[Any] = index.search(claim["claim"], EVIDENCE_K,
                                   time_intent=time_intent_of(claim["claim"], today))
    return hits


def cmd_export(args: argparse.Namespace) -> int:
    keys = [json.loads(line)["key"] for line in args.sample.read_text().splitlines()
            if line.strip()]
    settings = load_settings().settings
    found = _by_key(keys)
    lazy = LazyIndex(settings, resolve_index_name(settings, args.index))
    try:
        lines = _reading_file(keys, found, asyncio.run(lazy.get()))
    finally:
        lazy.close()
    args.out.write_text("\n".join(lines), encoding="utf-8")
    err.print(f"{len(keys)} claims -> {args.out} (no verdicts in it)")
    return 0


def _reading_file(keys: Sequence[str], found: dict[str, dict[str, Any]],
                  index: Any) -> list[str]:
    """The reading file's lines: each claim, its turn and every passage retrieved for it."""
    lines = ["# Claims to read (simulated-chat factuality check)", "",
             "For each claim: do the passages below (every passage retrieved for it) state it "
             "(SUPPORTS), contradict it (REFUTES), or neither (NOT ENOUGH INFO)? Judge only "
             "on the passages shown. "
             "Text from Wikipedia, CC BY-SA 4.0.", ""]
    for n, key in enumerate(keys, start=1):
        claim = found[key]
        lines += [f"## {n}. `{key}`", "", f"- topic: {claim['topic']} ({claim['category']})",
                  f"- user: {claim['user']}", f"- reply: {claim['reply']}", "",
                  f"**Claim:** {claim['claim']}", ""]
        hits = retrieved(index, claim)
        unseen = set(claim["evidence"]) - {hit.passage.id for hit in hits}
        if unseen:
            raise SystemExit(f"{key}: the judge's evidence {sorted(unseen)} is not among the "
                             f"{EVIDENCE_K} passages retrieved again for the claim: the index "
                             "differs from the one the scorer searched (--index)")
        for p, hit in enumerate(hits, start=1):
            passage = hit.passage
            when = f", {passage.timestamp.date()}" if passage.timestamp else ""
            lines.append(f"[{p}] *{passage.title}*{when}: {passage.text}")
            lines.append("")
        if not hits:
            lines.append("(no passage was retrieved)")
        lines.append("")
    return lines


def read_labels(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Label rows (``key``, ``label``, ``reason``, ``labeller``); a bad row names its line."""
    return read_rows(paths, lambda row: None if row.get("label") in VERDICTS else
                     f"label {row.get('label')!r} is not one of {', '.join(VERDICTS)}")


def agreement(gold: Sequence[str], judged: Sequence[str]) -> dict[str, Any]:
    """Accuracy, kappa and SUPPORTS precision / recall of ``judged`` against ``gold``."""
    n = len(gold)
    agree = sum(g == j for g, j in zip(gold, judged, strict=True))
    support = class_scores(gold, judged, "SUPPORTS")
    acc_ci = wilson_ci(agree, n)
    return {"n": n, "accuracy": agree / n if n else None,
            "accuracy_ci": [acc_ci.low, acc_ci.high] if acc_ci else None,
            "kappa": cohens_kappa(gold, judged),
            "supports": {"tp": support.true_positives, "fp": support.false_positives,
                         "fn": support.false_negatives,
                         "precision": support.precision, "recall": support.recall},
            "gold_supported_share": sum(g == "SUPPORTS" for g in gold) / n if n else None,
            "judged_supported_share": sum(j == "SUPPORTS" for j in judged) / n if n else None}


def _binary(values: Iterable[str]) -> list[str]:
    return ["SUPPORTS" if v == "SUPPORTS" else "not supported" for v in values]


def _claim_place(claim: dict[str, Any]) -> tuple[str, str, int, str]:
    """Where a claim was said and what it says: system, conversation, turn, claim text."""
    return (claim["system"], claim["sample_id"], claim["turn"], " ".join(claim["claim"].split()))


def rematch(labelled: Sequence[dict[str, Any]], current: Sequence[dict[str, Any]]
            ) -> tuple[list[dict[str, Any] | None], int]:
    """Each labelled claim's counterpart in ``current`` runs (``None`` where it is gone).

    A label names a claim by its run's id, and the run's id changes with the judge's code, so
    a later judge's verdict on the same claim is found by where it was said and what it says
    (system label, conversation, turn, claim text); a claim the later judge no longer extracts
    (an abstention it now drops) has none. The conversation itself is the same where the
    systems' code is (cached generations), which the second value, the labelled turns whose
    reply differs, checks.
    """
    by_place: dict[tuple[str, str, int, str], list[dict[str, Any]]] = {}
    replies: dict[tuple[str, str, int], str] = {}
    for claim in current:
        by_place.setdefault(_claim_place(claim), []).append(claim)
        replies[claim["system"], claim["sample_id"], claim["turn"]] = claim["reply"]
    matched: list[dict[str, Any] | None] = []
    for claim in labelled:
        same = by_place.get(_claim_place(claim), [])
        matched.append(same.pop(0) if same else None)
    changed = sum(1 for c in labelled
                  if replies.get((c["system"], c["sample_id"], c["turn"]), c["reply"])
                  != c["reply"])
    return matched, changed


def cmd_score(args: argparse.Namespace) -> int:
    labels = read_labels(args.labels)
    found = _by_key([row["key"] for row in labels])
    rows = [(row, found[row["key"]]) for row in labels]
    gone: list[dict[str, Any]] = []
    if args.runs:
        with ResultsStore(default_results_path(load_settings().settings)) as store:
            current = all_claims(store, [store.resolve_run_id(r) for r in args.runs])
        matched, changed = rematch([c for _, c in rows], current)
        if changed:
            raise SystemExit(f"{changed} labelled turns have a different reply in runs "
                             f"{', '.join(args.runs)}: those are other conversations, so the "
                             "labels do not apply; score the runs the labels were read from")
        gone = [{"key": c["key"], "claim": c["claim"], "label": r["label"]}
                for (r, c), m in zip(rows, matched, strict=True) if m is None]
        rows = [(r, m) for (r, _), m in zip(rows, matched, strict=True) if m is not None]
    gold = [r["label"] for r, _ in rows]
    judged = [c["verdict"] for _, c in rows]
    payload: dict[str, Any] = {
        "scorer": SCORER, "labels": [str(p) for p in args.labels],
        "runs": sorted({c["run_id"] for _, c in rows}),
        "rematched": bool(args.runs),
        "no_longer_claims": gone,
        "binary": agreement(_binary(gold), _binary(judged)),
        "three_way": agreement(gold, judged),
        "confusion": dict(zip(("labels", "rows_gold_cols_judge"),
                              confusion(gold, judged, VERDICTS), strict=True)),
        "by_system": {}, "by_category": {},
        "disagreements": [{"key": c["key"], "claim": c["claim"], "label": r["label"],
                           "judge": c["verdict"], "reason": r.get("reason", "")}
                          for r, c in rows if r["label"] != c["verdict"]],
    }
    for field, out in (("system", payload["by_system"]), ("category", payload["by_category"])):
        for value in sorted({c[field] for _, c in rows}):
            part = [(r, c) for r, c in rows if c[field] == value]
            out[value] = agreement(_binary(r["label"] for r, _ in part),
                                   _binary(c["verdict"] for _, c in part))
    binary = payload["binary"]
    if gone:
        err.print(f"{len(gone)} labelled claims are no longer claims in these runs (left out; "
                  "listed under no_longer_claims)")
    err.print(f"{binary['n']} claims: binary accuracy {binary['accuracy']:.3f}, "
              f"kappa {binary['kappa']}, SUPPORTS P {binary['supports']['precision']} "
              f"R {binary['supports']['recall']}")
    write_check(args.out, payload, items="claims", console=err,
                sources=f"claims from {CONVERSATIONS}, passages from the corpus index")
    return 0


def main() -> int:
    parser, sub = check_parser(__doc__ or "", "claims", 120, cmd_sample)
    p = sub.add_parser("export", help="a reading file of the sampled claims, without verdicts")
    p.add_argument("sample", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--index", default=None, help="the index the scorer searched (default: "
                   "the configured one)")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("score", help="the judge's agreement with the labels")
    p.add_argument("--labels", type=Path, action="append", default=None)
    p.add_argument("--runs", nargs="+", default=None, metavar="RUN_ID",
                   help="score these runs' verdicts (a later judge) on the labelled claims, "
                   "matched by system, conversation, turn and claim text")
    p.add_argument("--out", type=Path, default=RESULT)
    p.set_defaults(func=cmd_score)
    args = parser.parse_args()
    if args.command == "score" and not args.labels:
        args.labels = [LABELS]
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
