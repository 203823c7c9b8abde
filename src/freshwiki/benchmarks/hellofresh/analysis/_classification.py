"""Yes/no classification analysis for HelloFresh runs: metrics, periods, rankings, deployment.

The ``hellofresh-correct`` scorer stores, per sample x template, the parsed answer as its label
(``yes``/``no``/``none``/``blocked``) and the sample's gold answer in the metadata. Everything
here is rebuilt from those stored results, so it is tested on hand-built data.

Definitions (positive class ``yes``: the note is rated helpful / the edit is kept):

* **Metrics.** TP = gold yes, predicted yes; FP = gold no, predicted yes; FN = gold yes,
  predicted anything else (``none`` and ``blocked`` count as not-yes); accuracy = answers equal
  to the gold / all. Precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2TP / (2TP + FP +
  FN); each is ``None`` when its denominator is 0 (no positive predictions, no positives).
* **Intervals.** Percentile bootstrap over samples (10,000 resamples, fixed seed). A resample is
  a draw of counts over the eight (gold, prediction) cells, which is exactly resampling the
  samples; resamples where a metric is undefined are left out of that metric's interval.
* **Majority vote** over the phrasings p1..p5 of one sample: the most frequent parsed answer;
  a tie for the most frequent gives ``none`` (so does a winning ``none``); a winning
  ``blocked`` stays ``blocked``. It is reported as template ``vote``.
* **Per period**: the metrics within each period (month of a note, week of an edit).
* **Rankings**: within each period, configurations (run x template, the vote included) are
  ranked by F1, 1 = best, ties sharing their mean rank; consistency is Kendall's τ-b between
  the ranks of consecutive periods over the configurations ranked in both.
* **Deployment simulation**: a user who picks a phrasing on the data they have. On the first
  periods (default: the first half, rounded up, leaving at least one later period) the
  phrasings whose recall is at least 20 % are eligible and the one with the highest precision
  is chosen (ties: higher recall, then template order); its metrics on the later periods
  pooled are what deployment would give. Shown next to every phrasing's later metrics, so the
  cost of choosing early is visible.
* **Vote-count quartiles** (notes): F1 of the vote within each ``vote_quartile`` the loader
  assigned (quartiles of the ratings each note received).
* **Search agent against zero-shot** (the paper's Figure 5): for a zero-shot run and a
  search-agent run of the same model on the same data, per phrasing and for the vote, the F1
  of each on the samples both answered and the difference *search agent minus zero-shot*, so a
  positive value means the search helped, as in the paper's figure. Its interval is a paired
  percentile bootstrap: the same resampled samples for both runs (10,000 resamples, fixed
  seed). A search-agent run with ``control=true`` (unrelated summaries, the paper's Figure 9)
  is compared the same way and marked as a control.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freshwiki.results import ChartSpec, ChartValue, ReportSection, RunResults, natural_key
from freshwiki.stats import (
    Interval,
    kendall_tau_b,
    paired_bootstrap_ci,
    percentile_interval,
    prf,
    ranks,
)

POSITIVE = "yes"
NEGATIVE = "no"
PREDICTIONS = ("yes", "no", "none", "blocked")
VOTE = "vote"
"""The template name under which the majority vote is reported."""
SCORER = "hellofresh-correct"
BENCHMARKS = ("hellofresh-notes", "hellofresh-edits")
MIN_RECALL = 0.2

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Prediction:
    """One sample's gold and predicted answers under one template (or the vote).

    Attributes:
        sample_id: The sample.
        gold: ``yes`` or ``no``.
        predicted: ``yes``, ``no``, ``none`` or ``blocked``.
        period: The sample's period.
        quartile: The sample's vote-count quartile (notes), else ``None``.
    """

    sample_id: str
    gold: str
    predicted: str
    period: str | None = None
    quartile: str | None = None


@dataclass(frozen=True)
class Estimate:
    """A metric's value (``None`` when undefined) and its bootstrap interval."""

    value: float | None
    ci: Interval | None


@dataclass(frozen=True)
class ClassificationMetrics:
    """Confusion counts and the four metrics with intervals (see the module docstring)."""

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    none: int
    blocked: int
    accuracy: Estimate
    precision: Estimate
    recall: Estimate
    f1: Estimate


def _cells(predictions: Sequence[Prediction]) -> FloatArray:
    """Counts over the 8 (gold, prediction) cells: gold yes x 4 predictions, then gold no."""
    counts = np.zeros(8, dtype=np.float64)
    for p in predictions:
        if p.gold not in (POSITIVE, NEGATIVE):
            raise ValueError(f"sample {p.sample_id}: gold answer must be yes or no, "
                             f"got {p.gold!r}")
        pred = PREDICTIONS.index(p.predicted) if p.predicted in PREDICTIONS else 2
        counts[(0 if p.gold == POSITIVE else 4) + pred] += 1
    return counts


def _metrics(counts: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Accuracy, precision, recall, F1 for rows of cell counts; NaN where undefined."""
    tp, fp = counts[..., 0], counts[..., 4]
    fn = counts[..., 1] + counts[..., 2] + counts[..., 3]
    n = counts.sum(axis=-1)
    correct = counts[..., 0] + counts[..., 5]
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n > 0, correct / n, np.nan)
    return (accuracy, *prf(tp, fp, fn))


def classification_metrics(predictions: Sequence[Prediction], *, confidence: float = 0.95,
                           resamples: int = 10_000, seed: int = 0) -> ClassificationMetrics:
    """Counts, accuracy, precision, recall and F1 with percentile bootstrap intervals.

    Raises:
        ValueError: a gold answer is not yes/no, or ``confidence``/``resamples`` is invalid.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    counts = _cells(predictions)
    n = int(counts.sum())
    point = [float(v) for v in _metrics(counts)]
    if n:
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(n, counts / n, size=resamples).astype(np.float64)
        boot = _metrics(draws)
        cis = [percentile_interval(b, confidence) for b in boot]
    else:
        cis = [None, None, None, None]
    est = [Estimate(None if math.isnan(v) else v, ci if not math.isnan(v) else None)
           for v, ci in zip(point, cis, strict=True)]
    c = counts.astype(int)
    return ClassificationMetrics(
        n=n, tp=int(c[0]), fp=int(c[4]), fn=int(c[1] + c[2] + c[3]), tn=int(c[5]),
        none=int(c[2] + c[6]), blocked=int(c[3] + c[7]),
        accuracy=est[0], precision=est[1], recall=est[2], f1=est[3],
    )


def majority_vote(labels: Iterable[str]) -> str:
    """The most frequent answer; ``none`` on a tie for first or when nothing was answered."""
    ranked = Counter(labels).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return "none"
    return ranked[0][0]


def predictions_of(results: RunResults, scorer: str = SCORER) -> dict[str, list[Prediction]]:
    """Per template, and the majority vote under :data:`VOTE`, the run's predictions.

    Items of other scorers, and samples without a yes/no gold ``label`` in their metadata,
    are ignored.
    """
    per_template: dict[str, list[Prediction]] = defaultdict(list)
    by_sample: dict[str, list[Prediction]] = defaultdict(list)
    for item in results.items:
        gold = item.metadata.get("label")
        if item.scorer != scorer or gold not in (POSITIVE, NEGATIVE):
            continue
        quartile = item.metadata.get("vote_quartile")
        pred = Prediction(
            sample_id=item.sample_id, gold=str(gold),
            predicted=item.label if item.label in PREDICTIONS else "none",
            period=None if item.metadata.get("period") is None
            else str(item.metadata["period"]),
            quartile=None if quartile is None else str(quartile),
        )
        per_template[item.template].append(pred)
        by_sample[item.sample_id].append(pred)
    out = {t: per_template[t] for t in sorted(per_template, key=natural_key)}
    if by_sample:
        out[VOTE] = [
            Prediction(sample_id=sid, gold=preds[0].gold,
                       predicted=majority_vote(p.predicted for p in preds),
                       period=preds[0].period, quartile=preds[0].quartile)
            for sid, preds in by_sample.items()
        ]
    return out


def metrics_by(predictions: Sequence[Prediction], key: Callable[[Prediction], str | None],
               **kwargs: Any) -> dict[str, ClassificationMetrics]:
    """Metrics per group (``key`` of each prediction; ``None`` keys are left out), in order."""
    groups: dict[str, list[Prediction]] = defaultdict(list)
    for p in predictions:
        k = key(p)
        if k is not None:
            groups[k].append(p)
    return {k: classification_metrics(groups[k], **kwargs)
            for k in sorted(groups, key=natural_key)}


@dataclass(frozen=True)
class RankingConsistency:
    """Configurations ranked by F1 within each period, and τ between consecutive periods.

    Attributes:
        periods: In order.
        entries: Configuration names (``run · template``).
        f1: Per period, per entry, the F1 (``None`` when undefined or absent).
        ranks: Per period, per ranked entry, its rank.
        taus: ``(period a, period b, τ-b or None, entries ranked in both)`` per consecutive pair.
    """

    periods: tuple[str, ...]
    entries: tuple[str, ...]
    f1: Mapping[str, Mapping[str, float | None]]
    ranks: Mapping[str, Mapping[str, float]]
    taus: tuple[tuple[str, str, float | None, int], ...]


def ranking_consistency(f1: Mapping[str, Mapping[str, float | None]]) -> RankingConsistency:
    """Rank entries within each period (keys of ``f1``, sorted) and compare neighbours."""
    periods = tuple(sorted(f1, key=natural_key))
    entries = tuple(dict.fromkeys(e for p in periods for e in f1[p]))
    ranks_ = {p: ranks(f1[p]) for p in periods}
    taus = []
    for a, b in pairwise(periods):
        common = [e for e in entries if e in ranks_[a] and e in ranks_[b]]
        tau = kendall_tau_b([ranks_[a][e] for e in common], [ranks_[b][e] for e in common])
        taus.append((a, b, tau, len(common)))
    return RankingConsistency(periods=periods, entries=entries, f1=f1, ranks=ranks_,
                              taus=tuple(taus))


@dataclass(frozen=True)
class Candidate:
    """One phrasing in the deployment simulation: its metrics early and later."""

    template: str
    train: ClassificationMetrics
    test: ClassificationMetrics
    eligible: bool


@dataclass(frozen=True)
class Deployment:
    """The deployment simulation (see the module docstring).

    Attributes:
        train_periods: Periods the choice is made on.
        test_periods: Periods it is reported on.
        min_recall: Recall a phrasing needs on the train periods to be eligible.
        candidates: Every phrasing, in template order.
        chosen: The chosen phrasing, ``None`` when none is eligible (or too few periods).
    """

    train_periods: tuple[str, ...]
    test_periods: tuple[str, ...]
    min_recall: float
    candidates: tuple[Candidate, ...]
    chosen: str | None

    @property
    def chosen_candidate(self) -> Candidate | None:
        """The chosen phrasing's row."""
        return next((c for c in self.candidates if c.template == self.chosen), None)


def default_train_periods(n_periods: int) -> int:
    """The first half of the periods, rounded up, leaving at least one to test on."""
    return max(0, min(math.ceil(n_periods / 2), n_periods - 1))


def deployment_simulation(per_template: Mapping[str, Sequence[Prediction]], *,
                          train_periods: int | None = None, min_recall: float = MIN_RECALL,
                          **kwargs: Any) -> Deployment:
    """Choose a phrasing on the first periods by precision (recall ≥ ``min_recall``).

    Args:
        per_template: Predictions per template (a :data:`VOTE` entry is ignored: it is not a
            phrasing one could deploy alone).
        train_periods: How many of the first periods to choose on (default:
            :func:`default_train_periods`).
        min_recall: Eligibility threshold on the train periods' recall.
        **kwargs: Passed to :func:`classification_metrics` (confidence, resamples, seed).
    """
    templates = [t for t in per_template if t != VOTE]
    periods = sorted({p.period for t in templates for p in per_template[t]
                      if p.period is not None}, key=natural_key)
    n_train = default_train_periods(len(periods)) if train_periods is None else train_periods
    if not 0 <= n_train <= len(periods):
        raise ValueError(f"train_periods must be in 0..{len(periods)}, got {n_train}")
    train, test = tuple(periods[:n_train]), tuple(periods[n_train:])
    candidates = []
    for t in templates:
        preds = per_template[t]
        train_m = classification_metrics([p for p in preds if p.period in train], **kwargs)
        test_m = classification_metrics([p for p in preds if p.period in test], **kwargs)
        recall = train_m.recall.value
        candidates.append(Candidate(t, train_m, test_m,
                                    eligible=bool(train and test and recall is not None
                                                  and recall >= min_recall)))
    eligible = [(i, c) for i, c in enumerate(candidates) if c.eligible]
    chosen = None
    if eligible:
        _, best = max(eligible, key=lambda ic: (
            ic[1].train.precision.value if ic[1].train.precision.value is not None else -1.0,
            ic[1].train.recall.value or 0.0, -ic[0]))
        chosen = best.template
    return Deployment(train_periods=train, test_periods=test, min_recall=min_recall,
                      candidates=tuple(candidates), chosen=chosen)


# ----------------------------------------------------------------------------- report view


def _f1_columns(gold: npt.NDArray[np.bool_], said: npt.NDArray[np.bool_]) -> FloatArray:
    """F1 per row of aligned gold / said-yes matrices (NaN where undefined)."""
    return prf((gold & said).sum(axis=-1), (~gold & said).sum(axis=-1),
               (gold & ~said).sum(axis=-1))[2]


@dataclass(frozen=True)
class F1Difference:
    """One phrasing's F1 under both regimes, on the samples both runs answered.

    Attributes:
        template: The phrasing, or :data:`VOTE`.
        n: Samples answered by both runs.
        zero_shot: F1 of the zero-shot run on them (``None`` when undefined).
        search: F1 of the search-agent run on them.
        difference: ``search - zero_shot`` (``None`` when either is undefined).
        ci: Paired bootstrap interval of the difference.
    """

    template: str
    n: int
    zero_shot: float | None
    search: float | None
    difference: float | None
    ci: Interval | None


def f1_difference(template: str, zero_shot: Sequence[Prediction], search: Sequence[Prediction],
                  *, confidence: float = 0.95, resamples: int = 10_000,
                  seed: int = 0) -> F1Difference:
    """F1 of ``search`` minus F1 of ``zero_shot`` on their common samples (see module doc)."""
    mine = {p.sample_id: p for p in zero_shot}
    pairs = [(mine[p.sample_id], p) for p in search if p.sample_id in mine]
    if not pairs:
        return F1Difference(template, 0, None, None, None, None)
    gold = np.array([z.gold == POSITIVE for z, _ in pairs])
    z_yes = np.array([z.predicted == POSITIVE for z, _ in pairs])
    s_yes = np.array([s.predicted == POSITIVE for _, s in pairs])
    f1_z, f1_s = (float(_f1_columns(gold, said)) for said in (z_yes, s_yes))
    def difference(idx: npt.NDArray[np.int64]) -> FloatArray:
        return _f1_columns(gold[idx], s_yes[idx]) - _f1_columns(gold[idx], z_yes[idx])

    ci = paired_bootstrap_ci(len(pairs), difference, confidence=confidence,
                             resamples=resamples, seed=seed)
    z_value = None if math.isnan(f1_z) else f1_z
    s_value = None if math.isnan(f1_s) else f1_s
    defined = z_value is not None and s_value is not None
    return F1Difference(
        template=template, n=len(pairs), zero_shot=z_value, search=s_value,
        difference=f1_s - f1_z if defined else None,
        ci=ci if defined else None)


@dataclass(frozen=True)
class RegimeComparison:
    """A search-agent run against a zero-shot run of the same model on the same data.

    Attributes:
        zero_shot: The zero-shot run's label.
        search: The search-agent run's label.
        backend: What the search agent searched (``searxng (URL)``, ``wikipedia (index)``).
        control: Whether the search run showed an unrelated sample's summaries.
        rows: Per phrasing (the paper's set first, in template order), then the vote.
    """

    zero_shot: str
    search: str
    backend: str
    control: bool
    rows: tuple[F1Difference, ...]


def search_backend(results: RunResults) -> str:
    """What a run's system searched, from its configuration; ``""`` when it searched nothing."""
    config = results.info.config.get("system_config")
    if not isinstance(config, Mapping) or "backend" not in config:
        return ""
    where = config.get("searxng_url") or config.get("index")
    return f"{config['backend']} ({where})" if where else str(config["backend"])


def _is_control(results: RunResults) -> bool:
    config = results.info.config.get("system_config")
    return isinstance(config, Mapping) and bool(config.get("control"))


def regime_comparisons(members: Sequence[tuple[RunResults, str]], *,
                       resamples: int = 10_000) -> list[RegimeComparison]:
    """Every (zero-shot, search-agent) pair among ``members`` that share the model."""
    out = []
    for z, z_label in members:
        if z.info.system != "zero-shot":
            continue
        z_preds = predictions_of(z)
        for s, s_label in members:
            if s.info.system != "search-agent" or s.info.model != z.info.model:
                continue
            s_preds = predictions_of(s)
            templates = [t for t in z_preds if t in s_preds and t != VOTE]
            rows = [f1_difference(t, z_preds[t], s_preds[t], resamples=resamples)
                    for t in templates]
            if VOTE in z_preds and VOTE in s_preds:
                rows.append(f1_difference(VOTE, z_preds[VOTE], s_preds[VOTE],
                                          resamples=resamples))
            if rows:
                out.append(RegimeComparison(zero_shot=z_label, search=s_label,
                                            backend=search_backend(s), control=_is_control(s),
                                            rows=tuple(rows)))
    return out


@dataclass(frozen=True)
class RunMetrics:
    """One run's analysis: metrics per template and vote, per period, per quartile."""

    label: str
    run_id: str
    per_template: Mapping[str, ClassificationMetrics]
    per_period: Mapping[str, ClassificationMetrics]
    per_quartile: Mapping[str, ClassificationMetrics]
    deployment: Deployment


@dataclass(frozen=True)
class BenchmarkAnalysis:
    """Every HelloFresh run of one benchmark and dataset, analysed together.

    Attributes:
        benchmark: ``hellofresh-notes`` or ``hellofresh-edits``.
        dataset: The dataset file the runs read (``""`` when not recorded).
        runs: Per run, in the order given.
        periods: Periods over all runs, in order.
        templates: Templates over all runs, then ``vote``.
        ranking: Configurations (``label · template``) ranked by F1 per period.
        regimes: Search agent against zero-shot, per pair of runs (the paper's Figure 5).
    """

    benchmark: str
    dataset: str
    runs: tuple[RunMetrics, ...]
    periods: tuple[str, ...]
    templates: tuple[str, ...]
    ranking: RankingConsistency
    regimes: tuple[RegimeComparison, ...] = ()


def _dataset_of(results: RunResults) -> str:
    """The dataset file a run read (its configured path), ``""`` when not recorded.

    Runs record it under ``data_location`` (paths are not part of a run's identity); runs
    stored before that, in ``dataset``.
    """
    config = results.info.config
    for key in ("dataset", "data_location"):
        part = config.get(key)
        path = part.get("path") if isinstance(part, Mapping) else None
        if path:
            return str(path)
    return ""


def analyse(results: Sequence[RunResults], labels: Sequence[str], *,
            resamples: int = 10_000) -> list[BenchmarkAnalysis]:
    """Analyse the HelloFresh runs among ``results`` (``labels``: their display names).

    Runs are analysed together when they share the benchmark and the dataset file (a real
    and a constructed edits set are ranked separately). Runs of other benchmarks are
    skipped; an empty list means there is nothing to show.
    """
    grouped: dict[tuple[str, str], list[tuple[RunResults, str]]] = defaultdict(list)
    for r, label in zip(results, labels, strict=True):
        if r.info.benchmark in BENCHMARKS:
            grouped[(r.info.benchmark, _dataset_of(r))].append((r, label))
    out = []
    for (benchmark, dataset), members in grouped.items():
        runs = []
        f1: dict[str, dict[str, float | None]] = defaultdict(dict)
        for r, label in members:
            preds = predictions_of(r)
            if not preds:
                continue
            vote = preds[VOTE]
            for template, tp in preds.items():
                for period, m in metrics_by(tp, lambda p: p.period, resamples=1).items():
                    f1[period][f"{label} · {template}"] = m.f1.value
            runs.append(RunMetrics(
                label=label, run_id=r.info.run_id,
                per_template={t: classification_metrics(p, resamples=resamples)
                              for t, p in preds.items()},
                per_period=metrics_by(vote, lambda p: p.period, resamples=resamples),
                per_quartile=metrics_by(vote, lambda p: p.quartile, resamples=resamples),
                deployment=deployment_simulation(preds, resamples=resamples),
            ))
        if not runs:
            continue
        templates = sorted({t for run in runs for t in run.per_template if t != VOTE},
                           key=natural_key)
        periods = sorted({p for run in runs for p in run.per_period}, key=natural_key)
        out.append(BenchmarkAnalysis(
            benchmark=benchmark, dataset=dataset, runs=tuple(runs), periods=tuple(periods),
            templates=(*templates, VOTE), ranking=ranking_consistency(f1),
            regimes=tuple(regime_comparisons(members, resamples=resamples)),
        ))
    return out


def as_point(metric: Estimate, n: int) -> ChartValue | None:
    """A metric as one bar of a report chart."""
    if metric.value is None:
        return None
    return ChartValue(mean=metric.value, ci=metric.ci, n=n)


@dataclass(frozen=True)
class ClassificationView:
    """The HelloFresh section of one benchmark: the analysis and its charts."""

    analysis: BenchmarkAnalysis
    f1_chart: ChartSpec
    period_chart: ChartSpec
    tau_chart: ChartSpec
    deployment_chart: ChartSpec
    quartile_chart: ChartSpec | None
    regime_chart: ChartSpec | None = None


def classification_views(results: Sequence[RunResults],
                         labels: Sequence[str]) -> list[ClassificationView]:
    """:func:`analyse` with the charts the report draws of it."""
    views = []
    for a in analyse(results, labels):
        runs = tuple(r.label for r in a.runs)
        f1 = {(t, r.label): as_point(m.f1, m.n)
              for r in a.runs for t, m in r.per_template.items()}
        periods = {(p, r.label): as_point(m.f1, m.n)
                   for r in a.runs for p, m in r.per_period.items()}
        taus: dict[tuple[str, str], ChartValue | None] = {
            (f"{x}→{y}", "Kendall τ-b"): ChartValue(mean=tau, ci=None, n=n)
            for x, y, tau, n in a.ranking.taus if tau is not None}
        deployed: dict[tuple[str, str], ChartValue | None] = {}
        for r in a.runs:
            chosen = r.deployment.chosen_candidate
            if chosen is not None:
                m = chosen.test
                for name, metric in (("precision", m.precision), ("recall", m.recall),
                                     ("F1", m.f1)):
                    deployed[(r.label, name)] = as_point(metric, m.n)
        quartiles = {(q, r.label): as_point(m.f1, m.n)
                     for r in a.runs for q, m in r.per_quartile.items()}
        regimes: dict[tuple[str, str], ChartValue | None] = {
            (row.template, f"{c.search} − {c.zero_shot}"): ChartValue(
                mean=row.difference, ci=row.ci, n=row.n)
            for c in a.regimes for row in c.rows if row.difference is not None}
        title = a.benchmark + (f" ({Path(a.dataset).name})" if a.dataset else "")
        views.append(ClassificationView(
            analysis=a,
            f1_chart=ChartSpec(f"{title}: F1 by phrasing ({VOTE} = majority)",
                               a.templates, runs, f1),
            period_chart=ChartSpec(f"{title}: F1 of the majority vote by period",
                                   a.periods, runs, periods, x_label="period"),
            tau_chart=ChartSpec(f"{title}: ranking consistency between periods",
                                tuple(f"{x}→{y}" for x, y, _, _ in a.ranking.taus),
                                ("Kendall τ-b",), taus, domain=(-1.0, 1.0),
                                x_label="consecutive periods"),
            deployment_chart=ChartSpec(f"{title}: deployed phrasing on later periods",
                                       runs, ("precision", "recall", "F1"), deployed,
                                       x_label="run"),
            quartile_chart=ChartSpec(
                f"{title}: F1 of the majority vote by vote-count quartile",
                tuple(sorted({q for r in a.runs for q in r.per_quartile})), runs, quartiles,
                x_label="quartile") if any(r.per_quartile for r in a.runs) else None,
            regime_chart=ChartSpec(
                f"{title}: F1 of the search agent minus zero-shot, by phrasing",
                tuple(row.template for row in a.regimes[0].rows),
                tuple(f"{c.search} − {c.zero_shot}" for c in a.regimes), regimes,
                domain=(-1.0, 1.0)) if a.regimes else None,
        ))
    return views


class HelloFreshAnalysis:
    """HelloFresh's report section: the yes/no classification analysis.

    Registered as the analysis of ``hellofresh-notes`` and ``hellofresh-edits`` in
    ``freshwiki.benchmarks``.
    """

    def report_sections(self, runs: Sequence[RunResults],
                        labels: Sequence[str]) -> list[ReportSection]:
        """One section for every benchmark x dataset among the runs, when there is one."""
        views = classification_views(runs, labels)
        if not views:
            return []
        return [ReportSection(__package__ or "", "hellofresh_classification.html.j2",
                              "hellofresh_classification.md.j2", {"classification": views})]

    def run_sections(self, run: RunResults, breakdown: str | None) -> list[ReportSection]:
        """Nothing inside a run's own part: the analysis compares runs."""
        return []
