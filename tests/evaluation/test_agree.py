"""``runs agree``: a stored run's verdicts against labels, on a store built by hand.

Expected values are worked out by hand from the table in :func:`build` (see the comments),
not read off the code.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.evaluation import (
    LabelsError,
    ResultsStore,
    RunInfo,
    agree,
    agree_runs,
    read_labels,
    split_labels,
)

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
RUN = "a9ee00000001"
C, W = "correct", "incorrect"  # W: wrong
# sample -> (the judge's label, the matcher's label); s1..s6 are labelled correct by the
# person, s7..s10 incorrect (see LABELS).
VERDICTS = {
    "s1": (C, C), "s2": (C, C), "s3": (C, W), "s4": (C, W), "s5": (C, C), "s6": (W, W),
    "s7": (C, W), "s8": (W, W), "s9": (W, W), "s10": (W, C), "s12": (C, C),
}


def build(path: Path) -> ResultsStore:
    store = ResultsStore(path)
    store.open_run(RunInfo(run_id=RUN, benchmark="tiny", system="vanilla", model="scripted:x",
                           config={"templates": ["plain"], "scorers": ["judge", "match"]},
                           code_version="0", model_hashes={"model": "m"}, created_at=NOW,
                           updated_at=NOW, label="vanilla/scripted:x"))
    for index, (sample_id, (judge, match)) in enumerate(VERDICTS.items()):
        sample = Sample(id=sample_id, input="q", targets=("a",))
        store.commit_output(RUN, sample, "plain", Output(f"answer {sample_id}"),
                            sample_index=index)
        for scorer, label in (("judge", judge), ("match", match)):
            store.commit_score(RUN, sample_id, "plain", scorer,
                               Score(1.0 if label == C else 0.0, label=label))
        store.commit_score(RUN, sample_id, "plain", "length", Score(0.5))  # no label
    return store


def labels_file(path: Path) -> Path:
    rows = [{"sample_id": f"s{k}", "template": "plain", "label": C if k <= 6 else W,
             "response": f"answer  s{k}\n", "labeller": "reader A"} for k in range(1, 11)]
    rows += [
        {"sample_id": "s11", "template": "plain", "label": C},  # the run has no s11
        {"sample_id": "s12", "template": "plain", "label": W, "response": "another text"},
        {"sample_id": "s1", "template": "plain", "label": W, "scorer": "match",
         "labeller": "reader B"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_kappa_and_per_class_scores_match_the_hand_count(tmp_path: Path) -> None:
    with build(tmp_path / "runs.sqlite") as store:
        run = store.load_run(RUN)
    path = labels_file(tmp_path / "labels.jsonl")
    result = agree(run, read_labels(path), path, "judge", resamples=500)
    # Person vs judge over s1..s10 (s11: no verdict; s12: other text; the s1 "match" row is
    # for another scorer):
    #   person C: s1-s6, judge says C on s1-s5, W on s6      -> 5 C/C, 1 C/W
    #   person W: s7-s10, judge says C on s7, W on s8-s10   -> 1 W/C, 3 W/W
    # confusion [[5, 1], [1, 3]], n 10, agreement 8/10.
    # kappa = (n*diag - sum(row*col)) / (n^2 - sum(row*col)); rows (6, 4), cols (6, 4):
    #   (10*8 - (36 + 16)) / (100 - 52) = 28 / 48 = 0.583333...
    # correct: TP 5, FP 1 (s7), FN 1 (s6): P = R = 5/6, F1 = 10/12.
    # incorrect: TP 3, FP 1 (s6), FN 1 (s7): P = R = 3/4, F1 = 6/8. Macro F1 = 0.791666...
    assert result.classes == (C, W) and result.matrix == ((5, 1), (1, 3))
    assert result.n == 10 and result.accuracy == pytest.approx(0.8)
    assert result.kappa == pytest.approx(28 / 48)
    per = {c.label: c for c in result.per_class}
    assert (per[C].precision, per[C].recall, per[C].f1) == pytest.approx((5 / 6, 5 / 6, 5 / 6))
    assert (per[W].precision, per[W].recall, per[W].f1) == pytest.approx((0.75, 0.75, 0.75))
    assert (per[C].support, per[C].predicted, per[W].support) == (6, 6, 4)
    assert result.macro_f1 == pytest.approx((5 / 6 + 0.75) / 2)
    # Wilson 95 % for 8/10, by hand: z^2 = 3.8415, centre (0.8 + 0.19207) / 1.38415 = 0.71681,
    # half-width 1.95996 * sqrt(0.016 + 0.0096037) / 1.38415 = 0.22658 -> (0.4902, 0.9434).
    assert result.accuracy_ci is not None
    assert (result.accuracy_ci.low, result.accuracy_ci.high) == pytest.approx(
        (0.4902, 0.9434), abs=2e-4)
    assert result.kappa_ci is not None and result.kappa_ci.low < 28 / 48 < result.kappa_ci.high
    assert result.no_verdict == ("s11/plain",) and result.text_differs == ("s12/plain",)
    assert result.other_scorer == 1 and result.labellers == ("reader A", "reader B")


def test_the_matcher_is_compared_with_its_own_labels(tmp_path: Path) -> None:
    with build(tmp_path / "runs.sqlite") as store:
        run = store.load_run(RUN)
    path = labels_file(tmp_path / "labels.jsonl")
    result = agree(run, read_labels(path), path, "match", resamples=200)
    # The "match" row for s1 says W where the general row says C: both count for the matcher
    # (the file's rows are not merged), so s1 is compared twice: W/C and C/C.
    # Person vs matcher: C rows s1-s6 -> C,C,W,W,C,W (3 C/C, 3 C/W) plus the s1 row W/C;
    # W rows s7-s10 -> W,W,W,C (3 W/W, 1 W/C). Confusion [[3, 3], [2, 3]], n 11.
    assert result.matrix == ((3, 3), (2, 3)) and result.n == 11 and result.other_scorer == 0


def test_bad_scorer_choice_and_bad_labels_are_explained(tmp_path: Path) -> None:
    with build(tmp_path / "runs.sqlite") as store:
        run = store.load_run(RUN)
    path = labels_file(tmp_path / "labels.jsonl")
    with pytest.raises(LabelsError, match=r"2 scorers that give labels \(judge, match\)"):
        agree(run, read_labels(path), path)
    with pytest.raises(LabelsError, match="no labels from scorer 'length'"):
        agree(run, read_labels(path), path, "length")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sample_id": "s1", "template": "plain", "label": "correct"}\n'
                   '{"sample_id": "s2", "template": "plain"}\n')
    with pytest.raises(LabelsError, match=r"bad\.jsonl:2: label is missing"):
        read_labels(bad)
    bad.write_text('{"sample_id": "s1", "template": "plain", "label": "correct"}\n\n'
                   '{"sample_id": "s1", "template": "plain", "label": "incorrect"}\n')
    with pytest.raises(LabelsError, match=r"bad\.jsonl:3: s1/plain is labelled 'incorrect' "
                       "here and 'correct' at line 1"):
        read_labels(bad)


RUN_B = "b0b000000002"


def add_run_b(store: ResultsStore) -> None:
    """A second run (another producer's answers to s1..s4): other texts, the judge says W."""
    store.open_run(RunInfo(run_id=RUN_B, benchmark="tiny", system="replay", model="scripted:x",
                           config={"templates": ["plain"], "scorers": ["judge"]},
                           code_version="0", model_hashes={"model": "m"}, created_at=NOW,
                           updated_at=NOW, label="replay/scripted:x"))
    for index in range(1, 5):
        sample = Sample(id=f"s{index}", input="q", targets=("a",))
        store.commit_output(RUN_B, sample, "plain", Output(f"other answer s{index}"),
                            sample_index=index)
        store.commit_score(RUN_B, f"s{index}", "plain", "judge", Score(0.0, label=W))


def pooled_labels(path: Path) -> Path:
    labels_file(path)
    more = [{"sample_id": f"s{k}", "template": "plain", "label": C,
             "response": f"other answer s{k}"} for k in range(1, 5)]
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in more))
    return path


def test_several_runs_pool_each_label_in_the_run_holding_its_text(tmp_path: Path) -> None:
    with build(tmp_path / "runs.sqlite") as store:
        add_run_b(store)
        runs = [store.load_run(RUN), store.load_run(RUN_B)]
    path = pooled_labels(tmp_path / "labels.jsonl")
    rows = read_labels(path)
    routed = split_labels(runs, rows, "judge")
    # Run A takes its 10 read texts plus s11 (held by no run) and s12 (another text); run B
    # the 4 "other answer" rows; the "match" row stays with run A (counted as another scorer).
    assert [(run.info.run_id, len(labels)) for run, labels in routed] == [(RUN, 13),
                                                                          (RUN_B, 4)]
    result = agree_runs(routed, path, "judge", resamples=200)
    # Run A as in the first test: [[5, 1], [1, 3]]; run B: 4 labelled C, judged W -> C/W + 4.
    # Pooled [[5, 5], [1, 3]], n 14, agreement 8. Rows (10, 4), columns (6, 8):
    #   kappa = (14*8 - (60 + 32)) / (14^2 - (60 + 32)) = 20 / 104.
    assert result.matrix == ((5, 5), (1, 3)) and result.n == 14
    assert result.kappa == pytest.approx(20 / 104)
    assert result.run_id == f"{RUN}+{RUN_B}"
    assert result.no_verdict == (f"{RUN}:s11/plain",)
    assert result.text_differs == (f"{RUN}:s12/plain",)
    # One run alone is what `agree` gives.
    alone = agree_runs(split_labels(runs[:1], rows, "judge"), path, "judge", resamples=200)
    assert alone.matrix == agree(runs[0], rows, path, "judge", resamples=200).matrix
    with pytest.raises(LabelsError, match="no run"):
        agree_runs([], path, "judge")
