"""The diff and measurement pieces, on small hand-made inputs."""

from __future__ import annotations

from freshwiki.changes.edits.paragraphs import (
    SectionChange,
    changed_text,
    contains_run,
    judge_substance,
    only_urls_changed,
    words,
)


def test_changed_text_fragments() -> None:
    deleted, added = changed_text("The cat sat on the mat.", "The dog sat on the red mat.")
    assert deleted == ["cat"]
    assert added == ["dog", "red"]


def test_judge_substance_counts_without_urls() -> None:
    assert judge_substance("", "x" * 51) == ("ok", 51)
    assert judge_substance("", "x" * 50) == ("too_short", 50)
    assert judge_substance("See https://a.example/p/q here.", "See https://b.example/r here.") == (
        "url_only", 0)
    assert judge_substance("Text ''", "Text |}")[0] == "markup_only"
    # 40 characters of text plus a long URL: the URL does not make it substantial
    assert judge_substance("", "y" * 40 + " https://example.org/" + "z" * 60) == (
        "too_short", 40)


def test_only_urls_changed() -> None:
    assert only_urls_changed("See [http://a.org/x site].\nEnd", "See [http://b.org/y site].\nEnd")
    assert not only_urls_changed("See [[Leeds]].", "See [[York]].")
    assert not only_urls_changed("same", "same")


def test_undone_share() -> None:
    before, after = words("a b c"), words("a b c d e f g")
    change = SectionChange.between(before, after)
    assert change.undone_by(words("a b c")) == 1.0
    assert change.undone_by(after) == 0.0
    assert change.undone_by(words("a b c d")) == 0.75  # e, f, g gone out of d, e, f, g


def test_contains_run() -> None:
    assert contains_run(("a", "b", "c"), ("b", "c"))
    assert not contains_run(("a", "b", "c"), ("a", "c"))
    assert contains_run(("a",), ())
