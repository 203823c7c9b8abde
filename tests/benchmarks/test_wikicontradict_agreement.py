"""Agreement maths on small examples worked by hand, and the human-labels file format."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from freshwiki.benchmarks.wikicontradict import (
    HumanLabelsError,
    Selection,
    WikiContradict,
    agreement_report,
    builtin_human_labels,
    builtin_real_labels,
    confusion_matrix,
    load_human_labels,
    percent_agreement,
    precision_recall_f1,
    select_questions,
    template_spec,
)

C, P, N = "correct", "partially_correct", "incorrect"
A = [C, C, P, N, N, C]
B = [C, P, P, N, C, C]


def test_kappa_worked_by_hand() -> None:
    # p_o = 4/6 (positions 0, 2, 3, 5 agree).
    # A has C:3 P:1 N:2, B has C:3 P:2 N:1 (out of 6), so
    # p_e = (3*3 + 1*2 + 2*1) / 36 = 13/36 and kappa = (24/36 - 13/36) / (23/36) = 11/23.
    # (freshwiki.stats computes it; the report carries it.)
    assert percent_agreement(A, B) == pytest.approx(4 / 6)
    assert agreement_report(A, B).kappa == pytest.approx(11 / 23)
    assert agreement_report(B, A).kappa == pytest.approx(11 / 23)


def test_kappa_edge_cases() -> None:
    # one shared class: chance agreement is 1, kappa 0/0; the report says perfect agreement
    assert agreement_report([C, C], [C, C]).kappa == 1.0
    # systematic disagreement: p_o = 0, p_e = 1/2 -> kappa = -1
    assert agreement_report([C, N], [N, C]).kappa == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="differ in length"):
        agreement_report([C], [C, C])
    with pytest.raises(ValueError, match="no labels"):
        percent_agreement([], [])


def test_confusion_matrix_worked_by_hand() -> None:
    m = confusion_matrix(A, B)
    assert m == {
        C: {C: 2, P: 1, N: 0},
        P: {C: 0, P: 1, N: 0},
        N: {C: 1, P: 0, N: 1},
    }


def test_precision_recall_f1_on_correct() -> None:
    # gold A, predicted B: correct predicted at 0, 4, 5; gold correct at 0, 1, 5
    # tp = 2 (0, 5), fp = 1 (4), fn = 1 (1) -> P = R = F1 = 2/3
    s = precision_recall_f1(A, B)
    assert (s.true_positives, s.false_positives, s.false_negatives) == (2, 1, 1)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 / 3)
    # never predicting "correct": precision undefined -> 0, recall 0, F1 0
    none = precision_recall_f1([C, N], [N, N])
    assert (none.precision, none.recall, none.f1) == (0.0, 0.0, 0.0)
    # a different positive class: P predicted at 1, 2; gold P only at 2
    p = precision_recall_f1(A, B, positive=P)
    assert p.precision == pytest.approx(1 / 2)
    assert p.recall == 1.0


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = json.dumps({"sample_id": "wc-044-q1", "template": "4", "response": "761.", "label": P})


def test_import_reads_good_lines_and_skips_blank_ones(tmp_path: Path) -> None:
    labels = load_human_labels(_write(tmp_path, [GOOD, "", GOOD]))
    assert len(labels) == 2
    assert (labels[0].sample_id, labels[0].template, labels[0].response, labels[0].label) == (
        "wc-044-q1", "4", "761.", P,
    )


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (json.dumps({"sample_id": "x", "template": "4", "response": "r", "label": "right"}),
         r"labels\.jsonl:2: unknown label 'right'"),
        (json.dumps({"sample_id": "x", "template": "4", "label": C}),
         r"labels\.jsonl:2: field 'response' is missing or not a string"),
        (json.dumps({"sample_id": "x", "template": 4, "response": "r", "label": C}),
         r"labels\.jsonl:2: field 'template' is missing or not a string"),
        ("{oops", r"labels\.jsonl:2: not valid JSON"),
        ("[1, 2]", r"labels\.jsonl:2: expected a JSON object"),
    ],
)
def test_import_errors_name_file_and_line(tmp_path: Path, bad: str, message: str) -> None:
    with pytest.raises(HumanLabelsError, match=message) as err:
        load_human_labels(_write(tmp_path, [GOOD, bad]))
    assert err.value.hint


def test_missing_labels_file(tmp_path: Path) -> None:
    with pytest.raises(HumanLabelsError, match=r"nope\.jsonl not found"):
        load_human_labels(tmp_path / "nope.jsonl")


def test_builtin_validation_set_is_well_formed(wikicontradict: WikiContradict) -> None:
    labels = builtin_human_labels()
    ids = {s.id for s in wikicontradict.samples()}
    assert len(labels) == 40
    assert len({h.sample_id for h in labels}) == 40  # forty different samples
    assert {h.sample_id for h in labels} <= ids
    assert {h.template for h in labels} == {"4", "5"}
    assert Counter(h.label for h in labels) == {C: 14, P: 13, N: 13}


def test_agreement_report_worked_by_hand() -> None:
    gold = [C, C, C, P, P, N, N, N]
    pred = [C, P, C, P, N, N, C, N]
    # C: predicted at 0, 2, 6; gold at 0, 1, 2 -> tp 2, fp 1 (6), fn 1 (1): P = R = F1 = 2/3
    # P: predicted at 1, 3; gold at 3, 4 -> tp 1, fp 1, fn 1: P = R = F1 = 1/2
    # N: predicted at 4, 5, 7; gold at 5, 6, 7 -> tp 2, fp 1 (4), fn 1 (6): 2/3 each
    report = agreement_report(gold, pred)
    expected = {C: (2 / 3, 2 / 3, 2 / 3, 2, 1, 1), P: (1 / 2, 1 / 2, 1 / 2, 1, 1, 1),
                N: (2 / 3, 2 / 3, 2 / 3, 2, 1, 1)}
    for label, (precision, recall, f1, tp, fp, fn) in expected.items():
        s = report.per_class[label]
        assert (s.precision, s.recall, s.f1) == pytest.approx((precision, recall, f1)), label
        assert (s.true_positives, s.false_positives, s.false_negatives) == (tp, fp, fn), label
    assert report.n == 8
    assert report.macro_f1 == pytest.approx(11 / 18)  # (2/3 + 1/2 + 2/3) / 3
    assert report.accuracy == pytest.approx(5 / 8)  # agree at 0, 2, 3, 5, 7
    # both sides C:3 P:2 N:3 -> p_e = (9 + 4 + 9) / 64; kappa = (40 - 22) / (64 - 22) = 3/7
    assert report.kappa == pytest.approx(3 / 7)
    assert report.confusion == {C: {C: 2, P: 1, N: 0}, P: {C: 0, P: 1, N: 1},
                                N: {C: 1, P: 0, N: 2}}
    as_json = json.loads(json.dumps(report.to_json()))
    p_row = as_json["per_class"][P]
    assert {k: p_row[k] for k in ("precision", "recall", "f1", "tp", "fp", "fn")} == {
        "precision": 0.5, "recall": 0.5, "f1": 0.5, "tp": 1, "fp": 1, "fn": 1}
    # Wilson 95 % for 1 of 2, by hand: centre (0.5 + 1.96^2/4) / (1 + 1.96^2/2) = 0.5,
    # half-width 1.96 * sqrt(0.125 + 1.96^2/16) / 2.9208 = 0.40548 -> [0.0945, 0.9055]
    assert p_row["precision_ci95"] == pytest.approx([0.0945, 0.9055], abs=1e-4)
    assert p_row["recall_ci95"] == pytest.approx([0.0945, 0.9055], abs=1e-4)
    assert as_json["macro_f1"] == pytest.approx(11 / 18)


def test_macro_f1_leaves_out_a_class_nobody_used() -> None:
    # no P on either side. C: tp 1, fp 1 (2), fn 0 -> F1 2/3; N: tp 2, fp 0, fn 1 (2) ->
    # P 1, R 2/3, F1 4/5. Macro over C and N = (2/3 + 4/5) / 2 = 11/15 (with P's 0: 22/45).
    report = agreement_report([C, N, N, N], [C, N, C, N])
    assert report.per_class[C].f1 == pytest.approx(2 / 3)
    assert report.per_class[N].f1 == pytest.approx(4 / 5)
    assert report.per_class[P].f1 == 0.0
    assert report.macro_f1 == pytest.approx(11 / 15)


def test_optional_fields_are_read_and_checked(tmp_path: Path) -> None:
    full = json.dumps({"sample_id": "wc-044-q1", "template": "5", "response": "761.",
                       "label": P, "model": "local:qwen2.5-coder-0.5b", "system": "rag",
                       "reason": "gives passage 1's figure only", "run_id": "abc123",
                       "labeller": "someone"})
    plain, labelled = load_human_labels(_write(tmp_path, [GOOD, full]))
    assert (plain.model, plain.system, plain.reason, plain.run_id) == ("", "", "", "")
    assert (labelled.model, labelled.system, labelled.reason, labelled.run_id) == (
        "local:qwen2.5-coder-0.5b", "rag", "gives passage 1's figure only", "abc123")
    bad = json.dumps({"sample_id": "x", "template": "4", "response": "r", "label": C,
                      "model": 3})
    with pytest.raises(HumanLabelsError, match=r"labels\.jsonl:2: field 'model' is not a "):
        load_human_labels(_write(tmp_path, [GOOD, bad]))


def test_report_intervals_use_z_196_as_the_result_files_were_made() -> None:
    # Class "correct" of A vs B: tp = 2, fp = 1, fn = 1, so P = 2/3 and R = 2/3 with n = 3.
    # Wilson with z = 1.96, n = 3, p = 2/3: z²/n = 1.28053, centre = (0.66667 + 0.64027) /
    # 2.28053 = 0.57309; half = 1.96 * sqrt(0.074074 + 0.106711) / 2.28053 = 0.36542
    # -> [0.20767, 0.93851].
    row = agreement_report(A, B).to_json()["per_class"][C]
    assert row["precision_ci95"] == pytest.approx((0.20767, 0.93851), abs=1e-4)
    assert row["recall_ci95"] == row["precision_ci95"]


def test_builtin_real_set_is_well_formed_and_traceable(wikicontradict: WikiContradict) -> None:
    labels = builtin_real_labels()
    samples = {s.id: s for s in wikicontradict.samples()}
    assert len(labels) == 180
    assert {h.model for h in labels} == {"local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b",
                                         "local:smollm2-135m"}
    assert {h.system for h in labels} == {"vanilla", "rag"}
    assert {h.template for h in labels} == {"1", "4", "5"}
    assert Counter(h.label for h in labels) == {C: 6, P: 146, N: 28}  # counted when labelling
    assert len({(h.run_id, h.sample_id, h.template) for h in labels}) == 180
    for h in labels:
        assert h.reason.strip() and h.run_id and h.response.strip(), h
        assert h.label in template_spec(h.template).classes
    # every response answers a question its run's seeded selection holds (sample=9, seed=s)
    raw = resources.files("freshwiki.benchmarks.wikicontradict").joinpath(
        "validation/real_labels.jsonl").read_text(encoding="utf-8")
    for line in raw.splitlines():
        item = json.loads(line)
        chosen = select_questions(list(samples.values()),
                                  Selection(item["selection"]["sample"], item["selection"]["seed"]))
        assert item["sample_id"] in {s.id for s in chosen}
        assert item["labeller"] and item["method"] and item["date"] == "2026-11-25"
        assert item["contradiction"] == samples[item["sample_id"]].metadata["contradiction"]


def test_detection_set_is_well_formed_and_traceable(wikicontradict: WikiContradict) -> None:
    """The labels read for one run's 5.2-5.4 answers (experiments/wikicontradict_run.py)."""
    path = resources.files("freshwiki.benchmarks.wikicontradict").joinpath(
        "validation/real_labels_detection.jsonl")
    labels = load_human_labels(Path(str(path)))
    samples = {s.id: s for s in wikicontradict.samples()}
    revised = {s for s in samples if wikicontradict.applies(samples[s], "5.3")}
    assert len(labels) == 129
    assert Counter(h.template for h in labels) == {"5.2": 49, "5.3": 40, "5.4": 40}
    # counted when labelling (helper report): 5.2 4 / 45, 5.3 32 / 8, 5.4 32 / 8
    assert Counter((h.template, h.label) for h in labels) == {
        ("5.2", C): 4, ("5.2", N): 45, ("5.3", C): 32, ("5.3", N): 8, ("5.4", C): 32,
        ("5.4", N): 8}
    assert len({(h.sample_id, h.template) for h in labels}) == 129
    assert {h.run_id for h in labels} == {"46dd339781c1"}
    for h in labels:
        assert h.reason.strip() and h.response.strip(), h
        assert h.label in template_spec(h.template).classes
        assert h.sample_id in samples
        assert h.template == "5.2" or h.sample_id in revised  # 5.3 / 5.4: revised questions


SINGLE_RULE = ("correct when the response gives the answer of the passage shown (passage {n}, gold "
               "answer {n}) and not the other gold answer as well (extra material is allowed only "
               "when it does not contradict that answer); otherwise incorrect")


def test_single_passage_set_is_well_formed_and_traceable(wikicontradict: WikiContradict) -> None:
    """The labels read for run 6c4800fe2123's template 2 and 3 answers (one passage shown)."""
    path = resources.files("freshwiki.benchmarks.wikicontradict").joinpath(
        "validation/real_labels_single.jsonl")
    labels = load_human_labels(Path(str(path)))
    samples = list(wikicontradict.samples())
    first = {s.id for s in samples[:49]}  # the run's --limit 49 (items 0-41)
    targets = {s.id: list(s.targets) for s in samples}
    assert len(labels) == 98
    assert Counter(h.template for h in labels) == {"2": 49, "3": 49}
    # counted when labelling (helper report): 2: 42 correct / 7 incorrect, 3: 37 / 12
    assert Counter((h.template, h.label) for h in labels) == {
        ("2", C): 42, ("2", N): 7, ("3", C): 37, ("3", N): 12}
    assert {h.sample_id for h in labels if h.template == "2"} == first
    assert {h.sample_id for h in labels if h.template == "3"} == first
    assert len({(h.sample_id, h.template) for h in labels}) == 98
    assert {(h.run_id, h.model, h.system) for h in labels} == {
        ("6c4800fe2123", "local:qwen2.5-coder-1.5b", "vanilla")}
    for h in labels:
        assert h.reason.strip() and h.response.strip(), h
        assert template_spec(h.template).rule == "one_answer"
        assert h.label in template_spec(h.template).classes
    raw = Path(str(path)).read_text(encoding="utf-8")
    keys = [(h.template, h.sample_id) for h in labels]
    assert keys == sorted(keys, key=lambda k: (float(k[0]), k[1]))  # by template, then sample
    for line in raw.splitlines():
        item = json.loads(line)
        n = 1 + template_spec(item["template"]).expected
        assert item["rule"] == SINGLE_RULE.format(n=n)
        assert item["gold"] == targets[item["sample_id"]]
        assert item["labeller"] and "6c4800fe2123" in item["method"]
        assert item["date"] == "2026-11-26"
