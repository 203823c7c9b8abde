"""Statistics checked against hand computation and independent implementations (SciPy, sklearn)."""

from __future__ import annotations

import datetime as dt
import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats  # type: ignore[import-untyped]
from sklearn.metrics import cohen_kappa_score  # type: ignore[import-untyped]

from freshwiki.evaluation import (
    RunInfo,
    RunResults,
    ScoredItem,
    bootstrap_ci,
    cluster_bootstrap_ci,
    label_agreement,
    paired_comparison,
    summarize,
)
from freshwiki.evaluation._stats import natural_key
from freshwiki.stats import mcnemar_exact_p, sign_flip_p

Z95 = 1.959963984540054  # standard normal 97.5 % quantile


def normal_ci(values: np.ndarray) -> tuple[float, float]:
    se = float(values.std(ddof=0)) / math.sqrt(values.size)  # the bootstrap's plug-in SE
    return float(values.mean()) - Z95 * se, float(values.mean()) + Z95 * se


def item(sample: str, value: float, *, template: str = "1", scorer: str = "judge",
         label: str | None = None, **metadata: object) -> ScoredItem:
    return ScoredItem(sample_id=sample, template=template, scorer=scorer, value=value,
                      label=label, metadata=metadata)


def run(run_id: str, items: list[ScoredItem]) -> RunResults:
    when = dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    info = RunInfo(run_id=run_id, benchmark="b", system="s", model="m", config={},
                   code_version="0", model_hashes={}, created_at=when, updated_at=when)
    return RunResults(info=info, items=tuple(items))


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_degenerate_cases() -> None:
    assert bootstrap_ci([]) is None
    one = bootstrap_ci([0.3])
    assert one is not None and (one.low, one.high) == (0.3, 0.3)
    same = bootstrap_ci([0.7] * 9)
    assert same is not None and (same.low, same.high) == (0.7, 0.7)
    assert same.confidence == 0.95


def test_bootstrap_of_a_large_binary_sample_matches_the_normal_interval() -> None:
    values = (np.random.default_rng(7).random(4000) < 0.3).astype(float)
    ci = bootstrap_ci(values)
    low, high = normal_ci(values)
    assert ci is not None
    assert ci.low == pytest.approx(low, abs=0.003)
    assert ci.high == pytest.approx(high, abs=0.003)


def test_bootstrap_of_a_large_continuous_sample_matches_the_normal_interval() -> None:
    # Many distinct values: exercises the index-resampling path rather than value counts.
    values = np.random.default_rng(3).uniform(0, 1, 3000)
    ci = bootstrap_ci(values)
    low, high = normal_ci(values)
    assert ci is not None
    assert ci.low == pytest.approx(low, abs=0.002)
    assert ci.high == pytest.approx(high, abs=0.002)


def test_bootstrap_is_reproducible_and_narrows_with_lower_confidence() -> None:
    values = [1, 0, 0.5, 1, 1, 0, 0.5, 1, 0, 1]
    assert bootstrap_ci(values) == bootstrap_ci(values)
    # Small discrete samples give grid-valued bounds; continuous ones show the seed's effect.
    spread = np.random.default_rng(0).uniform(0, 1, 50)
    assert bootstrap_ci(spread, seed=1) != bootstrap_ci(spread, seed=2)
    wide, narrow = bootstrap_ci(values), bootstrap_ci(values, confidence=0.5)
    assert wide is not None and narrow is not None
    assert wide.low < narrow.low < 0.65 < narrow.high < wide.high


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([0.5, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.5, 1.0], confidence=95)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci([0.5, 1.0], resamples=0)


def test_cluster_bootstrap_does_not_count_copies_of_a_sample_as_evidence() -> None:
    # Each sample answered identically under 3 templates: the information is that of 600
    # values, not 1800. The plain bootstrap on the copies is too narrow by about sqrt(3).
    base = (np.random.default_rng(11).random(600) < 0.5).astype(float)
    copies = np.repeat(base, 3)
    clusters = [str(i // 3) for i in range(copies.size)]
    clustered = cluster_bootstrap_ci(copies, clusters)
    naive = bootstrap_ci(copies)
    low, high = normal_ci(base)
    assert clustered is not None and naive is not None
    assert clustered.low == pytest.approx(low, abs=0.006)
    assert clustered.high == pytest.approx(high, abs=0.006)
    ratio = (clustered.high - clustered.low) / (naive.high - naive.low)
    assert ratio == pytest.approx(math.sqrt(3), rel=0.08)


def test_cluster_bootstrap_degenerate_and_misaligned() -> None:
    assert cluster_bootstrap_ci([], []) is None
    flat = cluster_bootstrap_ci([1.0, 1.0], ["a", "a"])
    assert flat is not None and (flat.low, flat.high) == (1.0, 1.0)
    with pytest.raises(ValueError, match="cluster"):
        cluster_bootstrap_ci([1.0, 0.0], ["a"])


# ------------------------------------------------------------------ summarize


def test_summarize_groups_by_template_and_metadata_with_hand_computed_means() -> None:
    items = [
        item("a", 1.0, template="5.1", label="correct", kind="explicit"),
        item("b", 0.5, template="5.1", label="partially_correct", kind="explicit"),
        item("c", 0.0, template="5.1", label="incorrect", kind="implicit"),
        item("a", 1.0, template="10", label="correct", kind="explicit"),
        item("b", 1.0, template="5", label="correct"),  # no "kind": grouped as None
    ]
    groups = summarize(items, by=("template", "kind"))
    assert [g.key for g in groups] == [
        ("5", None), ("5.1", "explicit"), ("5.1", "implicit"), ("10", "explicit")]
    explicit = groups[1]
    assert explicit.by == ("template", "kind") and explicit.get("kind") == "explicit"
    assert (explicit.n, explicit.mean) == (2, 0.75)
    assert explicit.label_counts == {"correct": 1, "partially_correct": 1}
    pooled = summarize(items, by=())
    assert len(pooled) == 1
    assert pooled[0].n == 5 and pooled[0].n_samples == 3
    assert pooled[0].mean == pytest.approx(3.5 / 5)


def test_summarize_pools_templates_with_the_cluster_bootstrap() -> None:
    items = [item(s, v, template=t) for s, v in [("a", 1.0), ("b", 0.0), ("c", 1.0)]
             for t in ("1", "2")]
    (group,) = summarize(items, by=("scorer",))
    values = [i.value for i in items]
    assert group.ci == cluster_bootstrap_ci(values, [i.sample_id for i in items])
    assert group.ci != bootstrap_ci(values)


def test_natural_key_orders_template_ids_like_versions() -> None:
    ids = ["10", "5.2", "1", "5", None, "5.1", "2"]
    assert sorted(ids, key=natural_key) == ["1", "2", "5", "5.1", "5.2", "10", None]


# ------------------------------------------------------------------ paired comparison


def test_mcnemar_matches_hand_computation_and_scipy() -> None:
    # b=1, c=6: P(X <= 1) for X ~ Bin(7, 1/2) is (1 + 7) / 128, doubled.
    assert mcnemar_exact_p(1, 6) == pytest.approx(16 / 128)
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(4, 4) == 1.0
    for b, c in [(3, 10), (0, 5), (12, 30), (700, 760)]:
        assert mcnemar_exact_p(b, c) == pytest.approx(
            scipy_stats.binomtest(b, b + c).pvalue, rel=1e-9)


def test_paired_comparison_of_binary_scores_uses_mcnemar() -> None:
    # 10 shared samples: A wins on 6 (b), B wins on 1 (c), 3 ties; plus one sample each
    # run has alone.
    a_vals = [1, 1, 1, 1, 1, 1, 0, 1, 0, 1]
    b_vals = [0, 0, 0, 0, 0, 0, 1, 1, 0, 1]
    a = run("A", [item(f"s{k}", float(v)) for k, v in enumerate(a_vals)] + [item("only-a", 1)])
    b = run("B", [item(f"s{k}", float(v)) for k, v in enumerate(b_vals)] + [item("only-b", 0)])
    c = paired_comparison(a, b, "judge")
    assert (c.run_a, c.run_b, c.n_paired, c.n_only_a, c.n_only_b) == ("A", "B", 10, 1, 1)
    assert (c.wins, c.losses, c.ties) == (6, 1, 3)
    assert c.mean_a == pytest.approx(0.8) and c.mean_b == pytest.approx(0.3)
    assert c.difference == pytest.approx(0.5)
    assert c.test == "exact McNemar"
    assert c.p_value == pytest.approx(16 / 128)
    assert c.ci == bootstrap_ci(np.array(a_vals, float) - np.array(b_vals, float))
    assert c.ci is not None and c.ci.low <= 0.5 <= c.ci.high


def brute_force_sign_flip(d: list[float]) -> float:
    observed = abs(sum(d))
    flips = [abs(sum(s * x for s, x in zip(signs, d, strict=True)))
             for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(f >= observed - 1e-12 for f in flips) / len(flips)


def test_sign_flip_exact_matches_brute_force() -> None:
    d = [0.5, 1.0, 0.5, -0.5, 0.0, 1.0, 0.5]
    p, exact = sign_flip_p(d)
    assert exact
    # Zeros flip to themselves, so enumerating them too gives the same proportion.
    assert p == pytest.approx(brute_force_sign_flip(d))
    # Hand check on a tiny case: d = (1, 1): |sum| >= 2 only for (+,+) and (-,-).
    assert sign_flip_p([1.0, 1.0]) == (0.5, True)
    assert sign_flip_p([0.0, 0.0]) == (1.0, True)


def test_sign_flip_random_flips_agree_with_scipy_permutation_test() -> None:
    d = np.random.default_rng(5).choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=40,
                                        p=[0.15, 0.15, 0.3, 0.2, 0.2])
    p, exact = sign_flip_p(d, resamples=20_000)
    assert not exact
    reference = scipy_stats.permutation_test(
        (d,), lambda x: np.sum(x), permutation_type="samples", n_resamples=20_000,
        alternative="two-sided", rng=np.random.default_rng(1),
    ).pvalue
    assert p == pytest.approx(reference, abs=0.02)


def test_paired_comparison_of_graded_scores_by_template_and_pooled() -> None:
    a_items, b_items = [], []
    pairs = {("s1", "1"): (1.0, 0.5), ("s1", "2"): (0.5, 0.5), ("s2", "1"): (1.0, 0.0),
             ("s2", "2"): (0.5, 0.0), ("s3", "1"): (0.0, 0.5)}
    for (sample, template), (va, vb) in pairs.items():
        a_items.append(item(sample, va, template=template))
        b_items.append(item(sample, vb, template=template))
    a, b = run("A", a_items), run("B", b_items)

    one = paired_comparison(a, b, "judge", template="1")
    assert one.n_paired == 3 and one.test == "sign-flip permutation (exact)"
    assert one.difference == pytest.approx((0.5 + 1.0 - 0.5) / 3)
    assert one.p_value == pytest.approx(brute_force_sign_flip([0.5, 1.0, -0.5]))

    pooled = paired_comparison(a, b, "judge")
    assert pooled.n_paired == 5 and (pooled.wins, pooled.losses, pooled.ties) == (3, 1, 1)
    assert pooled.test == "sign-flip permutation by sample (exact)"
    # Per-sample summed differences: s1 0.5, s2 1.5, s3 -0.5.
    assert pooled.p_value == pytest.approx(brute_force_sign_flip([0.5, 1.5, -0.5]))
    diffs = [va - vb for va, vb in pairs.values()]
    assert pooled.ci == cluster_bootstrap_ci(diffs, [k[0] for k in pairs])


def test_paired_comparison_without_pairs_and_with_duplicates() -> None:
    a = run("A", [item("x", 1.0)])
    b = run("B", [item("y", 1.0)])
    c = paired_comparison(a, b, "judge")
    assert (c.n_paired, c.n_only_a, c.n_only_b) == (0, 1, 1)
    assert c.difference is None and c.p_value is None and c.ci is None
    twice = run("A", [item("x", 1.0), item("x", 0.0)])
    with pytest.raises(ValueError, match="twice"):
        paired_comparison(twice, b, "judge")


# ------------------------------------------------------------------ agreement


LABELS = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}


def agreement_items(table: list[list[int]]) -> list[ScoredItem]:
    names = list(LABELS)
    items, k = [], 0
    for r, row in enumerate(table):
        for c, count in enumerate(row):
            for _ in range(count):
                items.append(item(f"s{k}", LABELS[names[r]], scorer="judge", label=names[r]))
                items.append(item(f"s{k}", LABELS[names[c]], scorer="match", label=names[c]))
                k += 1
    return items


def test_kappa_on_a_hand_computed_3x3_table() -> None:
    table = [[10, 2, 1], [3, 5, 2], [0, 1, 6]]
    items = agreement_items(table)
    agreement = label_agreement(items, "judge", "match")
    assert agreement.labels == ("correct", "partially_correct", "incorrect")
    assert agreement.matrix == tuple(tuple(r) for r in table)
    assert agreement.n == 30 and agreement.n_unmatched == 0
    assert agreement.percent == pytest.approx(70.0)
    # p_o = 21/30; p_e = (13*13 + 10*8 + 7*9) / 30^2 = 312/900; kappa = (630-312)/(900-312).
    assert agreement.kappa == pytest.approx(318 / 588)
    judge = [i.label for i in items if i.scorer == "judge"]
    match = [i.label for i in items if i.scorer == "match"]
    assert agreement.kappa == pytest.approx(cohen_kappa_score(judge, match))


def test_agreement_undefined_kappa_and_unmatched_items() -> None:
    items = [item("a", 1.0, scorer="judge", label="correct"),
             item("a", 1.0, scorer="match", label="correct"),
             item("b", 1.0, scorer="judge", label="correct"),
             item("c", 0.0, scorer="match", label=None)]
    agreement = label_agreement(items, "judge", "match")
    assert agreement.n == 1 and agreement.percent == 100.0
    assert agreement.kappa is None  # chance agreement is 1: kappa is 0/0
    assert agreement.n_unmatched == 1
    empty = label_agreement(items, "judge", "nobody")
    assert empty.n == 0 and empty.percent is None and empty.kappa is None
