"""The GrowOVER figure's constructed earlier revisions (experiments/growover_run.py).

The script builds the two earlier snapshots of real articles backwards from the real text, so
that New and Changed facts at the last snapshot are real Wikipedia. Here the construction goes
through the real wikitext cleaner, segmenter and aligner, and every sentence must come out
with the label the design gives it.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

import pytest

from freshwiki.changes.snapshots import Aligner, Alignment, snapshot_of
from freshwiki.corpus import iter_latest
from freshwiki.records import Revision
from tests.benchmarks.growover.helpers import experiment_script


def _script() -> ModuleType:
    return experiment_script("growover_run")


def test_last_sentence_start_respects_links_templates_and_refs() -> None:
    run = _script()
    line = ("Alpha is a [[town. Really]] in {{lang|x|Y. Z}}.<ref>A. Book.</ref> "
            "It has a river.<ref name=a/> The mayor is Bea.")
    cut = run.last_sentence_start(line)
    assert line[:cut] == ("Alpha is a [[town. Really]] in {{lang|x|Y. Z}}.<ref>A. Book.</ref> "
                          "It has a river.<ref name=a/>")
    assert run.last_sentence_start("Only one sentence here.") is None
    # Inside a reference, a full stop is not a boundary.
    assert run.last_sentence_start("One.<ref>Two. Three.</ref>") is None


def test_prose_lines_skip_multi_line_templates_and_references() -> None:
    run = _script()
    lines = ["{{Infobox thing", "| name = Alpha", "| founded = 1900", "}}",
             "Alpha is a town. It has 1,200 people.", "<ref>", "Smith. 1999.", "</ref>",
             "== History ==", "* a list item", "It grew. It shrank."]
    assert run.prose_lines(lines) == [False, False, False, False, True, False, False, False,
                                      False, False, True]


@pytest.fixture(scope="module")
def real_article(shared_data: Path) -> Revision:
    dump = shared_data / "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"
    return next(itertools.islice(
        (r for r in iter_latest(dump) if r.page.title == "Albedo"), 1))


def test_backward_construction_yields_the_designed_labels(real_article: Revision) -> None:
    run = _script()
    real = real_article.text
    versions = [run.earlier_revision(real, 2), run.earlier_revision(real, 1), real]
    snaps = [snapshot_of(Revision(real_article.page, real_article.id * 10 + k,
                                  real_article.timestamp, text))
             for k, text in enumerate(versions)]
    aligner = Aligner(None)  # no encoder: every sentence must be settled by the cheap steps
    first, second = aligner.align(snaps[0], snaps[1]), aligner.align(snaps[1], snaps[2])
    # Albedo, checked by hand: two numbers of the real text ("30 to 35%", "about 15 °C") are
    # lowered by one per step back; three real sentences appear at the middle snapshot and
    # one at the last; nothing is deleted; no sentence needs an embedding to be labelled.
    def changed(result: Alignment) -> list[tuple[str, str]]:
        return [(_number_context(result.old.texts[i]), _number_context(result.new.texts[j]))
                for i, j in result.changed]

    assert changed(first) == [("28 to 35%", "29 to 35%"), ("13 °C", "14 °C")]
    assert changed(second) == [("29 to 35%", "30 to 35%"), ("14 °C", "15 °C")]
    new_at_1 = [snaps[1].texts[j] for j in first.new_indices]
    new_at_2 = [snaps[2].texts[j] for j in second.new_indices]
    assert [s.split()[:3] for s in new_at_1] == [["In", "practice,", "a"],
                                                 ["As", "the", "total"],
                                                 ["These", "terms", "are"]]
    assert len(new_at_2) == 1 and new_at_2[0].endswith("perfect reflection of a white surface.")
    assert first.deleted == second.deleted == []
    assert first.embedded == second.embedded == 0
    # The last snapshot is the real text.
    assert versions[2] == real


def _number_context(sentence: str) -> str:
    import re

    match = re.search(r"\d+ to \d+%|\d+ °C", sentence)
    assert match, sentence
    return match.group(0)
