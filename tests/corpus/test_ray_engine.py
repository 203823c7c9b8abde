"""The ray engine runs the same per-revision function on a real (local) Ray cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.corpus import CorpusStore, ingest

pytestmark = pytest.mark.e2e
SAMPLE = "wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2"


def test_ray_engine_stores_exactly_what_the_local_engine_stores(
    shared_data: Path, tmp_path: Path
) -> None:
    import ray  # the cluster extra is part of the dev install: missing Ray must fail

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        with CorpusStore(tmp_path / "ray.sqlite") as store:
            report = ingest(shared_data / SAMPLE, store, engine="ray")
            via_ray = list(store.passages())
    finally:
        ray.shutdown()
    with CorpusStore(tmp_path / "local.sqlite") as store:
        ingest(shared_data / SAMPLE, store, workers=1)
        local = list(store.passages())
    assert report.revisions_added == 106
    assert via_ray == local  # same passages, same order (input order is preserved)


def test_unknown_engine_is_a_clear_error(shared_data: Path, tmp_path: Path) -> None:
    from freshwiki.errors import FreshwikiError

    with CorpusStore(tmp_path / "x.sqlite") as store, pytest.raises(FreshwikiError,
                                                                     match="unknown engine"):
        ingest(shared_data / SAMPLE, store, engine="spark")
