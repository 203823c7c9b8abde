"""The ray engine stores exactly what the process pool stores, on a real (local) Ray instance.

One Ray instance serves the module (starting one costs a few seconds). It is started with
``address="local"``, so a cluster someone left running on this machine (``ray start``) is
never joined by a test.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.corpus import CorpusStore, DumpReadError, ingest
from freshwiki.corpus._ray_engine import process_all_ray
from freshwiki.corpus.ingest import IngestOptions, process_all
from freshwiki.corpus.readers import read_source
from freshwiki.records import Passage, Revision
from tests.corpus.test_ingest import EXPECTED_FALLBACKS, fallback_dump
from tests.corpus.test_ingest_faults import five_articles

pytestmark = pytest.mark.e2e
SAMPLE = "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"
Batch = list[tuple[Revision, list[Passage]]]


class RecordingStore(CorpusStore):
    """A real store that also keeps every batch it was given, in order."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.seen: list[Batch] = []

    def add(self, items: Any, *, keep_text: bool = True, fallbacks: Any = None) -> Any:
        batch = list(items)
        self.seen.append(batch)
        return super().add(batch, keep_text=keep_text, fallbacks=fallbacks)


def table_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, in storage order (passages by insertion)."""
    with sqlite3.connect(path) as db:
        return {
            table: db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            for table in ("pages", "revisions", "passages")
        }


def run_ingest(source: Path, db: Path, **kwargs: Any) -> tuple[Any, list[Batch]]:
    with RecordingStore(db) as store:
        report = ingest(source, store, **kwargs)
        return report, store.seen


def test_ray_engine_stores_exactly_what_the_process_pool_stores(
    ray_instance: None, shared_data: Path, tmp_path: Path
) -> None:
    source = shared_data / SAMPLE
    ray_report, ray_seen = run_ingest(source, tmp_path / "ray.sqlite", engine="ray")
    pool_report, pool_seen = run_ingest(source, tmp_path / "pool.sqlite", workers=2)
    serial_report, serial_seen = run_ingest(source, tmp_path / "serial.sqlite", workers=1)
    assert ray_report.as_dict() == pool_report.as_dict() == serial_report.as_dict()
    assert ray_report.revisions_added == 106 and ray_report.passages > 106 * 3
    # The store was handed the same revisions and passages, in the same batches and order.
    assert ray_seen == pool_seen == serial_seen
    # And holds the same rows: every page, revision (wikitext included) and passage.
    rows = table_rows(tmp_path / "ray.sqlite")
    assert rows == table_rows(tmp_path / "pool.sqlite") == table_rows(tmp_path / "serial.sqlite")
    assert [len(rows[t]) for t in ("pages", "revisions")] == [106, 106]


def test_ray_engine_counts_regex_fallbacks_as_the_pool_does(
    ray_instance: None, shared_data: Path, tmp_path: Path
) -> None:
    source = fallback_dump(shared_data, tmp_path / "fallbacks.xml")
    reports = {}
    for engine in ("ray", "local"):
        with CorpusStore(tmp_path / f"{engine}.sqlite") as store:
            reports[engine] = ingest(source, store, engine=engine, workers=2).as_dict()
            assert (store.fallback_summary().revisions, store.fallback_summary().chunks) == (2, 3)
    assert reports["ray"] == reports["local"]
    assert {k: reports["ray"][k] for k in EXPECTED_FALLBACKS} == EXPECTED_FALLBACKS


def test_order_holds_with_many_small_batches_in_flight(
    ray_instance: None, shared_data: Path
) -> None:
    revisions = [r for r in read_source(shared_data / SAMPLE) if r.page.redirect is None]
    options = IngestOptions()
    serial = list(process_all(revisions, options, workers=1, batch_size=3))
    via_ray = list(process_all_ray(revisions, options, batch_size=3, max_in_flight=5))
    assert len(via_ray) == 36  # 106 revisions in batches of 3: many more than 5 in flight
    assert via_ray == serial


def test_a_revision_that_cannot_be_cleaned_fails_as_it_does_in_the_pool(
    ray_instance: None, shared_data: Path
) -> None:
    revisions = [r for r in read_source(shared_data / SAMPLE) if r.page.redirect is None]
    revisions = revisions[:40]
    revisions[21] = dataclasses.replace(revisions[21], text=None)  # type: ignore[arg-type]

    def drain(batches: Iterator[Batch]) -> tuple[list[Batch], BaseException]:
        got: list[Batch] = []
        with pytest.raises(Exception) as info:  # the type is what is compared
            got.extend(batches)
        return got, info.value

    options = IngestOptions()
    pool_got, pool_error = drain(process_all(revisions, options, workers=2, batch_size=4))
    ray_got, ray_error = drain(process_all_ray(revisions, options, batch_size=4))
    # The same exception, itself (not a Ray wrapper), after exactly the batches before it.
    assert type(ray_error) is type(pool_error) is TypeError
    assert str(ray_error) == str(pool_error)
    assert ray_got == pool_got
    assert [x.revision.id for batch in ray_got for x in batch] == [r.id for r in revisions[:20]]


def test_a_truncated_dump_keeps_the_same_revisions_as_the_pool(
    ray_instance: None, shared_data: Path, tmp_path: Path
) -> None:
    data = (shared_data / SAMPLE).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    errors: list[str] = []
    for engine, db in (("ray", "ray.sqlite"), ("local", "pool.sqlite")):
        with CorpusStore(tmp_path / db) as store, pytest.raises(DumpReadError) as info:
            ingest(cut, store, engine=engine, workers=2)
        errors.append(info.value.message)
    assert errors[0] == errors[1] and "cut.xml.bz2" in errors[0]
    rows = table_rows(tmp_path / "ray.sqlite")
    assert rows == table_rows(tmp_path / "pool.sqlite") and len(rows["revisions"]) > 10


@pytest.mark.parametrize("skip", [False, True])
def test_a_malformed_page_stops_or_is_skipped_as_in_the_pool(
    ray_instance: None, shared_data: Path, tmp_path: Path, skip: bool
) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(five_articles(shared_data, break_third=True))
    outcomes: list[Sequence[object]] = []
    for engine in ("ray", "local"):
        db = tmp_path / f"{engine}.sqlite"
        with CorpusStore(db) as store:
            if skip:
                report = ingest(bad, store, engine=engine, workers=2, skip_bad_pages=True)
                outcome: Sequence[object] = (report.revisions_added, report.bad_pages)
            else:
                with pytest.raises(DumpReadError) as info:
                    ingest(bad, store, engine=engine, workers=2)
                outcome = (info.value.message, info.value.hint)
        outcomes.append((*outcome, table_rows(db)))
    assert outcomes[0] == outcomes[1]
    stored = [row[0] for row in outcomes[0][-1]["pages"]]  # type: ignore[index]
    assert stored == ([12, 25, 290, 303] if skip else [12, 25])


def test_unknown_engine_is_a_clear_error(shared_data: Path, tmp_path: Path) -> None:
    from freshwiki.errors import FreshwikiError

    with CorpusStore(tmp_path / "x.sqlite") as store, pytest.raises(FreshwikiError,
                                                                     match="unknown engine"):
        ingest(shared_data / SAMPLE, store, engine="spark")
