#!/usr/bin/env python
r"""The simulated-chat conversationality judge against turns rated by hand (WikiChat, issue 35).

WikiChat's Table 1 rates each reply 1-5 for relevant, informational, natural and
non-repetitive. The paper checked its GPT-4 judge the same way this script does (its Appendix
Table 10): two people rated 50 turns sampled from all chatbots under the judge's own
instructions, and Cohen's kappa was reported per dimension between the two people and between
each person and the judge. freshwiki's judge is the local model; until this check has 50 turns
its ratings are called unvalidated.

Three steps, run from the repository root::

    # 1. draw the turns to rate (seeded), before anyone reads them; commit the sample
    .venv/bin/python experiments/wikichat_conversationality_check.py sample RUN_ID... \
        --n 60 --out experiments/data/wikichat_conversationality/batch1.jsonl
    # 2. a reading file: the conversation before each turn and the reply; no system name and
    #    no rating in it
    .venv/bin/python experiments/wikichat_conversationality_check.py export \
        experiments/data/wikichat_conversationality/batch1.jsonl RUN_ID... --out /tmp/turns.md
    #    ... each reader's ratings written into
    #    src/freshwiki/benchmarks/simulated_chat/validation/conversationality_labels.jsonl ...
    # 3. kappa per dimension: reader with reader, each reader with the judge
    .venv/bin/python experiments/wikichat_conversationality_check.py score RUN_ID...

A turn is named by system label, conversation and turn number, not by run id: run ids change
with the code while the (cached) conversation does not; ``score`` checks that the reply the
judge rated is the one the readers read (its hash is in the sample file). Runs of two versions
of the chat can be passed together to ``export`` and ``score``: each sampled turn is taken from
the run that holds its reply (``sample`` wants runs of one version). A key drawn again after the
chat changed has ratings of two replies: ``score --latest`` keeps each reader's rating from the
latest batch (the current version), ``--systems`` keeps the labels of some systems, e.g. the
readers' means for the Table 1 runs::

    .venv/bin/python experiments/wikichat_conversationality_check.py score RAG_RUN GROUNDED_RUN \
        --systems 'wikichat-sim · rag' 'wikichat-sim · grounded (default mode)' --latest \
        --out experiments/results/wikichat_conversationality_table1.json

Besides kappa (the paper's statistic, on the five levels), ``score`` gives exact and
within-one agreement and each rater's mean per system: whether the readers see the same gap
between systems that the judge reports is what Table 1's reading rests on.

``score --rate per-question`` (or ``rubric``) also rates the labelled turns afresh with that
judge (the benchmark's ``ratings`` option, model ``--model``) and compares it as a third
rater, ``judge:per-question``, beside the runs' own ``judge``: a judge can be checked on
the turns without running the conversations again. ``--batches`` limits the comparison to
the turns of those batch numbers (a judge designed after batch 1 was read is measured on the
later batches only).

Result: ``experiments/results/wikichat_conversationality_check.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from _hand_check import CONVERSATIONS, check_parser, read_rows, scored_items, write_check
from freshwiki.benchmarks.simulated_chat import ConversationJudge, QuestionJudge, Turn
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, default_results_path
from freshwiki.llm import open_llm
from freshwiki.stats import bootstrap_ci, cohens_kappa

ROOT = Path(__file__).resolve().parents[1]
SCORER = "chat-relevant"
"""The scorer whose data holds the judge's full rating of every turn (all five share one)."""
RATINGS = ("relevant", "informational", "natural", "non_repetitive")
RESULT = ROOT / "experiments" / "results" / "wikichat_conversationality_check.json"
LABELS = (ROOT / "src" / "freshwiki" / "benchmarks" / "simulated_chat" / "validation"
          / "conversationality_labels.jsonl")
err = Console(stderr=True)


def turn_key(system: str, sample_id: str, turn: int) -> str:
    """A turn's id: system label, conversation, turn number (from 1)."""
    return f"{system}|{sample_id}|t{turn}"


def reply_hash(reply: str) -> str:
    """A short hash of the reply text, to check a later run rated the same reply."""
    return hashlib.sha256(reply.encode()).hexdigest()[:12]


def all_turns(store: Any, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Every judged turn of ``run_ids`` by :func:`turn_key`, with its conversation and rating."""
    turns: dict[str, dict[str, Any]] = {}
    for run_id, system, item, trace in scored_items(store, run_ids, SCORER):
        said = trace.get("turns", [])
        for t, rating in enumerate(item.data.get("turns", []), start=1):
            if t > len(said):
                break
            key = turn_key(system, item.sample_id, t)
            turns[key] = {
                "key": key, "run_id": run_id, "system": system,
                "sample_id": item.sample_id,
                "category": item.metadata.get("category", ""),
                "topic": item.metadata.get("title", item.sample_id),
                "today": trace.get("today", ""), "turn": t,
                "before": [{"user": s.get("user", ""), "reply": s.get("reply", "")}
                           for s in said[:t - 1]],
                "user": said[t - 1].get("user", ""), "reply": said[t - 1].get("reply", ""),
                "judge": {**{d: int(rating[d]) for d in RATINGS},
                          "temporally_correct": bool(rating["temporally_correct"])},
            }
    return turns


def draw(keys: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` of ``keys`` in a seeded random order (the reading order too, so systems mix)."""
    order = sorted(keys)
    random.Random(seed).shuffle(order)
    return order[:n]


def _store() -> ResultsStore:
    return ResultsStore(default_results_path(load_settings().settings))


def _turns_of(run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    with _store() as store:
        return all_turns(store, [store.resolve_run_id(r) for r in run_ids])


def _versions_of(run_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Every run's version of each turn.

    A turn key names a system's conversation and turn, and two versions of the chat (two
    runs) may hold different replies under one key.
    """
    versions: dict[str, list[dict[str, Any]]] = {}
    with _store() as store:
        for run_id in run_ids:
            for key, turn in all_turns(store, [store.resolve_run_id(run_id)]).items():
                versions.setdefault(key, []).append(turn)
    return versions


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def cmd_sample(args: argparse.Namespace) -> int:
    turns = _turns_of(args.run_ids)
    drawn = {row["key"] for path in args.exclude for row in _read_jsonl(path)}
    keys = [k for k in turns if k not in drawn]
    if not keys:
        raise SystemExit(f"no judged turns in runs {', '.join(args.run_ids)} that earlier "
                         "batches (--exclude) did not draw")
    picked = draw(keys, args.n, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for key in picked:
            turn = turns[key]
            fh.write(json.dumps({"key": key, "system": turn["system"],
                                 "category": turn["category"],
                                 "reply_sha": reply_hash(turn["reply"])}) + "\n")
    counts = Counter(turns[k]["system"] for k in picked)
    err.print(f"{len(picked)} of {len(keys)} turns drawn (seed {args.seed}): "
              + ", ".join(f"{s} {k}" for s, k in sorted(counts.items())) + f" -> {args.out}")
    return 0


def _checked(sample: Sequence[dict[str, Any]], versions: dict[str, list[dict[str, Any]]]
             ) -> list[dict[str, Any]]:
    """The sampled turns, each found in some run with the very reply that was sampled.

    Runs of several versions of the chat may be passed together: each sampled turn is taken
    from the run whose reply has the sample's hash.
    """
    missing = [row["key"] for row in sample if row["key"] not in versions]
    if missing:
        raise SystemExit(f"{len(missing)} sampled turns are not in these runs (first: "
                         f"{missing[0]}); pass the runs they were drawn from, or import their "
                         "bundle (`freshwiki runs import`)")
    found = []
    for row in sample:
        same = [t for t in versions[row["key"]] if reply_hash(t["reply"]) == row["reply_sha"]]
        if not same:
            raise SystemExit(f"sampled turn {row['key']} has another reply in every run given: "
                             "not the conversation that was sampled; pass the run it was "
                             "drawn from")
        found.append(same[0])
    return found


def reading_file(turns: Sequence[dict[str, Any]]) -> list[str]:
    """The reading file's lines: for each turn the conversation so far and the reply."""
    lines = ["# Turns to rate (simulated-chat conversationality check)", "",
             "Rate each reply as the brief says. The chatbot's name is hidden and no rating "
             "is shown. Text from Wikipedia-grounded chatbots; Wikipedia text is CC BY-SA 4.0.",
             ""]
    for n, turn in enumerate(turns, start=1):
        lines += [f"## {n}. `{turn['key'].split('|', 1)[1]}#{n}`", "",
                  f"- topic: {turn['topic']}; today's date: {turn['today']}", ""]
        for before in turn["before"]:
            lines += [f"> **User:** {before['user']}", ">",
                      f"> **Chatbot:** {before['reply']}", ">"]
        lines += [f"> **User:** {turn['user']}", "", "**Reply to rate:**", "",
                  turn["reply"], ""]
    return lines


def cmd_export(args: argparse.Namespace) -> int:
    turns = _checked(_read_jsonl(args.sample), _versions_of(args.run_ids))
    args.out.write_text("\n".join(reading_file(turns)), encoding="utf-8")
    err.print(f"{len(turns)} turns -> {args.out} (no system names, no ratings)")
    return 0


def read_labels(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Rating rows (``key``, ``reader``, the four 1-5 ratings, ``temporally_correct``)."""
    def problem(row: dict[str, Any]) -> str | None:
        bad = [d for d in RATINGS if row.get(d) not in (1, 2, 3, 4, 5)]
        if bad or not isinstance(row.get("temporally_correct"), bool) or not row.get("reader"):
            return (f"needs a reader, 1-5 integers for {', '.join(RATINGS)} and a true/false "
                    "temporally_correct")
        return None

    return read_rows(paths, problem)


def pair_agreement(a: Sequence[int], b: Sequence[int]) -> dict[str, Any]:
    """Cohen's kappa on the five levels (the paper's statistic), exact and within-one shares."""
    n = len(a)
    return {"n": n,
            "kappa": cohens_kappa([str(x) for x in a], [str(y) for y in b]),
            "exact": sum(x == y for x, y in zip(a, b, strict=True)) / n if n else None,
            "within_one": (sum(abs(x - y) <= 1 for x, y in zip(a, b, strict=True)) / n
                           if n else None),
            "mean_difference": sum(y - x for x, y in zip(a, b, strict=True)) / n if n else None}


async def rate_afresh(turns: Sequence[dict[str, Any]], style: str, model: str | None
                      ) -> dict[str, dict[str, Any]]:
    """Ratings of ``turns`` by a ``style`` judge now (cached calls are served, not redone)."""
    llm = open_llm(model)
    judge = QuestionJudge(llm) if style == "per-question" else ConversationJudge(llm)
    rated: dict[str, dict[str, Any]] = {}
    for turn in turns:
        before = [Turn(b["user"], b["reply"]) for b in turn["before"]]
        today = dt.date.fromisoformat(turn["today"]) if turn["today"] else dt.date.today()
        rating = await judge.rate_turn(before, Turn(turn["user"], turn["reply"]), today)
        rated[turn["key"]] = {**rating.scores, "temporally_correct": rating.temporally_correct,
                              "rationale": rating.rationale}
    return rated


def compare(labels: Sequence[dict[str, Any]], turns: dict[str, dict[str, Any]],
            extra: dict[str, dict[str, dict[str, Any]]] | None = None) -> dict[str, Any]:
    """Kappa per dimension between every pair of raters (readers and ``judge``) and means.

    A pair is scored on the turns both rated. ``by_system`` holds each rater's mean per
    system on the turns every rater rated, so the gaps between systems are comparable.
    ``extra``: more judges' ratings by turn key (``rate_afresh``), named by their key.
    """
    ratings: dict[str, dict[str, dict[str, Any]]] = {"judge": {}}
    for row in labels:
        mine = ratings.setdefault(row["reader"], {})
        if row["key"] in mine:
            raise SystemExit(f"{row['reader']} rated {row['key']} twice (batches "
                             f"{mine[row['key']].get('batch')} and {row.get('batch')}: two "
                             "versions of the chat under one key); pick one with --batches")
        mine[row["key"]] = row
    for key in {row["key"] for row in labels}:
        ratings["judge"][key] = turns[key]["judge"]
    judges = ["judge", *sorted(extra or {})]
    ratings.update(extra or {})
    raters = [*sorted(r for r in ratings if r not in judges), *judges]
    pairs: dict[str, Any] = {}
    for i, first in enumerate(raters):
        for second in raters[i + 1:]:
            both = sorted(set(ratings[first]) & set(ratings[second]))
            if not both:
                continue
            cell: dict[str, Any] = {
                d: pair_agreement([ratings[first][k][d] for k in both],
                                  [ratings[second][k][d] for k in both]) for d in RATINGS}
            temporal = pair_agreement(
                [int(ratings[first][k]["temporally_correct"]) for k in both],
                [int(ratings[second][k]["temporally_correct"]) for k in both])
            cell["temporally_correct"] = {k: temporal[k] for k in ("n", "kappa", "exact")}
            pairs[f"{first} ~ {second}"] = cell
    common = sorted(set.intersection(*(set(r) for r in ratings.values())))
    by_system: dict[str, Any] = {}
    for system in sorted({turns[k]["system"] for k in common}):
        keys = [k for k in common if turns[k]["system"] == system]
        by_system[system] = {"turns": len(keys), **{
            rater: {d: _mean_ci([ratings[rater][k][d] for k in keys]) for d in RATINGS}
            for rater in raters}}
    return {"raters": raters, "turns_rated_by_all": len(common), "pairs": pairs,
            "by_system": by_system}


def _mean_ci(values: Sequence[int]) -> dict[str, Any]:
    interval = bootstrap_ci([float(v) for v in values])
    return {"mean": sum(values) / len(values) if values else None,
            "ci": [interval.low, interval.high] if interval else None}


def latest(labels: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each reader's rating of each turn from its latest batch (the chat's latest version).

    A turn key drawn again after the chat changed holds the new reply; its earlier ratings
    are of a reply the runs no longer give.
    """
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for row in labels:
        mark = (row["reader"], row["key"])
        if mark not in kept or (row.get("batch") or 0) > (kept[mark].get("batch") or 0):
            kept[mark] = row
    return list(kept.values())


def batch_number(path: Path) -> int | None:
    """The batch a sample file holds, from its name (``batch4.jsonl``: 4); else ``None``."""
    number = re.fullmatch(r"batch(\d+)", path.stem)
    return int(number.group(1)) if number else None


def held_by(labels: Sequence[dict[str, Any]], paths: Sequence[Path],
            versions: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The labels of replies the given runs hold (before :func:`latest` picks among them).

    A chat change can bring an earlier reply back: the grounded Zoli turn 4 of the 18-topic
    run is word for word the reply batch 6 rated, not the one batch 10 rated. Its latest
    rating is then batch 6's. A label whose batch file is not given, or whose key no run
    holds, is kept (the later check reports it).
    """
    drawn: dict[tuple[str, int], str] = {}
    for path in paths:
        batch = batch_number(path)
        if batch is not None:
            for row in _read_jsonl(path):
                drawn[(row["key"], batch)] = row["reply_sha"]
    kept = []
    for row in labels:
        sha = drawn.get((row["key"], row.get("batch") or 0))
        held = {reply_hash(t["reply"]) for t in versions.get(row["key"], [])}
        if sha is None or not held or sha in held:
            kept.append(row)
    return kept


def pick_samples(paths: Sequence[Path], labels: Sequence[dict[str, Any]]
                 ) -> list[dict[str, Any]]:
    """The sample rows of the labelled turns, each from the sample file of its label's batch.

    A sample file's batch is in its name (``batch4.jsonl``); a key drawn again in a later batch
    (another version of the chat) is taken from the batch its labels are of. A file without a
    number in its name serves any labelled key.
    """
    labelled = {row["key"] for row in labels}
    wanted = {(row["key"], row.get("batch")) for row in labels}
    picked: dict[str, dict[str, Any]] = {}
    for path in paths:
        batch = batch_number(path)
        for row in _read_jsonl(path):
            if (row["key"], batch) in wanted or (batch is None and row["key"] in labelled):
                picked[row["key"]] = row
    return list(picked.values())


def cmd_score(args: argparse.Namespace) -> int:
    labels = read_labels(args.labels)
    if args.batches:
        labels = [row for row in labels if row.get("batch") in args.batches]
        if not labels:
            raise SystemExit(f"no labels of batches {args.batches} in {args.labels}")
    if args.systems:
        labels = [row for row in labels if row["key"].split("|", 1)[0] in args.systems]
        if not labels:
            raise SystemExit(f"no labels of systems {args.systems} in {args.labels}")
    versions = _versions_of(args.run_ids)
    if args.latest:
        labels = latest(held_by(labels, args.samples, versions))
    labelled = {row["key"] for row in labels}
    turns = {t["key"]: t for t in _checked(pick_samples(args.samples, labels), versions)}
    unknown = labelled - set(turns)
    if unknown:
        raise SystemExit(f"{len(unknown)} labelled turns are in no sample file (first: "
                         f"{sorted(unknown)[0]}); pass the batch files with --samples")
    extra = {}
    if args.rate:
        err.print(f"rating {len(turns)} turns with the {args.rate} judge ...")
        extra[f"judge:{args.rate}"] = asyncio.run(
            rate_afresh([turns[k] for k in sorted(turns)], args.rate, args.model))
    payload = {"labels": [str(p) for p in args.labels],
               "samples": [str(p) for p in args.samples],
               "batches": args.batches, "systems": args.systems, "latest": args.latest,
               "rated_afresh": args.rate, "model": args.model,
               "runs": sorted({turns[k]["run_id"] for k in labelled}),
               "conversations": sorted({turns[k]["sample_id"] for k in labelled}),
               **compare(labels, turns, extra)}
    if args.rate:
        payload["afresh"] = extra[f"judge:{args.rate}"]
    for name, cell in payload["pairs"].items():
        err.print(f"{name}: kappa " + ", ".join(
            f"{d} {cell[d]['kappa']:.2f}" if cell[d]["kappa"] is not None else f"{d} n/a"
            for d in RATINGS) + f" (n={cell[RATINGS[0]]['n']})")
    write_check(args.out, payload, items="turns", console=err, sources=f"turns of {CONVERSATIONS}")
    return 0


def main() -> int:
    parser, sub = check_parser(__doc__ or "", "turns", 60, cmd_sample)
    p = sub.add_parser("export", help="a reading file of the sampled turns, without ratings")
    p.add_argument("sample", type=Path)
    p.add_argument("run_ids", nargs="+")
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("score", help="kappa of readers and judge per dimension")
    p.add_argument("run_ids", nargs="+")
    p.add_argument("--samples", type=Path, action="append", default=None,
                   help="the batch files the labelled turns were drawn in (default: every "
                   "batch*.jsonl of experiments/data/wikichat_conversationality)")
    p.add_argument("--labels", type=Path, action="append", default=None)
    p.add_argument("--batches", type=int, nargs="+", default=None,
                   help="only the labels of these batch numbers")
    p.add_argument("--systems", nargs="+", default=None, metavar="LABEL",
                   help="only the labels of these system labels")
    p.add_argument("--latest", action="store_true",
                   help="each reader's latest rating of each turn (a turn drawn again after "
                   "the chat changed): the current version's turns")
    p.add_argument("--rate", choices=("rubric", "per-question"), default=None,
                   help="also rate the labelled turns afresh with this judge")
    p.add_argument("--model", default=None,
                   help="the model of --rate (default: the configured model)")
    p.add_argument("--out", type=Path, default=RESULT)
    p.set_defaults(func=cmd_score)
    args = parser.parse_args()
    if args.command == "score":
        args.labels = args.labels or [LABELS]
        args.samples = args.samples or sorted(
            (ROOT / "experiments" / "data" / "wikichat_conversationality").glob("batch*.jsonl"))
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
