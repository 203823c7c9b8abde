"""The results store: exactly-once commits, failures that never outlive their fix, run rows."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from pathlib import Path

import pytest

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.evaluation import ResultsStore, RunInfo, UnknownRunError, default_results_path
from freshwiki.evaluation._store import StoreError
from freshwiki.llm import Usage

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def info(run_id: str = "abc123def456", **config: object) -> RunInfo:
    return RunInfo(run_id=run_id, benchmark="tiny", system="vanilla", model="scripted:x",
                   config={"templates": ["plain"], "scorers": ["tiny-exact"], "limit": 3,
                           **config},
                   code_version="0.1.0 (git aaa)", model_hashes={"model": "m1"},
                   created_at=NOW, updated_at=NOW, label="vanilla/scripted:x")


def sample(i: int) -> Sample:
    return Sample(id=f"s{i}", input=f"q{i}", targets=("a",), metadata={"parity": i % 2})


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = ResultsStore(tmp_path / "runs.sqlite")
    s.open_run(info())
    return s


def test_default_path_is_under_home_runs(settings: object, _isolated_home: Path) -> None:
    assert default_results_path(settings) == _isolated_home / "runs" / "runs.sqlite"  # type: ignore[arg-type]


def test_an_output_and_a_score_are_stored_once_and_the_first_wins(store: ResultsStore) -> None:
    first = Output("first", usage=Usage(3, 4), latency_s=0.5, model="m1", trace={"k": [1]})
    stored, inserted = store.commit_output("abc123def456", sample(1), "plain", first,
                                           sample_index=0)
    assert inserted and stored == first
    stored, inserted = store.commit_output("abc123def456", sample(1), "plain",
                                           Output("second"), sample_index=0)
    assert not inserted
    assert stored.text == "first" and stored.usage == Usage(3, 4) and stored.trace == {"k": [1]}
    assert store.commit_score("abc123def456", "s1", "plain", "tiny-exact", Score(1.0))
    assert not store.commit_score("abc123def456", "s1", "plain", "tiny-exact", Score(0.0))
    assert store.count("outputs", "abc123def456") == (1, 1)
    assert store.count("scores", "abc123def456") == (1, 1)
    [item] = store.load_run("abc123def456").items
    assert (item.value, item.output, item.metadata) == (1.0, "first", {"parity": 1})


def test_the_schema_itself_refuses_a_duplicate(store: ResultsStore) -> None:
    store.commit_output("abc123def456", sample(1), "plain", Output("x"), sample_index=0)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        conn.execute(
            "INSERT INTO outputs SELECT * FROM outputs WHERE run_id = 'abc123def456'")
    conn.close()


def test_two_concurrent_writers_store_each_result_once(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with ResultsStore(path) as s:
        s.open_run(info())
    n = 40
    barrier = threading.Barrier(2)
    seen: dict[str, list[tuple[str, bool]]] = {"A": [], "B": []}
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            with ResultsStore(path, busy_timeout_s=30) as s:
                barrier.wait()
                for i in range(n):
                    out, inserted = s.commit_output("abc123def456", sample(i), "plain",
                                                    Output(f"{name}{i}"), sample_index=i)
                    seen[name].append((out.text, inserted))
                    s.commit_score("abc123def456", f"s{i}", "plain", "tiny-exact",
                                   Score(1.0 if name == "A" else 0.0))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with ResultsStore(path) as s:
        assert s.count("outputs", "abc123def456") == (n, n)
        assert s.count("scores", "abc123def456") == (n, n)
        for i in range(n):
            a_text, a_ins = seen["A"][i]
            b_text, b_ins = seen["B"][i]
            assert a_ins != b_ins  # exactly one writer stored item i ...
            assert a_text == b_text  # ... and both then see the stored one
            assert s.get_output("abc123def456", f"s{i}", "plain").text == a_text  # type: ignore[union-attr]


def test_failures_are_counted_and_cleared_by_success(store: ResultsStore) -> None:
    run = "abc123def456"
    try:
        raise ValueError("bad thing") from KeyError("root")
    except ValueError as exc:
        store.record_failure(run, "s1", "plain", "respond", exc)
        store.record_failure(run, "s1", "plain", "respond", exc)
    store.record_failure(run, "s2", "plain", "score", RuntimeError("judge"), scorer="j")
    [f1, f2] = store.failures(run)
    assert (f1.sample_id, f1.stage, f1.error_type, f1.scorer) == ("s1", "respond", "ValueError",
                                                                  None)
    assert "bad thing" in f1.message and "KeyError" in f1.message and "root" in f1.message
    assert (f2.sample_id, f2.stage, f2.scorer) == ("s2", "score", "j")
    assert store.failure_attempts(run)[("s1", "plain", "respond", "")] == 2
    store.commit_output(run, sample(1), "plain", Output("ok"), sample_index=0)
    assert [f.sample_id for f in store.failures(run)] == ["s2"]
    store.commit_score(run, "s2", "plain", "j", Score(0.5))
    assert store.failures(run) == []
    # A failure of a result that is already stored is not recorded: it would be a lie.
    store.record_failure(run, "s1", "plain", "respond", ValueError("late"))
    store.record_failure(run, "s2", "plain", "score", ValueError("late"), scorer="j")
    assert store.failures(run) == []
    assert len(store.load_run(run).failures) == 0


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan"), float("inf")])
def test_a_score_outside_0_1_is_refused_and_not_stored(store: ResultsStore, value: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        store.commit_score("abc123def456", "s1", "plain", "x", Score(value))
    assert store.count("scores", "abc123def456") == (0, 0)


def test_resuming_a_run_widens_its_work_set_and_notes_new_code(store: ResultsStore) -> None:
    again = RunInfo(**{**info().__dict__, "config": {"templates": ["terse", "plain"],
                                                     "scorers": ["tiny-judge"], "limit": 10},
                       "code_version": "0.1.0 (git bbb)", "label": ""})
    stored = store.open_run(again)
    assert stored.config["templates"] == ["plain", "terse"]
    assert stored.config["scorers"] == ["tiny-exact", "tiny-judge"]
    assert stored.config["limit"] == 10
    assert stored.code_version == "0.1.0 (git aaa); 0.1.0 (git bbb)"
    assert stored.label == "vanilla/scripted:x"  # an empty label keeps the stored one
    unlimited = RunInfo(**{**info().__dict__, "config": {"limit": None}})
    assert store.open_run(unlimited).config["limit"] is None
    assert store.open_run(info()).code_version == "0.1.0 (git aaa); 0.1.0 (git bbb)"


def test_runs_are_found_by_unique_prefix_and_listed_with_counts(store: ResultsStore) -> None:
    store.open_run(info("abc999000111"))
    store.commit_output("abc123def456", sample(1), "plain", Output("x"), sample_index=0)
    store.commit_output("abc123def456", sample(2), "plain", Output("y"), sample_index=1)
    store.commit_score("abc123def456", "s2", "plain", "tiny-exact", Score(0.0))
    store.record_failure("abc123def456", "s3", "plain", "respond", OSError("down"))
    assert store.resolve_run_id("abc1") == "abc123def456"
    with pytest.raises(UnknownRunError, match="ambiguous") as ambiguous:
        store.resolve_run_id("abc")
    assert "abc123def456" in str(ambiguous.value) and "abc999000111" in str(ambiguous.value)
    with pytest.raises(UnknownRunError, match="no run 'zzz'") as unknown:
        store.load_run("zzz")
    assert "freshwiki runs" in (unknown.value.hint or "")
    counts = {o.info.run_id: (o.outputs, o.scores, o.failures) for o in store.list_runs()}
    assert counts == {"abc123def456": (2, 1, 1), "abc999000111": (0, 0, 0)}


def test_load_run_keeps_sample_order(store: ResultsStore) -> None:
    for index, i in enumerate([5, 1, 3]):
        store.commit_output("abc123def456", sample(i), "plain", Output(f"o{i}"),
                            sample_index=index)
    for i in [1, 3, 5]:
        store.commit_score("abc123def456", f"s{i}", "plain", "tiny-exact", Score(1.0))
    assert [i.sample_id for i in store.load_run("abc123def456").items] == ["s5", "s1", "s3"]


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    ResultsStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(StoreError, match="newer freshwiki"):
        ResultsStore(path)


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable results database"):
        ResultsStore(path)
