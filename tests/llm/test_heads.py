"""The shared logistic head: fitted with scikit-learn, applied with numpy, same answers."""

from __future__ import annotations

import numpy as np
import pytest

from freshwiki.llm.heads import LogisticHead, fit_logistic_head


def _blobs(seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    centres = {"a": (3.0, 0.0, 0.0), "b": (0.0, 3.0, 0.0), "c": (0.0, 0.0, 3.0)}
    x, y = [], []
    for label, centre in centres.items():
        x.append(rng.normal(centre, 0.5, size=(20, 3)))
        y += [label] * 20
    return np.vstack(x), y


def test_a_fitted_head_separates_three_blobs_and_its_probabilities_sum_to_one() -> None:
    x, y = _blobs()
    head = fit_logistic_head(x, y, c=1.0)
    assert head.classes == ("a", "b", "c") and head.dim == 3 and head.shapes_agree()
    assert head.predict(x) == y
    probs = head.probabilities(x)
    assert np.allclose(probs.sum(axis=1), 1.0)
    flat = head.probabilities(x, temperature=100.0)
    assert flat.max() < probs.max()  # a high temperature flattens the distribution


def test_two_classes_use_one_row_and_bad_input_is_refused() -> None:
    x, y = _blobs()
    keep = [i for i, label in enumerate(y) if label != "c"]
    head = fit_logistic_head(x[keep], [y[i] for i in keep])
    assert len(head.coef) == 1 and head.predict(x[keep]) == [y[i] for i in keep]
    with pytest.raises(ValueError, match="two classes"):
        fit_logistic_head(x[:5], ["a"] * 5)
    with pytest.raises(ValueError, match="one label per row"):
        fit_logistic_head(x, ["a"])
    with pytest.raises(ValueError, match="temperature"):
        head.probabilities(x, temperature=0.0)
    damaged = LogisticHead(classes=("a", "b"), mean=(0.0,), scale=(1.0, 1.0),
                           coef=((1.0,),), intercept=(0.0,))
    assert not damaged.shapes_agree()


def test_fields_round_trip_and_a_missing_key_is_a_key_error() -> None:
    head = LogisticHead(classes=("a", "b"), mean=(0.5, -1.0), scale=(2.0, 1.0),
                        coef=((0.25, -3.0),), intercept=(0.125,))
    fields = head.to_fields()
    assert fields == {"classes": ["a", "b"], "scaler": {"mean": [0.5, -1.0], "scale": [2.0, 1.0]},
                      "coef": [[0.25, -3.0]], "intercept": [0.125]}
    assert LogisticHead.from_fields({**fields, "other": 1}) == head
    del fields["intercept"]
    with pytest.raises(KeyError):
        LogisticHead.from_fields(fields)
