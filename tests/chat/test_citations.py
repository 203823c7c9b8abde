from __future__ import annotations

from freshwiki.chat import Evidence
from freshwiki.chat._evidence import PassageBook
from freshwiki.chat.citations import CitationRewriter


def book_of(n: int) -> PassageBook:
    book = PassageBook()
    for i in range(1, n + 1):
        book.add(Evidence(passage_id=f"p{i}", title=f"T{i}", section=(), text=""))
    return book


def rewriter(book: PassageBook, allowed: set[int]) -> CitationRewriter:
    return CitationRewriter(lambda n: book.get(n) if n in allowed else None)


def test_markers_are_renumbered_by_first_use_and_dangling_ones_removed() -> None:
    book = book_of(5)
    rw = rewriter(book, {2, 4, 5})
    text = rw.rewrite("A [4]. B [2, 4]. C [9]. D [5][3].")
    assert text == "A [1]. B [2][1]. C. D [3]."
    assert [(c.number, c.evidence.passage_id) for c in rw.citations] == [
        (1, "p4"), (2, "p2"), (3, "p5")]


def test_streaming_gives_the_same_text_whatever_the_delta_boundaries() -> None:
    raw = ("  KAT went offline in 2016 [3]. It was revived [1, 3] later [7].\n\n"
           "See [citation needed].")
    whole = rewriter(book_of(3), {1, 3}).rewrite(raw)
    assert whole == ("KAT went offline in 2016 [1]. It was revived [2][1] later.\n\n"
                     "See [citation needed].")
    for size in (1, 2, 3, 5):
        rw = rewriter(book_of(3), {1, 3})
        pieces = [rw.feed(raw[i:i + size]) for i in range(0, len(raw), size)]
        pieces.append(rw.finish())
        assert "".join(pieces) == whole
        assert [c.evidence.passage_id for c in rw.citations] == ["p3", "p1"]


def test_an_unfinished_marker_at_the_end_is_dropped() -> None:
    rw = rewriter(book_of(2), {1})
    assert rw.feed("Done [1") == "Done"
    assert rw.finish() == ""
    assert rw.raw == "Done [1"
