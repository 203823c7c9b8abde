from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from freshwiki.corpus import TOO_DEEP, Fallback, FallbackSummary, StoredFallback
from freshwiki.corpus.store import CorpusStore
from freshwiki.records import Contributor, MaintenanceTag, PageRef, Passage, Revision

PEAR = PageRef(101, "Pear")
T1 = dt.datetime(2020, 1, 5, 12, 0, tzinfo=dt.UTC)
T2 = dt.datetime(2022, 6, 1, 8, 30, tzinfo=dt.UTC)


def rev(rev_id: int, ts: dt.datetime, text: str, parent: int | None = None) -> Revision:
    return Revision(PEAR, rev_id, ts, text, parent_id=parent,
                    contributor=Contributor(ip="192.0.2.1"), comment="c", sha1=f"s{rev_id}",
                    size=len(text.encode()))


def passage(rev_id: int, ts: dt.datetime, text: str, tags: tuple[MaintenanceTag, ...] = ()
            ) -> Passage:
    return Passage(f"101-{rev_id}-0", 101, rev_id, "Pear", ("History",), text, ts,
                   sentences=(text,), tags=tags)


CN = MaintenanceTag("Citation needed", "cn", {"date": "May 2020"}, date="May 2020",
                    sentence_offset=12)


def fill(store: CorpusStore) -> None:
    store.add([
        (rev(1, T1, "Old text", None), [passage(1, T1, "Pears are 5.", (CN,))]),
        (rev(2, T2, "New text", 1), [passage(2, T2, "Pears are 6.")]),
    ])


def test_snapshots_coexist_and_time_travel_works(tmp_path: Path) -> None:
    with CorpusStore(tmp_path / "c.sqlite") as store:
        fill(store)
        assert store.counts()["revisions"] == 2
        assert [r.id for r in store.revisions(101)] == [1, 2]
        assert store.snapshot(101).id == 2  # type: ignore[union-attr]
        assert store.snapshot(101, at=dt.datetime(2021, 1, 1, tzinfo=dt.UTC)).id == 1  # type: ignore[union-attr]
        assert store.snapshot(101, at=dt.datetime(2019, 1, 1, tzinfo=dt.UTC)) is None
        latest = list(store.passages(latest_only=True))
        assert [p.text for p in latest] == ["Pears are 6."]
        old = list(store.passages(until=dt.datetime(2021, 1, 1, tzinfo=dt.UTC)))
        assert [p.revision_id for p in old] == [1]


def test_reingest_is_idempotent_and_everything_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with CorpusStore(path) as store:
        fill(store)
    with CorpusStore(path) as store:  # reopen: persisted
        result = store.add([(rev(1, T1, "Old text"), [passage(1, T1, "dup")])])
        assert (result.added, result.skipped, result.passages) == (0, 1, 0)
        assert store.counts()["passages"] == 2
        first = store.revisions(101)[0]
        assert first == rev(1, T1, "Old text")  # every field survives, tz-aware timestamp
        (p,) = store.passages(revision_id=1)
        assert p == passage(1, T1, "Pears are 5.", (CN,))
        assert store.page("Pear") == PEAR


def test_a_crash_mid_batch_keeps_no_half_revision(tmp_path: Path) -> None:
    def items() -> Iterator[tuple[Revision, list[Passage]]]:
        yield rev(1, T1, "Old text"), [passage(1, T1, "x")]
        raise RuntimeError("worker died")

    with CorpusStore(tmp_path / "c.sqlite") as store:
        with pytest.raises(RuntimeError):
            store.add(items())
        assert store.counts()["revisions"] == 0 and store.counts()["passages"] == 0
        fill(store)  # and the store is still usable
        assert store.counts()["revisions"] == 2


def test_text_can_be_left_out_for_large_histories(tmp_path: Path) -> None:
    with CorpusStore(tmp_path / "c.sqlite") as store:
        store.add([(rev(1, T1, "Old text"), [])], keep_text=False)
        assert store.revisions(101)[0].text == ""
        assert store.revisions(101)[0].sha1 == "s1"


def test_json_columns_are_exactly_what_json_dumps_writes() -> None:
    """The store's own encoders must write the same text as json.dumps (rows are compared)."""
    import dataclasses
    import json

    from freshwiki.corpus.store import _strings_json, _tags_json

    odd = ["", "plain", 'quote " and \\ back', "tab\tnew\nline", "\x00\x1f\x7f", "Zoë 東京 🙂",
           "\ud800", "</script>", "\u2028\u2029"]
    for items in ([], ["one"], odd, odd[::-1]):
        assert _strings_json(items) == json.dumps(items, ensure_ascii=False)
        assert _strings_json(tuple(items)) == json.dumps(items, ensure_ascii=False)
    for tags in ((), (CN,), (CN, MaintenanceTag("Update", "Update", {}, scope="block"))):
        assert _tags_json(tags) == json.dumps([dataclasses.asdict(t) for t in tags],
                                              ensure_ascii=False)


DEEP = Fallback(TOO_DEEP, 460)
BROKEN = Fallback("RecursionError", 1200)


def test_fallbacks_are_stored_with_their_revision_and_never_twice(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with CorpusStore(path) as store:
        assert store.fallback_summary() == FallbackSummary(0, 0, 0, {}, 0)
        result = store.add(
            [(rev(1, T1, "Old text"), []), (rev(2, T2, "New text", 1), [])],
            fallbacks={2: (DEEP, BROKEN), 99: (DEEP,)},  # 99 is not in the batch
        )
        assert result.fallbacks == {2: (DEEP, BROKEN)}
    with CorpusStore(path) as store:  # reopened: persisted
        # The same revision again, with (say) a different outcome: skipped, not counted.
        again = store.add([(rev(2, T2, "New text", 1), [])], fallbacks={2: (DEEP,)})
        assert (again.added, again.skipped, again.fallbacks) == (0, 1, {})
        store.add([(rev(3, T2, "Newer text", 2), [])], fallbacks={3: (DEEP,)})
        # Counted by hand: revisions 2 and 3; chunks 2 + 1; 460 + 1200 + 460 characters.
        assert store.fallback_summary() == FallbackSummary(
            2, 3, 2120, {TOO_DEEP: 2, "RecursionError": 1}, 0)
        assert list(store.fallbacks()) == [
            StoredFallback(2, 101, "Pear", (DEEP, BROKEN)),
            StoredFallback(3, 101, "Pear", (DEEP,)),
        ]


def test_fallbacks_of_a_failed_batch_are_not_kept(tmp_path: Path) -> None:
    def items() -> Iterator[tuple[Revision, list[Passage]]]:
        yield rev(1, T1, "Old text"), []
        raise RuntimeError("worker died")

    with CorpusStore(tmp_path / "c.sqlite") as store:
        with pytest.raises(RuntimeError):
            store.add(items(), fallbacks={1: (DEEP,)})
        assert store.fallback_summary().chunks == 0


def test_a_store_from_before_fallbacks_were_recorded_says_how_much_is_uncounted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    with CorpusStore(path) as store:
        fill(store)
    with sqlite3.connect(path) as db:  # the schema as it was: no fallbacks, no meta
        db.execute("DROP TABLE fallbacks")
        db.execute("DROP TABLE meta")
    with CorpusStore(path) as store:
        assert store.fallback_summary() == FallbackSummary(0, 0, 0, {}, 2)
        store.add([(rev(3, T2, "Newer text", 2), [])], fallbacks={3: (DEEP,)})
    with CorpusStore(path) as store:  # the note stays, and is not re-counted
        assert store.fallback_summary() == FallbackSummary(1, 1, 460, {TOO_DEEP: 1}, 2)
