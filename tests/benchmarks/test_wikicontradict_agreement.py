"""Agreement maths on small examples worked by hand, and the human-labels file format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from freshwiki.benchmarks.wikicontradict import (
    HumanLabelsError,
    WikiContradict,
    builtin_human_labels,
    cohens_kappa,
    confusion_matrix,
    load_human_labels,
    percent_agreement,
    precision_recall_f1,
)

C, P, N = "correct", "partially_correct", "incorrect"
A = [C, C, P, N, N, C]
B = [C, P, P, N, C, C]


def test_kappa_worked_by_hand() -> None:
    # p_o = 4/6 (positions 0, 2, 3, 5 agree).
    # A has C:3 P:1 N:2, B has C:3 P:2 N:1 (out of 6), so
    # p_e = (3*3 + 1*2 + 2*1) / 36 = 13/36 and kappa = (24/36 - 13/36) / (23/36) = 11/23.
    assert percent_agreement(A, B) == pytest.approx(4 / 6)
    assert cohens_kappa(A, B) == pytest.approx(11 / 23)
    assert cohens_kappa(B, A) == pytest.approx(11 / 23)


def test_kappa_edge_cases() -> None:
    assert cohens_kappa([C, C], [C, C]) == 1.0  # one shared class: perfect, not 0/0
    # systematic disagreement: p_o = 0, p_e = 1/2 -> kappa = -1
    assert cohens_kappa([C, N], [N, C]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="differ in length"):
        cohens_kappa([C], [C, C])
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
