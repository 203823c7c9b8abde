"""Classification analysis of HelloFresh runs, against values computed by hand."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from freshwiki.benchmarks.hellofresh.analysis import (
    VOTE,
    Prediction,
    analyse,
    classification_metrics,
    default_train_periods,
    deployment_simulation,
    f1_difference,
    majority_vote,
    metrics_by,
    predictions_of,
    ranking_consistency,
)
from freshwiki.evaluation import RunInfo, RunResults, ScoredItem, write_report


def preds(gold: str, predicted: list[str], period: str | None = None) -> list[Prediction]:
    return [Prediction(f"{gold}-{period}-{i}", gold, p, period) for i, p in enumerate(predicted)]


def test_metrics_by_hand() -> None:
    data = preds("yes", ["yes", "yes", "no", "none"]) + preds("no", ["yes", "no", "no",
                                                                      "blocked"])
    m = classification_metrics(data)
    assert (m.n, m.tp, m.fp, m.fn, m.tn, m.none, m.blocked) == (8, 2, 1, 2, 2, 1, 1)
    assert m.accuracy.value == pytest.approx(4 / 8)  # yes/yes twice, no/no twice
    assert m.precision.value == pytest.approx(2 / 3)
    assert m.recall.value == pytest.approx(2 / 4)
    assert m.f1.value == pytest.approx(4 / 7)  # 2TP / (2TP + FP + FN)
    for est in (m.accuracy, m.precision, m.recall, m.f1):
        assert est.ci is not None and 0 <= est.ci.low <= est.value <= est.ci.high <= 1


def test_bootstrap_matches_resampling_the_samples() -> None:
    data = (preds("yes", ["yes"] * 7 + ["no"] * 3 + ["none"] * 2)
            + preds("no", ["yes"] * 4 + ["no"] * 8))
    m = classification_metrics(data, resamples=20_000)
    rng = np.random.default_rng(123)
    gold = np.array([p.gold == "yes" for p in data])
    said = np.array([p.predicted == "yes" for p in data])
    idx = rng.integers(0, len(data), size=(20_000, len(data)))
    tp = (gold[idx] & said[idx]).sum(1)
    fp = (~gold[idx] & said[idx]).sum(1)
    fn = (gold[idx] & ~said[idx]).sum(1)
    f1 = 2 * tp / (2 * tp + fp + fn)
    low, high = np.quantile(f1, [0.025, 0.975])
    assert m.f1.ci is not None
    assert m.f1.ci.low == pytest.approx(low, abs=0.03)
    assert m.f1.ci.high == pytest.approx(high, abs=0.03)


def test_undefined_metrics_are_none() -> None:
    m = classification_metrics(preds("yes", ["no", "none"]) + preds("no", ["no"]))
    assert m.precision.value is None and m.precision.ci is None  # nothing predicted yes
    assert m.recall.value == 0.0 and m.f1.value == 0.0
    perfect = classification_metrics(preds("yes", ["yes", "yes"]) + preds("no", ["no"]))
    assert perfect.accuracy.ci is not None
    assert (perfect.accuracy.ci.low, perfect.accuracy.ci.high) == (1.0, 1.0)
    empty = classification_metrics([])
    assert empty.n == 0 and empty.accuracy.value is None and empty.f1.ci is None
    with pytest.raises(ValueError, match="gold answer must be yes or no"):
        classification_metrics([Prediction("s", "maybe", "yes")])


@pytest.mark.parametrize(("labels", "expected"), [
    (["yes", "yes", "yes", "no", "no"], "yes"),
    (["no", "no", "yes", "none", "blocked"], "no"),
    (["yes", "yes", "no", "no", "none"], "none"),      # tie for first
    (["none", "none", "none", "yes", "no"], "none"),   # none wins
    (["yes", "none", "none", "blocked", "no"], "none"),
    (["blocked", "blocked", "blocked", "yes", "no"], "blocked"),
    (["yes"], "yes"),
    ([], "none"),
])
def test_majority_vote(labels: list[str], expected: str) -> None:
    assert majority_vote(labels) == expected


def test_rank_and_consistency_by_hand() -> None:
    f1: dict[str, dict[str, float | None]] = {
        "2021-02": {"A": 0.5, "B": 0.7, "C": 0.3},
        "2021-01": {"A": 0.8, "B": 0.6, "C": 0.4},
        "2021-03": {"A": None, "B": 0.2, "C": 0.9},
    }
    rc = ranking_consistency(f1)
    assert rc.periods == ("2021-01", "2021-02", "2021-03")
    assert rc.ranks["2021-01"] == {"A": 1.0, "B": 2.0, "C": 3.0}
    assert rc.ranks["2021-03"] == {"C": 1.0, "B": 2.0}
    # 01 -> 02: ranks (1, 2, 3) vs (2, 1, 3): A/B discordant, A/C and B/C concordant = 1/3.
    # 02 -> 03 over B, C only: (1, 3) vs (2, 1): discordant = -1.
    assert rc.taus[0][:2] == ("2021-01", "2021-02") and rc.taus[0][3] == 3
    assert rc.taus[0][2] == pytest.approx(1 / 3)
    assert rc.taus[1] == ("2021-02", "2021-03", -1.0, 2)


def deployment_data() -> dict[str, list[Prediction]]:
    out: dict[str, list[Prediction]] = {"p1": [], "p2": [], "p3": [], VOTE: []}
    for period in ("P1", "P2", "P3", "P4"):
        train = period in ("P1", "P2")
        out["p1"] += preds("yes", ["yes", "yes"], period) + preds("no", ["yes", "yes"], period)
        out["p2"] += (preds("yes", ["yes", "no"] if train else ["no", "no"], period)
                      + preds("no", ["no", "no"], period))
        out["p3"] += (preds("yes", ["no", "no"] if train else ["yes", "yes"], period)
                      + preds("no", ["no", "no"], period))
        out[VOTE] += preds("yes", ["yes", "yes"], period) + preds("no", ["no", "no"], period)
    return out


def test_deployment_simulation_by_hand() -> None:
    d = deployment_simulation(deployment_data(), resamples=200)
    assert d.train_periods == ("P1", "P2") and d.test_periods == ("P3", "P4")
    assert [c.template for c in d.candidates] == ["p1", "p2", "p3"]  # the vote is no phrasing
    by = {c.template: c for c in d.candidates}
    # Train: p1 precision 4/8, recall 4/4; p2 precision 2/2, recall 2/4; p3 recall 0/4.
    assert by["p1"].train.precision.value == 0.5 and by["p1"].train.recall.value == 1.0
    assert by["p2"].train.precision.value == 1.0 and by["p2"].train.recall.value == 0.5
    assert by["p3"].train.recall.value == 0.0
    assert [c.eligible for c in d.candidates] == [True, True, False]
    assert d.chosen == "p2"
    chosen = d.chosen_candidate
    assert chosen is not None and chosen.test.recall.value == 0.0  # p2 stops saying yes later
    assert chosen.test.precision.value is None and chosen.test.f1.value == 0.0
    assert by["p3"].test.f1.value == 1.0  # the best later phrasing was not choosable
    strict = deployment_simulation(deployment_data(), min_recall=0.6, resamples=200)
    assert strict.chosen == "p1"
    assert strict.chosen_candidate is not None
    assert strict.chosen_candidate.test.f1.value == pytest.approx(2 / 3)  # 2*4 / (8 + 4)
    first = deployment_simulation(deployment_data(), train_periods=1, resamples=200)
    assert first.train_periods == ("P1",) and first.test_periods == ("P2", "P3", "P4")
    none = deployment_simulation(deployment_data(), min_recall=1.01, resamples=200)
    assert none.chosen is None and none.chosen_candidate is None


def test_default_train_periods() -> None:
    assert [default_train_periods(n) for n in range(6)] == [0, 0, 1, 2, 2, 3]


WHEN = dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
# Four notes, two periods; answers per template p1..p5 (vote in the comment).
ANSWERS: dict[str, tuple[str, str, str, str, tuple[str, ...]]] = {
    # id: (gold, period, quartile, votes, answers)
    "n1": ("yes", "2021-01", "Q1", "3", ("yes", "yes", "yes", "no", "none")),   # vote yes
    "n2": ("no", "2021-01", "Q2", "8", ("yes", "yes", "no", "no", "none")),     # tie: none
    "n3": ("yes", "2021-02", "Q1", "2", ("no", "no", "no", "yes", "blocked")),  # vote no
    "n4": ("no", "2021-02", "Q2", "9", ("yes", "yes", "yes", "no", "no")),      # vote yes
}


def run(run_id: str, system: str, flip: bool = False) -> RunResults:
    items = []
    for sid, (gold, period, quartile, votes, answers) in ANSWERS.items():
        for i, answer in enumerate(answers, 1):
            if flip:
                answer = {"yes": "no", "no": "yes"}.get(answer, answer)
            items.append(ScoredItem(
                sample_id=sid, template=f"p{i}", scorer="hellofresh-correct",
                value=1.0 if answer == gold else 0.0, label=answer,
                metadata={"label": gold, "period": period, "vote_quartile": quartile,
                          "vote_total": int(votes)},
                output=answer.capitalize(),
            ))
    info = RunInfo(run_id=run_id, benchmark="hellofresh-notes", system=system,
                   model="local:tiny", config={"breakdowns": ["period", "vote_quartile"],
                                               "scorers": ["hellofresh-correct"]},
                   code_version="0", model_hashes={}, created_at=WHEN, updated_at=WHEN)
    return RunResults(info=info, items=tuple(items))


def test_predictions_of_a_run_include_the_vote() -> None:
    p = predictions_of(run("r1", "zero-shot"))
    assert list(p) == ["p1", "p2", "p3", "p4", "p5", VOTE]
    assert [x.predicted for x in p[VOTE]] == ["yes", "none", "no", "yes"]
    m = classification_metrics(p[VOTE])
    # vote: n1 TP, n2 none (gold no), n3 FN, n4 FP -> precision 1/2, recall 1/2, accuracy 1/4.
    assert (m.tp, m.fp, m.fn, m.tn, m.none) == (1, 1, 1, 0, 1)
    assert m.accuracy.value == 0.25 and m.f1.value == 0.5
    quartiles = metrics_by(p[VOTE], lambda x: x.quartile)
    # Q1 = n1 (TP), n3 (FN): F1 = 2/3. Q2 = n2 (none, gold no), n4 (FP): F1 = 0.
    assert quartiles["Q1"].f1.value == pytest.approx(2 / 3)
    assert quartiles["Q2"].f1.value == 0.0


def test_analysis_of_two_runs() -> None:
    [a] = analyse([run("r1", "zero-shot"), run("r2", "search-agent", flip=True)],
                  ["zero-shot", "search"], resamples=200)
    assert a.benchmark == "hellofresh-notes" and a.periods == ("2021-01", "2021-02")
    assert a.templates == ("p1", "p2", "p3", "p4", "p5", VOTE)
    zs = a.runs[0]
    # 2021-01 vote: n1 TP, n2 none -> F1 = 2/(2+0+0) = 1; 2021-02: n3 FN, n4 FP -> F1 = 0.
    assert zs.per_period["2021-01"].f1.value == 1.0
    assert zs.per_period["2021-02"].f1.value == 0.0
    assert len(a.ranking.entries) == 12
    # 2021-01, zero-shot p1: n1 yes (TP), n2 yes (FP) -> F1 = 2/3.
    assert a.ranking.f1["2021-01"]["zero-shot · p1"] == pytest.approx(2 / 3)
    assert [(x, y) for x, y, _, _ in a.ranking.taus] == [("2021-01", "2021-02")]
    assert analyse([], []) == []


def test_report_shows_the_classification_section(tmp_path: Path) -> None:
    runs = [run("r1", "zero-shot"), run("r2", "search-agent", flip=True)]
    html_path, md_path = write_report(runs, tmp_path)
    md = md_path.read_text()
    assert "## Yes/no classification: hellofresh-notes" in md
    # zero-shot vote row: accuracy 0.250, precision 0.500, recall 0.500, F1 0.500.
    assert "| vote | 4 | 0.250 " in md and md.count("| 0.500 [") >= 1
    assert "Deployment: chosen on 2021-01, reported on 2021-02" in md
    html = html_path.read_text()
    assert 'id="classification"' in html and 'class="ranking"' in html
    assert html.count('class="deployment-chosen"') == 2
    assert "F1 by vote-count quartile" in html
    assert html.count("<svg") >= 5 + 5  # five classification charts, plus the runs' own


def test_reports_of_other_benchmarks_have_no_such_section(tmp_path: Path) -> None:
    other = run("r3", "vanilla")
    info: Any = other.info
    plain = RunResults(info=RunInfo(**{**info.__dict__, "benchmark": "wikicontradict"}),
                       items=other.items)
    html_path, md_path = write_report([plain], tmp_path)
    assert 'id="classification"' not in html_path.read_text()
    assert "Yes/no classification" not in md_path.read_text()


def with_dataset(results: RunResults, path: str, *, located: bool = False) -> RunResults:
    """A run on the file at ``path``, recorded as runs before (``dataset.path``) or since
    paths left run identities (``data_location.path``, with ``located``)."""
    info: Any = results.info
    config = ({**info.config, "dataset": {"sha256": "x"}, "data_location": {"path": path}}
              if located else {**info.config, "dataset": {"path": path, "sha256": "x"}})
    return RunResults(info=RunInfo(**{**info.__dict__, "config": config}), items=results.items)


def test_runs_on_different_datasets_are_analysed_apart(tmp_path: Path) -> None:
    runs = [with_dataset(run("r1", "zero-shot"), "/d/real.jsonl"),
            with_dataset(run("r2", "search-agent"), "/d/constructed.jsonl", located=True),
            with_dataset(run("r3", "control"), "/d/real.jsonl", located=True)]
    analyses = analyse(runs, ["a", "b", "c"], resamples=100)
    assert [(x.dataset, [r.label for r in x.runs]) for x in analyses] == [
        ("/d/real.jsonl", ["a", "c"]), ("/d/constructed.jsonl", ["b"])]
    _, md_path = write_report(runs, tmp_path)
    assert "Dataset `/d/real.jsonl`." in md_path.read_text()


def test_runs_of_different_benchmarks_are_not_paired(tmp_path: Path) -> None:
    other = run("r3", "vanilla")
    info: Any = other.info
    plain = RunResults(info=RunInfo(**{**info.__dict__, "benchmark": "wikicontradict"}),
                       items=other.items)
    _, md_path = write_report([run("r1", "zero-shot"), plain], tmp_path)
    assert "## Paired comparisons" not in md_path.read_text()
    _, md_path = write_report([run("r1", "zero-shot"), run("r2", "search")], tmp_path)
    assert "## Paired comparisons" in md_path.read_text()


def test_runs_of_one_benchmark_on_disjoint_samples_are_not_paired(tmp_path: Path) -> None:
    # The HelloFresh figure runs hellofresh-edits on the real and the constructed edits: no
    # sample in common, so a paired comparison would be a table of "no pairs".
    other = run("r2", "zero-shot")
    renamed = tuple(ScoredItem(**{**i.__dict__, "sample_id": "other-" + i.sample_id})
                    for i in other.items)
    _, md_path = write_report([run("r1", "zero-shot"), RunResults(other.info, renamed)],
                              tmp_path)
    assert "## Paired comparisons" not in md_path.read_text()


def regime_run(run_id: str, system: str, answers: dict[str, tuple[str, str]],
               backend: dict[str, Any] | None = None, model: str = "local:tiny",
               label: str = "") -> RunResults:
    """One phrasing, ``manual``: sample id -> (gold, answer)."""
    items = tuple(ScoredItem(
        sample_id=sid, template="manual", scorer="hellofresh-correct",
        value=1.0 if answer == gold else 0.0, label=answer,
        metadata={"label": gold, "period": "2021-01"}, output=answer)
        for sid, (gold, answer) in answers.items())
    info = RunInfo(run_id=run_id, benchmark="hellofresh-notes", system=system, model=model,
                   config={"scorers": ["hellofresh-correct"], "system_config": backend or {}},
                   code_version="0", model_hashes={}, created_at=WHEN, updated_at=WHEN,
                   label=label)
    return RunResults(info=info, items=items)


GOLD = ("yes", "yes", "yes", "no", "no", "no")
ZERO_SHOT = ("yes", "no", "no", "yes", "no", "no")      # TP 1, FP 1, FN 2: F1 = 2/5
SEARCH = ("yes", "yes", "none", "no", "no", "yes")      # TP 2, FP 1, FN 1: F1 = 4/6


def test_search_minus_zero_shot_f1_by_hand(tmp_path: Path) -> None:
    zero = regime_run("z", "zero-shot", {f"s{i}": (g, a) for i, (g, a) in
                                         enumerate(zip(GOLD, ZERO_SHOT, strict=True))},
                      label="zs")
    answers = {f"s{i}": (g, a) for i, (g, a) in enumerate(zip(GOLD, SEARCH, strict=True))}
    answers["s9"] = ("yes", "yes")  # answered by the search run only: not paired, left out
    web = {"backend": "searxng", "searxng_url": "http://127.0.0.1:8888", "control": False}
    search = regime_run("s", "search-agent", answers, web, label="web")
    control = regime_run("c", "search-agent", {k: (g, "no") for k, (g, _) in answers.items()},
                         {"backend": "wikipedia", "index": "default", "control": True},
                         label="ctrl")
    other_model = regime_run("o", "search-agent", answers, web, model="local:other")
    [a] = analyse([zero, search, control, other_model], ["zs", "web", "ctrl", "other"],
                  resamples=2000)
    assert [(c.search, c.zero_shot, c.backend, c.control) for c in a.regimes] == [
        ("web", "zs", "searxng (http://127.0.0.1:8888)", False),
        ("ctrl", "zs", "wikipedia (default)", True)]  # another model is not compared
    manual, vote = a.regimes[0].rows
    assert (manual.template, manual.n) == ("manual", 6)
    assert manual.zero_shot == pytest.approx(2 / 5) and manual.search == pytest.approx(4 / 6)
    assert manual.difference == pytest.approx(4 / 6 - 2 / 5)  # +0.267: the search helped
    assert manual.ci is not None and manual.ci.low < manual.difference < manual.ci.high
    assert vote.template == VOTE and vote.difference == pytest.approx(4 / 6 - 2 / 5)
    # Control answers "no" everywhere: F1 0 against 2/5.
    assert a.regimes[1].rows[0].difference == pytest.approx(-2 / 5)

    html_path, md_path = write_report([zero, search, control], tmp_path)
    md = md_path.read_text()
    assert ("F1 of web minus zs (the paper's Figure 5; positive: the search helped), search "
            "backend searxng (http://127.0.0.1:8888):") in md
    assert "| manual | 6 | 0.400 | 0.667 | 0.267 [" in md
    assert "control: unrelated summaries" in md and "| manual | 6 | 0.400 | 0.000 | -0.400" in md
    html = html_path.read_text()
    assert html.count('class="regimes"') == 2
    assert 'class="search-backend">searxng (http://127.0.0.1:8888)<' in html
    assert "F1 of the search agent minus zero-shot, by phrasing" in html


def test_paired_bootstrap_of_the_difference_resamples_samples_together() -> None:
    gold = ["yes"] * 10 + ["no"] * 10
    zero = ["yes"] * 5 + ["no"] * 5 + ["yes"] * 3 + ["no"] * 7
    search = ["yes"] * 8 + ["no"] * 2 + ["yes"] * 2 + ["no"] * 8
    z = [Prediction(f"s{i}", g, p) for i, (g, p) in enumerate(zip(gold, zero, strict=True))]
    s = [Prediction(f"s{i}", g, p) for i, (g, p) in enumerate(zip(gold, search, strict=True))]
    d = f1_difference("manual", z, s, resamples=20_000)
    # zero-shot: TP 5, FP 3, FN 5 -> 10/18; search: TP 8, FP 2, FN 2 -> 16/20.
    assert d.difference == pytest.approx(16 / 20 - 10 / 18)
    rng = np.random.default_rng(7)
    g = np.array([x == "yes" for x in gold])
    zy, sy = np.array([x == "yes" for x in zero]), np.array([x == "yes" for x in search])
    idx = rng.integers(0, 20, size=(20_000, 20))

    def f1(said: Any) -> Any:
        tp = (g[idx] & said[idx]).sum(1)
        return 2 * tp / (2 * tp + (~g[idx] & said[idx]).sum(1) + (g[idx] & ~said[idx]).sum(1))

    low, high = np.quantile(f1(sy) - f1(zy), [0.025, 0.975])
    assert d.ci is not None
    assert d.ci.low == pytest.approx(low, abs=0.03) and d.ci.high == pytest.approx(high, abs=0.03)
