"""Statistics over scored items: means with bootstrap CIs, paired run comparisons, agreement.

Everything here consumes :class:`~freshwiki.evaluation._types.ScoredItem` s only, so it is
tested on hand-built results without a model. The intervals, tests and kappa themselves are
:mod:`freshwiki.stats`'s; this module decides which applies to which group of items.

Design choices, and why:

* **Percentile bootstrap** for every mean (:func:`freshwiki.stats.bootstrap_ci`).
* **Clustered by sample** whenever a group holds several items of one sample (templates pooled):
  answers to the same sample under different templates are correlated, and treating them as
  independent would make the interval too narrow. Whole samples are resampled instead.
* **Fixed seed**: the same results give the same report, byte for byte.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshwiki.evaluation._types import FailedItem, RunResults, ScoredItem
from freshwiki.results import natural_key as natural_key
from freshwiki.stats import (
    Interval,
    bootstrap_ci,
    cluster_bootstrap_ci,
    kappa_from_matrix,
    mcnemar_exact_p,
    sign_flip_p,
)

# Fields of ScoredItem that ``by=`` may name; every other name is a sample-metadata key.
_ITEM_FIELDS = ("scorer", "template", "label", "sample_id")


@dataclass(frozen=True)
class GroupSummary:
    """The mean score of one group of items (e.g. one scorer x template x breakdown value).

    Attributes:
        by: The grouping names, e.g. ``("scorer", "template", "contradiction")``.
        key: This group's value for each name (``None`` when an item lacks that metadata key).
        n: Items in the group.
        n_samples: Distinct samples among them (fewer than ``n`` when templates are pooled).
        mean: Mean value, ``None`` for an empty group.
        ci: Bootstrap interval of the mean; ``None`` when ``n`` is 0.
        label_counts: How many items carry each label (scorers that classify).
    """

    by: tuple[str, ...]
    key: tuple[str | None, ...]
    n: int
    n_samples: int
    mean: float | None
    ci: Interval | None
    label_counts: Mapping[str, int]

    def get(self, name: str) -> str | None:
        """This group's value for grouping name ``name``."""
        return self.key[self.by.index(name)]


@dataclass(frozen=True)
class PairedComparison:
    """Run A against run B on the items both scored, matched by (sample, template).

    Attributes:
        run_a: Run id of A.
        run_b: Run id of B.
        scorer: Scorer compared.
        template: Template compared, or ``None`` for all templates pooled.
        n_paired: Matched pairs.
        n_only_a: Items of A with no partner in B (failed or not yet run in B).
        n_only_b: Items of B with no partner in A.
        mean_a: Mean of A over the pairs.
        mean_b: Mean of B over the pairs.
        difference: ``mean_a - mean_b``.
        ci: Paired bootstrap interval of the difference.
        test: Which test produced ``p_value`` (see :func:`paired_comparison`).
        p_value: Two-sided p-value for "no difference"; ``None`` without pairs.
        wins: Pairs where A scored higher.
        losses: Pairs where B scored higher.
        ties: Pairs scored the same.
    """

    run_a: str
    run_b: str
    scorer: str
    template: str | None
    n_paired: int
    n_only_a: int
    n_only_b: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    ci: Interval | None
    test: str
    p_value: float | None
    wins: int
    losses: int
    ties: int


@dataclass(frozen=True)
class Agreement:
    """How often two classifying scorers give the same label to the same answer.

    Attributes:
        scorer_a: First scorer (matrix rows).
        scorer_b: Second scorer (matrix columns).
        labels: Row/column order: labels by descending mean score, so "correct" comes first.
        matrix: ``matrix[i][j]`` counts answers labelled ``labels[i]`` by A and ``labels[j]``
            by B.
        n: Answers both scorers labelled.
        percent: Observed agreement in percent; ``None`` when ``n`` is 0.
        kappa: Cohen's kappa; ``None`` when undefined (no answers, or chance agreement is 1
            because both scorers used one and the same label throughout).
        n_unmatched: Labelled answers of either scorer that the other did not label.
    """

    scorer_a: str
    scorer_b: str
    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]
    n: int
    percent: float | None
    kappa: float | None
    n_unmatched: int


def _field(item: ScoredItem, name: str) -> str | None:
    value: Any = getattr(item, name) if name in _ITEM_FIELDS else item.metadata.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _mean_and_ci(group: Sequence[ScoredItem], confidence: float, resamples: int,
                 seed: int) -> tuple[float | None, Interval | None]:
    if not group:
        return None, None
    values = [i.value for i in group]
    ids = [i.sample_id for i in group]
    if len(set(ids)) < len(ids):
        ci = cluster_bootstrap_ci(values, ids, confidence=confidence, resamples=resamples,
                                  seed=seed)
    else:
        ci = bootstrap_ci(values, confidence=confidence, resamples=resamples, seed=seed)
    return math.fsum(values) / len(values), ci


def summarize(items: Iterable[ScoredItem], by: Sequence[str] = ("scorer", "template"), *,
              confidence: float = 0.95, resamples: int = 10_000,
              seed: int = 0) -> list[GroupSummary]:
    """Mean, bootstrap CI, n and label counts for each group of items.

    Args:
        items: Scored items, usually of one run.
        by: Grouping names: ``scorer``, ``template``, ``label`` or ``sample_id`` (item fields)
            or any sample-metadata key (``contradiction``, ``scope``). ``()`` gives one group.
        confidence: Nominal coverage of the intervals.
        resamples: Bootstrap resamples per group.
        seed: Random seed (the same for every group, so a group's CI does not depend on which
            other groups exist).

    Returns:
        One summary per non-empty group, ordered naturally by key (template "5" before
        "5.1"; a missing metadata value last).
    """
    by = tuple(by)
    groups: dict[tuple[str | None, ...], list[ScoredItem]] = defaultdict(list)
    for item in items:
        groups[tuple(_field(item, name) for name in by)].append(item)
    summaries = []
    for key in sorted(groups, key=lambda k: tuple(natural_key(v) for v in k)):
        group = groups[key]
        mean, ci = _mean_and_ci(group, confidence, resamples, seed)
        labels = Counter(i.label for i in group if i.label is not None)
        summaries.append(GroupSummary(
            by=by, key=key, n=len(group), n_samples=len({i.sample_id for i in group}),
            mean=mean, ci=ci, label_counts=dict(sorted(labels.items())),
        ))
    return summaries


def _index(items: Iterable[ScoredItem], scorer: str, template: str | None,
           run: str) -> dict[tuple[str, str], ScoredItem]:
    found: dict[tuple[str, str], ScoredItem] = {}
    for item in items:
        if item.scorer != scorer or (template is not None and item.template != template):
            continue
        key = (item.sample_id, item.template)
        if key in found:
            raise ValueError(f"run {run}: scorer {scorer!r} scored sample {item.sample_id!r} "
                             f"under template {item.template!r} twice")
        found[key] = item
    return found


def paired_comparison(run_a: RunResults, run_b: RunResults, scorer: str,
                      template: str | None = None, *, confidence: float = 0.95,
                      resamples: int = 10_000, seed: int = 0) -> PairedComparison:
    """Compare two runs on the answers both have, pair by pair.

    Items are matched by (sample id, template): the same question asked the same way, so
    per-sample difficulty cancels out and the comparison is far sharper than comparing two
    unpaired means. Items only one run has (failed or not yet run) are counted, not used.

    The test depends on the data:

    * **Exact McNemar** when every score is 0 or 1 and each sample contributes one pair: only
      discordant pairs (one run right, the other wrong) carry information, and the exact
      binomial test on them is valid at any sample size, where the chi-squared version is not.
    * **Sign-flip permutation test** otherwise (graded scores such as 0.5, or templates pooled):
      it assumes only that, with no difference, each pair's difference is as likely positive
      as negative, not that differences are normal as a paired t-test would. With templates
      pooled, a sample's pairs are summed and flipped together because they are correlated.
      For binary single-template data the two tests give the same p-value; McNemar is used
      there because it is exact at any n and is the name readers expect.

    Args:
        run_a: Run A (differences are A - B).
        run_b: Run B.
        scorer: Scorer whose values are compared.
        template: One template, or ``None`` for all.
        confidence: Nominal coverage of the difference's interval.
        resamples: Bootstrap resamples (and random flips for a large sign-flip test).
        seed: Random seed.

    Returns:
        The comparison; means, interval and p-value are ``None`` without pairs.

    Raises:
        ValueError: a run scored the same sample x template with ``scorer`` twice.
    """
    a = _index(run_a.items, scorer, template, run_a.info.run_id)
    b = _index(run_b.items, scorer, template, run_b.info.run_id)
    keys = sorted(a.keys() & b.keys())
    def result(**rest: Any) -> PairedComparison:
        return PairedComparison(
            run_a=run_a.info.run_id, run_b=run_b.info.run_id, scorer=scorer, template=template,
            n_paired=len(keys), n_only_a=len(a.keys() - b.keys()),
            n_only_b=len(b.keys() - a.keys()), **rest)

    if not keys:
        return result(mean_a=None, mean_b=None, difference=None, ci=None,
                      test="none (no pairs)", p_value=None, wins=0, losses=0, ties=0)
    va = np.array([a[k].value for k in keys])
    vb = np.array([b[k].value for k in keys])
    diff = va - vb
    samples = [k[0] for k in keys]
    clustered = len(set(samples)) < len(samples)
    binary = bool(np.all(np.isin(va, (0.0, 1.0))) and np.all(np.isin(vb, (0.0, 1.0))))
    if clustered:
        ci = cluster_bootstrap_ci(diff, samples, confidence=confidence, resamples=resamples,
                                  seed=seed)
    else:
        ci = bootstrap_ci(diff, confidence=confidence, resamples=resamples, seed=seed)
    if binary and not clustered:
        p = mcnemar_exact_p(int(np.sum(diff > 0)), int(np.sum(diff < 0)))
        test = "exact McNemar"
    else:
        per_sample: dict[str, float] = defaultdict(float)
        for sample, d in zip(samples, diff, strict=True):
            per_sample[sample] += float(d)
        p, exact = sign_flip_p(list(per_sample.values()), resamples=resamples, seed=seed)
        test = "sign-flip permutation" + (" by sample" if clustered else "") + (
            " (exact)" if exact else f" ({resamples:,} random flips)")
    return result(
        mean_a=float(va.mean()), mean_b=float(vb.mean()),
        difference=float(va.mean() - vb.mean()), ci=ci, test=test, p_value=p,
        wins=int(np.sum(diff > 0)), losses=int(np.sum(diff < 0)), ties=int(np.sum(diff == 0)),
    )


def classifying_scorers(items: Iterable[ScoredItem]) -> list[str]:
    """Scorers that gave at least one label, in natural order."""
    return sorted({i.scorer for i in items if i.label is not None}, key=natural_key)


def _label_order(items: Sequence[ScoredItem]) -> tuple[str, ...]:
    values: dict[str, list[float]] = defaultdict(list)
    for item in items:
        if item.label is not None:
            values[item.label].append(item.value)

    def order(label: str) -> tuple[float, str]:
        return -math.fsum(values[label]) / len(values[label]), label

    return tuple(sorted(values, key=order))


def label_agreement(items: Iterable[ScoredItem], scorer_a: str, scorer_b: str) -> Agreement:
    """Percent agreement, Cohen's kappa and confusion matrix of two classifying scorers.

    Answers are matched by (sample id, template). Kappa corrects percent agreement for the
    agreement expected by chance from each scorer's label frequencies: a judge that says
    "correct" 90 % of the time agrees with anything that does the same 81 % of the time by
    chance, which percent agreement alone would hide.

    Args:
        items: Scored items of one run, holding both scorers' results.
        scorer_a: Scorer for the matrix rows (e.g. the LLM judge).
        scorer_b: Scorer for the columns (e.g. the deterministic matcher).

    Returns:
        The agreement; percent and kappa are ``None`` when undefined.
    """
    pool = [i for i in items if i.label is not None and i.scorer in (scorer_a, scorer_b)]
    la = {(i.sample_id, i.template): str(i.label) for i in pool if i.scorer == scorer_a}
    lb = {(i.sample_id, i.template): str(i.label) for i in pool if i.scorer == scorer_b}
    keys = la.keys() & lb.keys()
    labels = _label_order(pool)
    position = {label: k for k, label in enumerate(labels)}
    counts = Counter((position[la[key]], position[lb[key]]) for key in keys)
    matrix = np.array([[counts[(r, c)] for c in range(len(labels))] for r in range(len(labels))],
                      dtype=np.int64).reshape(len(labels), len(labels))
    n = len(keys)
    cells = tuple(tuple(int(c) for c in row) for row in matrix)
    return Agreement(
        scorer_a=scorer_a, scorer_b=scorer_b, labels=labels, matrix=cells, n=n,
        percent=100.0 * float(np.trace(matrix)) / n if n else None,
        kappa=kappa_from_matrix(cells), n_unmatched=len(la.keys() ^ lb.keys()),
    )


# -- failure accounting ----------------------------------------------------------------------


def failed_keys(failures: Iterable[FailedItem], scorer: str) -> set[tuple[str, str]]:
    """(sample, template) pairs that have no ``scorer`` score because something failed.

    Responding failed (so no scorer could run), or this scorer failed on the answer. A
    failure row is deleted when a retry succeeds, so these never overlap the scored items.
    """
    return {(f.sample_id, f.template) for f in failures
            if f.stage == "respond" or (f.stage == "score" and f.scorer == scorer)}


@dataclass(frozen=True)
class Accounting:
    """One cell's mean two ways: over scored items, and with failures counted as incorrect.

    A mean over scored items only flatters a system whose hard items fail (a judge that
    cannot parse long answers, a model that times out on long prompts): those items leave the
    mean instead of counting against it. Showing both, with the counts, lets a reader see
    when that happens.

    Attributes:
        scorer: Scorer name.
        template: Template id, or ``None`` for all templates pooled.
        n_scored: Items with a score.
        n_failed: Items whose responding or scoring failed (see :func:`failed_keys`).
        mean_scored: Mean over scored items (``None`` when nothing is scored).
        ci: Bootstrap CI of ``mean_scored``.
    """

    scorer: str
    template: str | None
    n_scored: int
    n_failed: int
    mean_scored: float | None
    ci: Interval | None

    @property
    def n_total(self) -> int:
        """Items attempted: scored plus failed."""
        return self.n_scored + self.n_failed

    @property
    def mean_with_failures(self) -> float | None:
        """The mean with every failed item scored 0 (incorrect)."""
        if self.n_total == 0:
            return None
        return (self.mean_scored or 0.0) * self.n_scored / self.n_total

    @property
    def differs(self) -> bool:
        """Whether the two means differ by more than the CI: the failures change the story.

        True when the mean with failures falls outside the scored mean's confidence
        interval (or nothing at all was scored while something failed).
        """
        strict = self.mean_with_failures
        if not self.n_failed or strict is None:
            return False
        if self.ci is None:
            return True
        return strict < self.ci.low - 1e-12 or strict > self.ci.high + 1e-12


def account(summary: GroupSummary | None, failed: int, scorer: str,
            template: str | None) -> Accounting:
    """An :class:`Accounting` from a group's summary and its number of failed items."""
    return Accounting(scorer=scorer, template=template,
                      n_scored=0 if summary is None else summary.n, n_failed=failed,
                      mean_scored=None if summary is None else summary.mean,
                      ci=None if summary is None else summary.ci)
