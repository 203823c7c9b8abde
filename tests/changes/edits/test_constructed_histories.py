"""The constructed edit histories (experiments/construct_edit_histories.py) against the labeller.

The generator writes real articles with designed revision sequences and records, per
revision, the label its design intends (from the design alone: an edit left alone for N
later edits is accepted, a reverted one rejected, ...). Here a small set is labelled and
every intended label must come out, and the weekly balanced dataset must exist.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from freshwiki.changes.edits import Discarded, LabelledEdit, build_balanced, label_history

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "construct_edit_histories.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("construct_edit_histories", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def constructed(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[
        dict[int, dict[str, object]], list[LabelledEdit | Discarded]]:
    gen = _generator()
    out = tmp_path_factory.mktemp("constructed") / "history.xml"
    source = shared_data / "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"
    made = gen.construct(out, articles=3, seed=1, source=source)
    assert made.sidecar.is_file()
    assert gen.read_intended(made.sidecar) == made.intended
    return made.intended, list(label_history([out]))


def test_design_has_every_kind_of_outcome(
        constructed: tuple[dict[int, dict[str, object]], list[LabelledEdit | Discarded]]) -> None:
    intended, _ = constructed
    wanted = Counter(str(v["intended"]) for v in intended.values())
    assert wanted["accepted"] >= 20
    assert wanted["rejected"] >= 10
    reasons = {v["reason"] for v in intended.values() if v["intended"] == "discarded"}
    assert {"missing_parent", "markup_only", "changed_before_stable"} <= reasons
    assert {v["user_type"] for v in intended.values() if v["intended"] == "rejected"} >= {"ip"}


def test_labeller_gives_every_intended_label(
        constructed: tuple[dict[int, dict[str, object]], list[LabelledEdit | Discarded]]) -> None:
    intended, outcomes = constructed
    got: dict[int, tuple[str, str | None]] = {}
    for outcome in outcomes:
        if isinstance(outcome, LabelledEdit):
            got[outcome.edit.revision_id] = (outcome.label, None)
        else:
            got[outcome.revision_id] = ("discarded", outcome.reason)
    assert set(got) == set(intended)  # one outcome per revision written
    for rev_id, want in intended.items():
        label, reason = got[rev_id]
        if want["intended"] in ("accepted", "rejected"):
            assert label == want["intended"], (rev_id, want, label, reason)
        else:
            assert (label, reason) == ("discarded", want["reason"]), (rev_id, want, label)


def test_weekly_balanced_dataset(
        constructed: tuple[dict[int, dict[str, object]], list[LabelledEdit | Discarded]]) -> None:
    _, outcomes = constructed
    labelled = [o for o in outcomes if isinstance(o, LabelledEdit)]
    dataset = build_balanced(labelled, period="week", seed=0)
    assert len(dataset) >= 3
    for week, items in dataset.items():
        tally = Counter(item.label for item in items)
        assert tally["accepted"] == tally["rejected"] > 0, week
