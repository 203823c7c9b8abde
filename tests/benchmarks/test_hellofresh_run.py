"""An edits run on the default (paper's) phrasings through the real CLI, with a scripted model.

The edits set had no ``r3``/``r4`` for a while and a default run then failed two phrasings
in five; this runs all five as a user would (``freshwiki eval hellofresh-edits``, the
dataset where ``edits build`` puts it) and checks every answer was asked, stored and scored.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from freshwiki.benchmarks import load_benchmark
from freshwiki.changes.edits import Edit, LabelledEdit, build_balanced, write_balanced
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore
from tests.cli.invoke import run_main

MON = dt.datetime(2024, 3, 4, 12, tzinfo=dt.UTC)  # ISO week 2024-W10


def edit(page: int, rev: int, when: dt.datetime, label: str) -> LabelledEdit:
    return LabelledEdit(
        edit=Edit(page_id=page, title=f"Town {page}", revision_id=rev, parent_id=rev - 1,
                  timestamp=when, comment=None, user_type="registered", user="U",
                  section_path=("History",), paragraph_before="The town was founded in 1850.",
                  paragraph_after=f"The town was founded in 1850 by settlers {rev}.",
                  deleted_text="", added_text=f"by settlers {rev}", kind="replace",
                  chars_changed=20, article_paragraphs=10),
        label=label, later_edits_required=3, decided_at=rev + 5,  # type: ignore[arg-type]
    )


def test_an_edits_run_on_the_default_phrasings_asks_all_five(
    _isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], settings: Settings,
) -> None:
    edits = [edit(1, 101, MON, "accepted"), edit(2, 201, MON, "rejected"),
             edit(3, 301, MON + dt.timedelta(days=1), "accepted"),
             edit(4, 401, MON + dt.timedelta(days=1), "rejected")]
    dataset = build_balanced(edits, period="week", seed=0)
    assert write_balanced(dataset, _isolated_home / "edits" / "balanced-week-seed0.jsonl",
                          period="week", seed=0) == 4
    # One worker asks sample by sample, five phrasings each: the scripted model says yes to
    # the first and third sample and no to the others, except one "Maybe" (parsed as none)
    # for the second sample's r3.
    answers = ["Yes"] * 5 + ["No", "No.", "no", "Maybe", "No"] + ["yes"] * 5 + ["No"] * 5
    model = tmp_path / "model.jsonl"
    model.write_text("".join(json.dumps({"text": a}) + "\n" for a in answers))

    code, out, err = run_main(
        ["eval", "hellofresh-edits", "--system", "zero-shot", "--model", f"scripted:{model}",
         "--judge", "none", "--concurrency", "1", "--json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["config"]["templates"] == ["manual", "r1", "r2", "r3", "r4"]
    assert (summary["items"], summary["new_outputs"], summary["complete"]) == (20, 20, 20)
    assert summary["failures"] == []

    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        results = store.load_run(summary["run_id"])
    assert not results.failures
    labels = {(i.sample_id, i.template): i.label for i in results.items}
    order = [s.id for s in load_benchmark("hellofresh-edits", settings).samples()]
    assert order == ["edit-1-101", "edit-2-201", "edit-3-301", "edit-4-401"]  # the run's order
    templates = ("manual", "r1", "r2", "r3", "r4")
    assert [labels[(s, t)] for s in order for t in templates] == (
        ["yes"] * 5 + ["no", "no", "no", "none", "no"] + ["yes"] * 5 + ["no"] * 5)
    # Gold: yes, no, yes, no. Every answer is right but the "Maybe": 19 of 20.
    correct = sum(i.value for i in results.items)
    assert correct == 19
