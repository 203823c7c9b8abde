"""Runs files: export, import exactly once, conflicts, and every kind of bad file.

Stores are filled through the store's public API (as the runner fills them); expected counts
are worked out from the runs in ``leaderboard_data`` (4 questions x 3 snapshots, 3 scorers).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Output, Score
from freshwiki.evaluation import (
    ResultsStore,
    RunConflictError,
    SchemaMismatchError,
    TransferError,
    check_runs_files,
    export_runs,
    import_runs,
    merge_runs_files,
    select_runs,
)
from freshwiki.evaluation._store import COLUMNS, SCHEMA_VERSION
from tests.evaluation.leaderboard_data import (
    RALM,
    SNAPSHOTS,
    commit,
    growover_run,
    growover_runs,
    growover_sample,
    wikicontradict_run,
)

RALM_ID, VANILLA_ID, RILM_ID = (r.run_id for r in growover_runs())


def store_at(path: Path) -> ResultsStore:
    return ResultsStore(path)


def table_rows(store: ResultsStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted: two stores are equal when these are."""
    conn = sqlite3.connect(store.path)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in COLUMNS}
    finally:
        conn.close()


def exported(store: ResultsStore, path: Path, *ids: str) -> Path:
    export_runs(store, path, list(ids) or select_runs(store))
    return path


@pytest.fixture
def machine_a(tmp_path: Path) -> ResultsStore:
    """ralm on the first two snapshots, vanilla on all three."""
    store = store_at(tmp_path / "a.sqlite")
    ralm, vanilla, _ = growover_runs()
    commit(store, ralm, only=SNAPSHOTS[:2])
    commit(store, vanilla)
    return store


def test_columns_are_the_schema_s(tmp_path: Path) -> None:
    store = store_at(tmp_path / "runs.sqlite")
    conn = sqlite3.connect(store.path)
    for table, columns in COLUMNS.items():
        names = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        assert names == list(columns), table
    conn.close()


def test_an_export_imports_into_an_equal_store_and_a_second_import_adds_nothing(
        machine_a: ResultsStore, tmp_path: Path) -> None:
    rilm = growover_runs()[2]
    commit(machine_a, rilm)  # two respond failures in snapshot 2
    file = exported(machine_a, tmp_path / "a.jsonl.gz")
    header = json.loads(gzip.decompress(file.read_bytes()).splitlines()[0])
    assert header["format"] == "freshwiki-runs" and header["schema"] == SCHEMA_VERSION
    target = store_at(tmp_path / "b.sqlite")
    first = import_runs(target, [file])
    # ralm: 8 answers; vanilla: 12; rilm: 6 answered + 2 failed; 3 scores per answer.
    assert dict(first.merged.added) == {"runs": 3, "outputs": 26, "scores": 78, "failures": 2}
    assert sorted(first.merged.runs_added) == sorted([RALM_ID, VANILLA_ID, RILM_ID])
    assert table_rows(target) == table_rows(machine_a)
    again = import_runs(target, [file])
    assert dict(again.merged.added) == {"runs": 0, "outputs": 0, "scores": 0, "failures": 0}
    assert dict(again.merged.present) == {"runs": 3, "outputs": 26, "scores": 78,
                                          "failures": 2}
    assert table_rows(target) == table_rows(machine_a)


def test_overlapping_files_from_two_machines_merge_each_result_once(
        machine_a: ResultsStore, tmp_path: Path) -> None:
    machine_b = store_at(tmp_path / "b.sqlite")
    ralm, _, rilm = growover_runs()
    commit(machine_b, ralm, only=SNAPSHOTS[1:])  # snapshot 2 was answered on both machines
    commit(machine_b, rilm)
    a = exported(machine_a, tmp_path / "a.jsonl.gz")
    b = exported(machine_b, tmp_path / "b.jsonl.gz")
    merged = store_at(tmp_path / "c.sqlite")
    summary = import_runs(merged, [a, b])
    # a: ralm 8 + vanilla 12 outputs; b: ralm 8 (4 of them already came from a) + rilm 6.
    assert summary.merged.added["outputs"] == 8 + 12 + 4 + 6
    assert summary.merged.present["outputs"] == 4
    assert summary.merged.added["scores"] == 3 * (8 + 12 + 4 + 6)
    assert set(summary.merged.runs_added) == {RALM_ID, VANILLA_ID, RILM_ID}
    assert summary.merged.runs_merged == (RALM_ID,)  # b's ralm joined a's
    assert merged.count("outputs", RALM_ID) == (12, 12)
    assert merged.count("scores", RALM_ID) == (36, 36)
    values = sorted(i.value for i in merged.load_run(RALM_ID).items
                    if i.scorer == "growover-f1")
    assert values == sorted(float(v) for s in SNAPSHOTS for v in RALM[s])
    before = table_rows(merged)
    import_runs(merged, [b, a])  # again, other order: nothing new
    assert table_rows(merged) == before


def test_a_different_answer_to_the_same_question_keeps_the_local_one_and_its_scores(
        tmp_path: Path) -> None:
    ralm = growover_runs()[0]
    local = store_at(tmp_path / "local.sqlite")
    commit(local, ralm, only=SNAPSHOTS[:1])
    # Locally the judge failed on q1's answer, so it has no score there yet.
    key = f"{SNAPSHOTS[0]}:q1"
    conn = sqlite3.connect(local.path)
    conn.execute("DELETE FROM scores WHERE sample_id = ? AND scorer = 'growover-f1'", (key,))
    conn.commit()
    conn.close()
    local.record_failure(ralm.run_id, key, "qa", "score", ValueError("judge down"),
                         scorer="growover-f1")
    remote = store_at(tmp_path / "remote.sqlite")
    commit(remote, ralm, only=SNAPSHOTS[:1], text="another answer")
    summary = import_runs(local, [exported(remote, tmp_path / "r.jsonl.gz")])
    assert summary.merged.diverged == 4
    assert summary.merged.of_other_answers == 4 * 3
    assert summary.merged.added["scores"] == 0
    stored = local.get_output(ralm.run_id, key, "qa")
    assert stored is not None and stored.text == f"answer to {key}"
    # The score failure of the local answer stays: the remote score judged another text.
    assert [(f.sample_id, f.scorer) for f in local.failures(ralm.run_id)] == [
        (key, "growover-f1")]


def test_failures_merge_only_while_their_result_is_missing(tmp_path: Path) -> None:
    rilm = growover_runs()[2]
    failed = f"{SNAPSHOTS[1]}:q3"
    local = store_at(tmp_path / "local.sqlite")
    commit(local, rilm)  # q3 and q4 of snapshot 2 failed here
    remote = store_at(tmp_path / "remote.sqlite")
    remote.open_run(rilm.info())
    sample = growover_sample(SNAPSHOTS[1], 3)
    remote.commit_output(rilm.run_id, sample, "qa", Output("late answer"), sample_index=9)
    remote.commit_score(rilm.run_id, sample.id, "qa", "growover-f1", Score(1.0))
    remote.record_failure(rilm.run_id, f"{SNAPSHOTS[0]}:q1", "qa", "respond",
                          TimeoutError("x"))  # answered locally
    summary = import_runs(local, [exported(remote, tmp_path / "r.jsonl.gz")])
    assert summary.merged.added == {"runs": 0, "outputs": 1, "scores": 1, "failures": 0}
    assert summary.merged.failures_resolved == 1
    assert [f.sample_id for f in local.failures(rilm.run_id)] == [f"{SNAPSHOTS[1]}:q4"]
    assert failed not in {f.sample_id for f in local.failures(rilm.run_id)}


def test_a_run_id_meaning_another_run_is_refused_and_nothing_is_imported(
        tmp_path: Path) -> None:
    ralm, vanilla, _ = growover_runs()
    local = store_at(tmp_path / "local.sqlite")
    commit(local, ralm, only=SNAPSHOTS[:1])
    remote = store_at(tmp_path / "remote.sqlite")
    commit(remote, vanilla)
    other = growover_run(ralm.run_id, "ralm", RALM)
    other.config = {**other.config, "dataset": {**other.config["dataset"],
                                                "dataset_hash": "0" * 64}}
    commit(remote, other)
    before = table_rows(local)
    file = exported(remote, tmp_path / "r.jsonl.gz", vanilla.run_id, ralm.run_id)
    with pytest.raises(RunConflictError) as refused:
        import_runs(local, [file])
    assert ralm.run_id in refused.value.message
    assert "dataset.dataset_hash" in refused.value.message
    assert "nothing was stored" in refused.value.message and refused.value.hint
    assert table_rows(local) == before  # vanilla, merged before the conflict, is gone too


def test_same_run_with_another_work_set_or_model_spelling_merges(tmp_path: Path) -> None:
    ralm = growover_runs()[0]
    local = store_at(tmp_path / "local.sqlite")
    ralm.config["limit"] = 4
    commit(local, ralm, only=SNAPSHOTS[:1])
    remote = store_at(tmp_path / "remote.sqlite")
    ralm.config = {**ralm.config, "limit": 12, "templates": ["qa", "qa-short"],
                   "model_spec": "local:/models/qwen.gguf"}
    commit(remote, ralm)
    import_runs(local, [exported(remote, tmp_path / "r.jsonl.gz")])
    config = local.run_info(ralm.run_id).config
    assert config["limit"] == 12 and config["templates"] == ["qa", "qa-short"]
    assert config["model_spec"] == "local:qwen2.5-coder-1.5b"  # the local spelling stays
    assert local.count("outputs", ralm.run_id) == (12, 12)


def test_a_dry_run_counts_and_changes_nothing(machine_a: ResultsStore, tmp_path: Path) -> None:
    file = exported(machine_a, tmp_path / "a.jsonl.gz")
    target = store_at(tmp_path / "b.sqlite")
    dry = import_runs(target, [file], dry_run=True)
    assert dry.merged.added["outputs"] == 20 and dry.dry_run
    assert all(not rows for rows in table_rows(target).values())


def test_select_runs_by_prefix_and_benchmark(machine_a: ResultsStore, tmp_path: Path) -> None:
    commit(machine_a, wikicontradict_run("d1d2d3d4d5d6", "rag", "w1", [1.0], [1.0]))
    assert select_runs(machine_a, ["a1b2"]) == [RALM_ID]
    assert set(select_runs(machine_a, benchmarks=["growover"])) == {RALM_ID, VANILLA_ID}
    assert len(select_runs(machine_a)) == 3
    with pytest.raises(TransferError, match="no run of benchmark 'nope'"):
        select_runs(machine_a, benchmarks=["nope"])


def test_a_failed_export_leaves_the_old_file_and_no_temporary_one(
        machine_a: ResultsStore, tmp_path: Path) -> None:
    path = tmp_path / "out" / "runs.jsonl.gz"
    exported(machine_a, path)
    before = path.read_bytes()
    with pytest.raises(Exception, match="no run 'ffffffffffff'"):
        export_runs(machine_a, path, [RALM_ID, "ffffffffffff"])
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["runs.jsonl.gz"]


# ----------------------------------------------------------------------------- bad files


def lines_of(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).splitlines(keepends=True)


def rewrite(path: Path, lines: list[bytes], *, fix_checksum: bool) -> None:
    """Write ``lines`` back (gzip), the end line's checksum recomputed when asked."""
    if fix_checksum:
        end = json.loads(lines[-1])
        end["end"]["sha256"] = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
        lines = [*lines[:-1], (json.dumps(end) + "\n").encode()]
    path.write_bytes(gzip.compress(b"".join(lines)))


@pytest.mark.parametrize(("schema", "needles"), [
    (SCHEMA_VERSION + 1, (f"schema {SCHEMA_VERSION + 1}", f"reads schema {SCHEMA_VERSION}",
                          "upgrade freshwiki on this machine")),
    (SCHEMA_VERSION - 1, (f"schema {SCHEMA_VERSION - 1}", f"reads schema {SCHEMA_VERSION}",
                          "export them again")),
])
def test_a_file_of_another_schema_says_both_versions_and_what_to_do(
        machine_a: ResultsStore, tmp_path: Path, schema: int,
        needles: tuple[str, ...]) -> None:
    file = exported(machine_a, tmp_path / "a.jsonl.gz")
    lines = lines_of(file)
    header = json.loads(lines[0])
    header["schema"] = schema
    rewrite(file, [(json.dumps(header) + "\n").encode(), *lines[1:]], fix_checksum=True)
    target = store_at(tmp_path / "b.sqlite")
    with pytest.raises(SchemaMismatchError) as wrong:
        import_runs(target, [file])
    text = f"{wrong.value.message} {wrong.value.hint}"
    assert str(file) in text and all(n in text for n in needles), text
    assert all(not rows for rows in table_rows(target).values())


def damage(kind: str, file: Path, lines: list[bytes]) -> None:
    if kind == "cut short":
        file.write_bytes(file.read_bytes()[: len(file.read_bytes()) * 2 // 3])
    elif kind == "no end line":
        rewrite(file, lines[:-1], fix_checksum=False)
    elif kind == "edited after export":  # a valid row, a better answer than was given
        k = next(i for i, line in enumerate(lines) if b'"table": "outputs"' in line)
        lines[k] = lines[k].replace(b'"text": "answer', b'"text": "a better answer')
        rewrite(file, lines, fix_checksum=False)
    elif kind == "bit flip":
        data = bytearray(file.read_bytes())
        data[len(data) // 2] ^= 0xFF
        file.write_bytes(bytes(data))
    elif kind == "missing column":
        k = next(i for i, line in enumerate(lines) if b'"table": "outputs"' in line)
        lines[k] = lines[k].replace(b'"cache_hit": 0, ', b"")
        rewrite(file, lines, fix_checksum=True)
    elif kind == "orphan row":  # an output line before its run's line
        k = next(i for i, line in enumerate(lines) if b'"table": "outputs"' in line)
        lines.insert(1, lines.pop(k))
        rewrite(file, lines, fix_checksum=True)
    elif kind == "not gzip":
        file.write_bytes(b"run_id,benchmark\nabc,growover\n")
    elif kind == "not json":
        lines[3] = b"{oops\n"
        rewrite(file, lines, fix_checksum=True)


@pytest.mark.parametrize(("kind", "needle"), [
    ("cut short", "cut short"), ("no end line", "no end line"),
    ("edited after export", "checksum"), ("bit flip", "is damaged"),
    ("missing column", "lacks cache_hit"), ("orphan row", "no run line before it"),
    ("not gzip", "not a freshwiki runs file"), ("not json", "line 4 is not JSON"),
])
def test_a_damaged_file_is_named_and_imports_nothing(
        machine_a: ResultsStore, tmp_path: Path, kind: str, needle: str) -> None:
    file = exported(machine_a, tmp_path / "a.jsonl.gz")
    damage(kind, file, lines_of(file))
    target = store_at(tmp_path / "b.sqlite")
    commit(target, growover_runs()[2])
    before = table_rows(target)
    with pytest.raises(TransferError) as bad:
        import_runs(target, [file])
    assert needle in bad.value.message and str(file) in bad.value.message, bad.value.message
    assert bad.value.hint
    assert table_rows(target) == before


def test_a_results_database_is_not_taken_for_a_runs_file(machine_a: ResultsStore) -> None:
    with pytest.raises(TransferError, match="is a results database, not a runs file") as bad:
        check_runs_files([machine_a.path])
    assert bad.value.hint and "runs export" in bad.value.hint


def test_a_file_damaged_between_check_and_merge_rolls_the_merge_back(
        machine_a: ResultsStore, tmp_path: Path) -> None:
    # The merge reads the file again inside its transaction: rows merged before the damage
    # shows (here: the missing end line, found after every row) are rolled back.
    file = exported(machine_a, tmp_path / "a.jsonl.gz")
    checked = check_runs_files([file])
    damage("no end line", file, lines_of(file))
    target = store_at(tmp_path / "b.sqlite")
    with pytest.raises(TransferError, match="no end line"):
        merge_runs_files(target, checked)
    assert all(not rows for rows in table_rows(target).values())
