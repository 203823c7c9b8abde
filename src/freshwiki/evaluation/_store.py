"""The results store: every committed output, score and failure of every run, in SQLite.

Exactly-once is a property of the schema, not of the runner's bookkeeping: ``outputs`` is
keyed by (run, sample, template) and ``scores`` by (run, sample, template, scorer), and every
insert is ``INSERT ... ON CONFLICT DO NOTHING``. So however a run is interrupted, resumed or
run twice at once, a result is stored at most once, and the first one committed wins. Each
result is committed in its own short ``BEGIN IMMEDIATE`` transaction as soon as it exists, so
a killed process loses only the work in flight. The database is in WAL mode (readers never
block the writer) with a generous busy timeout, so two processes can write the same file.

``failures`` holds one row per failing sample x template x stage (x scorer) with its cause
and how many attempts failed; a re-run retries it, and the row is deleted in the same
transaction that commits the success, so a failure never outlives its fix.

The ``runs`` row records the full configuration, code version(s) and model hashes. A run's
*work set* (templates, scorers, limit) can widen when it is resumed with more of them; the
stored config then holds the union (see :meth:`ResultsStore.open_run`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._diff import diff_runs
from freshwiki.evaluation._types import (
    FailedItem,
    RunInfo,
    RunResults,
    ScoredItem,
    StoredOutput,
)
from freshwiki.llm import Usage

if TYPE_CHECKING:
    from freshwiki.config import Settings

SCHEMA_VERSION = 1
WORK_KEYS = ("templates", "scorers", "limit")
"""Config keys that only widen a run's work set; merged on resume instead of compared."""
_MAX_MESSAGE = 4000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    system TEXT NOT NULL,
    model TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL,
    code_version TEXT NOT NULL,
    model_hashes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outputs (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    template TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    metadata TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_prompt_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cache_hit INTEGER NOT NULL,
    model TEXT NOT NULL,
    trace TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, template)
);
CREATE TABLE IF NOT EXISTS scores (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    template TEXT NOT NULL,
    scorer TEXT NOT NULL,
    value REAL NOT NULL,
    label TEXT,
    explanation TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, template, scorer)
);
CREATE TABLE IF NOT EXISTS failures (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    template TEXT NOT NULL,
    stage TEXT NOT NULL,
    scorer TEXT NOT NULL DEFAULT '',
    error_type TEXT NOT NULL,
    message TEXT NOT NULL,
    detail TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    first_at TEXT NOT NULL,
    last_at TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, template, stage, scorer)
);
"""


class UnknownRunError(FreshwikiError):
    """A run id (or prefix) that matches no stored run, or more than one."""


class StoreError(FreshwikiError):
    """The results database cannot be used (newer schema, not a freshwiki store)."""


class RunConflictError(FreshwikiError):
    """A run id stored here names a different run in rows being merged in."""


COLUMNS: Mapping[str, Mapping[str, str]] = {
    "runs": {"run_id": "text", "benchmark": "text", "system": "text", "model": "text",
             "label": "text", "config": "json", "code_version": "text",
             "model_hashes": "json", "created_at": "time", "updated_at": "time"},
    "outputs": {"run_id": "text", "sample_id": "text", "template": "text",
                "sample_index": "int", "metadata": "json", "text": "text",
                "prompt_tokens": "int", "completion_tokens": "int",
                "cached_prompt_tokens": "int", "latency_s": "real", "cache_hit": "int",
                "model": "text", "trace": "json", "created_at": "time"},
    "scores": {"run_id": "text", "sample_id": "text", "template": "text", "scorer": "text",
               "value": "real", "label": "text?", "explanation": "text", "data": "json",
               "created_at": "time"},
    "failures": {"run_id": "text", "sample_id": "text", "template": "text", "stage": "text",
                 "scorer": "text", "error_type": "text", "message": "text", "detail": "text",
                 "attempts": "int", "first_at": "time", "last_at": "time"},
}
"""Every column of every table, in schema order, with the kind of value it holds.

``json`` columns hold canonical JSON text in the database and the decoded object in
:meth:`ResultsStore.export_rows` / :meth:`ResultsStore.merge_rows`; ``time`` is ISO 8601 text;
``text?`` may be null. Moving runs between machines is written against this table, and a test
checks it against the schema, so a new column cannot be silently left out of an export.
"""

@dataclass(frozen=True)
class MergeCounts:
    """What :meth:`ResultsStore.merge_rows` did, table by table.

    Attributes:
        runs_added: Run ids that were not stored here before.
        runs_merged: Run ids that were (their work sets were widened, if at all).
        added: Rows stored, per table.
        present: Rows not stored because the same key was already stored, per table.
        diverged: Outputs stored here with another text than the incoming one (the stored
            one is kept, as the store keeps the first result committed).
        of_other_answers: Incoming scores (and score failures) not stored because they
            judged an incoming output that lost to a different stored one: they would score
            an answer they never saw.
        failures_resolved: Incoming failures not stored because the result is stored here.
    """

    runs_added: tuple[str, ...]
    runs_merged: tuple[str, ...]
    added: Mapping[str, int]
    present: Mapping[str, int]
    diverged: int
    of_other_answers: int
    failures_resolved: int


@dataclass(frozen=True)
class RunOverview:
    """A run and how far it got, for ``freshwiki runs``.

    Attributes:
        info: The run's identity and configuration.
        outputs: Sample x template outputs committed.
        scores: Scores committed (one per output per scorer).
        failures: Unresolved failures (respond or score).
    """

    info: RunInfo
    outputs: int
    scores: int
    failures: int


def default_results_path(settings: Settings) -> Path:
    """``home/runs/runs.sqlite``: every run of one ``FRESHWIKI_HOME`` in one file."""
    return settings.home / "runs" / "runs.sqlite"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def _dumps(value: Any) -> str:
    """Canonical JSON; anything not JSON-native (dates, paths) is stored as its ``str``."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _error_text(exc: BaseException) -> tuple[str, str]:
    """(message with its chained causes, short traceback) of an exception."""
    message = str(exc) or type(exc).__name__
    cause = exc.__cause__ or exc.__context__
    seen = 0
    while cause is not None and seen < 3:
        message += f" (caused by {type(cause).__name__}: {cause})"
        cause = cause.__cause__ or cause.__context__
        seen += 1
    detail = "".join(traceback.format_exception(exc, limit=-8))
    return message[:_MAX_MESSAGE], detail[-_MAX_MESSAGE:]


def _merge_work(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Widen ``old``'s work set by ``new``'s: union of templates/scorers, the larger limit."""
    merged = dict(old)
    for key in ("templates", "scorers"):
        have = list(old.get(key) or [])
        merged[key] = have + [x for x in new.get(key) or [] if x not in have]
    old_limit, new_limit = old.get("limit"), new.get("limit")
    merged["limit"] = None if old_limit is None or new_limit is None else max(old_limit, new_limit)
    return merged


class ResultsStore:
    """One SQLite file of runs and their results; see the module docstring for guarantees.

    Use one store per thread (or per process); several stores on the same file are safe.

    Args:
        path: The database file (created with its folder when missing).
        busy_timeout_s: How long a write waits for another process's transaction.
    """

    def __init__(self, path: Path, *, busy_timeout_s: float = 60.0) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{path} was written by a newer freshwiki (schema {version})",
                    hint="upgrade freshwiki, or point FRESHWIKI_HOME elsewhere.",
                )
            if version < SCHEMA_VERSION:
                with self._transaction():
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            self._conn.execute(statement)
                    self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreError(
                f"{path} is not a usable results database ({exc})",
                hint="move the file away; `freshwiki eval` creates a new one.",
            ) from exc

    def close(self) -> None:
        """Close the connection (everything is already committed)."""
        self._conn.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction that takes the write lock up front.

        ``BEGIN IMMEDIATE`` rather than deferred: a deferred transaction that reads and then
        writes can fail with "database is locked" without waiting for the busy timeout.
        """
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- runs ------------------------------------------------------------------------------

    def open_run(self, info: RunInfo) -> RunInfo:
        """Create the run, or resume it: widen its work set and note a new code version.

        The identity part of ``info.config`` is what ``info.run_id`` was derived from, so it
        is kept as first stored; only :data:`WORK_KEYS` are merged (union of templates and
        scorers, the larger limit). A code version not seen before is appended to the
        stored one (``"; "``-separated), so a run resumed after a code change says so.
        A non-empty ``info.label`` replaces the stored label.
        """
        with self._transaction() as conn:
            row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (info.run_id,)).fetchone()
            now = _now()
            if row is None:
                conn.execute(
                    "INSERT INTO runs (run_id, benchmark, system, model, label, config, "
                    "code_version, model_hashes, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (info.run_id, info.benchmark, info.system, info.model, info.label,
                     _dumps(dict(info.config)), info.code_version,
                     _dumps(dict(info.model_hashes)), now, now),
                )
            else:
                config = _merge_work(json.loads(row["config"]), info.config)
                versions = row["code_version"].split("; ")
                if info.code_version not in versions:
                    versions.append(info.code_version)
                conn.execute(
                    "UPDATE runs SET config = ?, code_version = ?, label = ?, updated_at = ? "
                    "WHERE run_id = ?",
                    (_dumps(config), "; ".join(versions), info.label or row["label"], now,
                     info.run_id),
                )
        return self.run_info(info.run_id)

    def resolve_run_id(self, run_id: str) -> str:
        """The full id of the run ``run_id`` names exactly or as a unique prefix.

        Raises:
            UnknownRunError: naming the input, and the candidates when it is ambiguous.
        """
        exact = self._conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if exact is not None:
            return run_id
        escaped = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._conn.execute(
            "SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' ORDER BY run_id",
            (escaped + "%",),
        ).fetchall()
        if len(rows) == 1 and run_id:
            return str(rows[0]["run_id"])
        if len(rows) > 1 and run_id:
            raise UnknownRunError(
                f"run id {run_id!r} is ambiguous: {', '.join(r['run_id'] for r in rows[:10])}",
                hint="give more characters of the run id.",
            )
        raise UnknownRunError(
            f"no run {run_id!r} in {self.path}",
            hint="`freshwiki runs` lists the stored runs (is FRESHWIKI_HOME the same?).",
        )

    def run_info(self, run_id: str) -> RunInfo:
        """The stored identity and configuration of a run (id or unique prefix)."""
        run_id = self.resolve_run_id(run_id)
        row = self._conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return _run_info(row)

    def list_runs(self) -> list[RunOverview]:
        """Every run, most recently updated first, with committed and failed counts."""
        rows = self._conn.execute(
            "SELECT r.*, "
            "(SELECT COUNT(*) FROM outputs o WHERE o.run_id = r.run_id) AS n_outputs, "
            "(SELECT COUNT(*) FROM scores s WHERE s.run_id = r.run_id) AS n_scores, "
            "(SELECT COUNT(*) FROM failures f WHERE f.run_id = r.run_id) AS n_failures "
            "FROM runs r ORDER BY r.updated_at DESC, r.run_id"
        ).fetchall()
        return [
            RunOverview(_run_info(r), int(r["n_outputs"]), int(r["n_scores"]),
                        int(r["n_failures"]))
            for r in rows
        ]

    def load_run(self, run_id: str) -> RunResults:
        """Everything committed for a run (id or unique prefix), in sample order.

        Each scored item carries its sample's metadata, the output text and the scorer's
        data; the outputs' traces are read from the file when an analysis asks for them
        (``RunResults.traces``), so a report reads the traces of the runs that need them only.
        """
        info = self.run_info(run_id)
        rows = self._conn.execute(
            "SELECT s.sample_id, s.template, s.scorer, s.value, s.label, s.explanation, "
            "s.data, o.metadata, o.text FROM scores s JOIN outputs o "
            "ON o.run_id = s.run_id AND o.sample_id = s.sample_id AND o.template = s.template "
            "WHERE s.run_id = ? ORDER BY o.sample_index, s.template, s.scorer",
            (info.run_id,),
        ).fetchall()
        items = tuple(
            ScoredItem(
                sample_id=r["sample_id"], template=r["template"], scorer=r["scorer"],
                value=float(r["value"]), label=r["label"], explanation=r["explanation"],
                metadata=json.loads(r["metadata"]), output=r["text"],
                data=json.loads(r["data"]),
            )
            for r in rows
        )
        return RunResults(info=info, items=items, failures=tuple(self.failures(info.run_id)),
                          outputs=_StoredOutputs(self.path, info.run_id))

    def traces(self, run_id: str, *, key: str | None = None) -> Iterator[StoredOutput]:
        """``(sample_id, template, metadata, text, trace)`` of every output, in sample order.

        Args:
            run_id: A full run id.
            key: Only outputs whose trace has this key at some depth (``"chat"``: the
                grounded system's turns). Tested on the stored JSON text before parsing, so
                other runs' traces are never decoded: a JSON key is a quoted string followed
                by a colon, which no string value can contain unescaped.
        """
        return _traces(self._conn, run_id, key)

    def score_data(self, run_id: str, scorer: str) -> dict[tuple[str, str], dict[str, Any]]:
        """The ``data`` a scorer stored with each score of a run, by (sample, template)."""
        rows = self._conn.execute(
            "SELECT sample_id, template, data FROM scores WHERE run_id = ? AND scorer = ?",
            (run_id, scorer)).fetchall()
        return {(r[0], r[1]): json.loads(r[2]) for r in rows}

    # -- results ---------------------------------------------------------------------------

    def done_outputs(self, run_id: str) -> set[tuple[str, str]]:
        """(sample, template) pairs with a committed output."""
        rows = self._conn.execute(
            "SELECT sample_id, template FROM outputs WHERE run_id = ?", (run_id,)
        ).fetchall()
        return {(r[0], r[1]) for r in rows}

    def done_scores(self, run_id: str) -> set[tuple[str, str, str]]:
        """(sample, template, scorer) triples with a committed score."""
        rows = self._conn.execute(
            "SELECT sample_id, template, scorer FROM scores WHERE run_id = ?", (run_id,)
        ).fetchall()
        return {(r[0], r[1], r[2]) for r in rows}

    def get_output(self, run_id: str, sample_id: str, template: str) -> Output | None:
        """The committed output of a sample x template, if any."""
        row = self._conn.execute(
            "SELECT * FROM outputs WHERE run_id = ? AND sample_id = ? AND template = ?",
            (run_id, sample_id, template),
        ).fetchone()
        if row is None:
            return None
        return Output(
            text=row["text"],
            usage=Usage(prompt_tokens=row["prompt_tokens"],
                        completion_tokens=row["completion_tokens"],
                        cached_prompt_tokens=row["cached_prompt_tokens"]),
            latency_s=float(row["latency_s"]),
            cache_hit=bool(row["cache_hit"]),
            model=row["model"],
            trace=json.loads(row["trace"]),
        )

    def commit_output(
        self, run_id: str, sample: Sample, template: str, output: Output, *, sample_index: int
    ) -> tuple[Output, bool]:
        """Commit an output unless one is already stored; clear its respond failure.

        Returns:
            The stored output and whether it was this one. When another writer committed
            first, its output is returned: scores must judge the answer that is stored,
            not one that was thrown away.
        """
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO outputs (run_id, sample_id, template, sample_index, metadata, text,"
                " prompt_tokens, completion_tokens, cached_prompt_tokens, latency_s, cache_hit,"
                " model, trace, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, sample_id, template) DO NOTHING",
                (run_id, sample.id, template, sample_index, _dumps(dict(sample.metadata)),
                 output.text, output.usage.prompt_tokens, output.usage.completion_tokens,
                 output.usage.cached_prompt_tokens, float(output.latency_s),
                 int(output.cache_hit), output.model, _dumps(dict(output.trace)), _now()),
            )
            inserted = cursor.rowcount == 1
            conn.execute(
                "DELETE FROM failures WHERE run_id = ? AND sample_id = ? AND template = ? "
                "AND stage = 'respond'",
                (run_id, sample.id, template),
            )
            if inserted:
                conn.execute("UPDATE runs SET updated_at = ? WHERE run_id = ?", (_now(), run_id))
        if inserted:
            return output, True
        stored = self.get_output(run_id, sample.id, template)
        assert stored is not None  # the conflicting row exists and rows are never deleted
        return stored, False

    def commit_score(
        self, run_id: str, sample_id: str, template: str, scorer: str, score: Score
    ) -> bool:
        """Commit a score unless one is already stored; clear its score failure.

        Returns:
            Whether this score was stored (``False``: another writer's was already there).

        Raises:
            ValueError: the value is not a finite number in [0, 1] (a scorer bug; nothing
                is stored, so the runner records it as that item's failure).
        """
        value = float(score.value)
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"scorer {scorer!r} returned {score.value!r}, not a value in [0, 1]")
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO scores (run_id, sample_id, template, scorer, value, label, "
                "explanation, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id, sample_id, template, scorer) DO NOTHING",
                (run_id, sample_id, template, scorer, value, score.label, score.explanation,
                 _dumps(dict(score.data)), _now()),
            )
            inserted = cursor.rowcount == 1
            conn.execute(
                "DELETE FROM failures WHERE run_id = ? AND sample_id = ? AND template = ? "
                "AND stage = 'score' AND scorer = ?",
                (run_id, sample_id, template, scorer),
            )
            if inserted:
                conn.execute("UPDATE runs SET updated_at = ? WHERE run_id = ?", (_now(), run_id))
        return inserted

    def record_failure(
        self,
        run_id: str,
        sample_id: str,
        template: str,
        stage: str,
        error: BaseException,
        *,
        scorer: str | None = None,
    ) -> None:
        """Record (or count again) why a sample x template failed at ``stage``.

        Nothing is recorded when the result it failed to produce is already committed (by
        another writer): a failure row must always mean "this result is missing".
        """
        if stage not in ("respond", "score"):
            raise ValueError(f"stage must be 'respond' or 'score', not {stage!r}")
        message, detail = _error_text(error)
        now = _now()
        if stage == "respond":
            exists = ("SELECT 1 FROM outputs WHERE run_id = ? AND sample_id = ? "
                      "AND template = ?")
            exists_args: tuple[str, ...] = (run_id, sample_id, template)
        else:
            exists = ("SELECT 1 FROM scores WHERE run_id = ? AND sample_id = ? "
                      "AND template = ? AND scorer = ?")
            exists_args = (run_id, sample_id, template, scorer or "")
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO failures (run_id, sample_id, template, stage, scorer, error_type, "
                "message, detail, attempts, first_at, last_at) "
                f"SELECT ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ? WHERE NOT EXISTS ({exists}) "
                "ON CONFLICT (run_id, sample_id, template, stage, scorer) DO UPDATE SET "
                "error_type = excluded.error_type, message = excluded.message, "
                "detail = excluded.detail, attempts = failures.attempts + 1, "
                "last_at = excluded.last_at",
                (run_id, sample_id, template, stage, scorer or "", type(error).__name__,
                 message, detail, now, now, *exists_args),
            )

    def failures(self, run_id: str) -> list[FailedItem]:
        """Unresolved failures of a run."""
        rows = self._conn.execute(
            "SELECT * FROM failures WHERE run_id = ? ORDER BY first_at, sample_id, template, "
            "stage, scorer",
            (run_id,),
        ).fetchall()
        return [
            FailedItem(sample_id=r["sample_id"], template=r["template"], stage=r["stage"],
                       error_type=r["error_type"], message=r["message"],
                       scorer=r["scorer"] or None)
            for r in rows
        ]

    def failure_attempts(self, run_id: str) -> dict[tuple[str, str, str, str], int]:
        """Failed attempts per (sample, template, stage, scorer) of a run, for diagnostics."""
        rows = self._conn.execute(
            "SELECT sample_id, template, stage, scorer, attempts FROM failures "
            "WHERE run_id = ?",
            (run_id,),
        ).fetchall()
        return {(r[0], r[1], r[2], r[3]): int(r[4]) for r in rows}

    def output_metadata(self, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
        """The sample metadata of every committed output, by (sample, template).

        Unlike :meth:`load_run` this includes answers not (yet) scored, so a leaderboard can
        count what a run attempted, not only what was scored.
        """
        rows = self._conn.execute(
            "SELECT sample_id, template, metadata FROM outputs WHERE run_id = ? "
            "ORDER BY sample_index, sample_id, template",
            (self.resolve_run_id(run_id),),
        ).fetchall()
        return {(r[0], r[1]): json.loads(r[2]) for r in rows}

    def fingerprint(self) -> str:
        """A short text that changes whenever anything a report shows may have changed.

        Row counts and the latest timestamps: every commit adds a row or moves a run's
        ``updated_at``, and a repeated failure moves ``last_at``. Cheap enough to ask per
        request, so a server can rebuild a page only when the results changed.
        """
        row = self._conn.execute(
            "SELECT (SELECT COUNT(*) FROM runs), (SELECT MAX(updated_at) FROM runs), "
            "(SELECT COUNT(*) FROM outputs), (SELECT COUNT(*) FROM scores), "
            "(SELECT COUNT(*) FROM failures), (SELECT MAX(last_at) FROM failures), "
            "(SELECT TOTAL(attempts) FROM failures)"
        ).fetchone()
        return "|".join(str(v) for v in row)

    def export_rows(self, run_ids: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of the given runs: their ``runs`` rows, then outputs, scores, failures.

        Read in one transaction, so the rows are one consistent snapshot even while a runner
        keeps committing (WAL readers see the database as of their first read). JSON columns
        come decoded (see :data:`COLUMNS`).

        Raises:
            UnknownRunError: a run id is not stored (ids must be full, not prefixes).
        """
        ids = list(dict.fromkeys(run_ids))
        self._conn.execute("BEGIN")
        try:
            for run_id in ids:
                if self._conn.execute("SELECT 1 FROM runs WHERE run_id = ?",
                                      (run_id,)).fetchone() is None:
                    raise UnknownRunError(f"no run {run_id!r} in {self.path}",
                                          hint="`freshwiki runs` lists the stored runs.")
            order = {"runs": "run_id", "outputs": "sample_index, sample_id, template",
                     "scores": "sample_id, template, scorer",
                     "failures": "sample_id, template, stage, scorer"}
            for table, columns in COLUMNS.items():
                for run_id in ids:
                    cursor = self._conn.execute(
                        f"SELECT {', '.join(columns)} FROM {table} WHERE run_id = ? "
                        f"ORDER BY {order[table]}", (run_id,))
                    for row in cursor:
                        yield table, {name: json.loads(value) if kind == "json" else value
                                      for (name, kind), value in zip(columns.items(), row,
                                                                     strict=True)}
        finally:
            self._conn.execute("COMMIT")

    def merge_rows(self, rows: Iterable[tuple[str, Mapping[str, Any]]], *, source: str,
                   commit: bool = True) -> MergeCounts:
        """Merge rows from another store (see :meth:`export_rows`) into this one, atomically.

        All in one write transaction: if ``rows`` raises (a damaged file) or a run conflicts,
        nothing is stored. Keys are the store's own, so merging the same rows twice, or two
        overlapping sets, stores each result once:

        * a new run is stored as it comes; a known one must have the same identity (every
          config key :func:`~freshwiki.evaluation._diff.diff_runs` counts as identity: not
          the work set, nor how the model was spelled), else :class:`RunConflictError`; its
          work set is widened as on resume, its code versions joined, its first and last
          times widened;
        * outputs and scores: ``ON CONFLICT DO NOTHING``, the stored one wins (as when two
          processes race). An incoming output that loses to a *different* stored text takes
          its scores with it, since they judged the other text;
        * a failure is stored only while its result is missing (here or in ``rows``), and a
          stored result clears the matching failure, as a commit does.

        Rows must come in :meth:`export_rows`' order (a run's row before its results).

        Args:
            rows: ``(table, row)`` pairs; JSON columns decoded.
            source: Where the rows come from, for error messages.
            commit: ``False`` rolls everything back at the end (a dry run that still counts).

        Raises:
            RunConflictError: naming the run and the config keys that differ.
        """
        added = dict.fromkeys(COLUMNS, 0)
        present = dict.fromkeys(COLUMNS, 0)
        runs_added: list[str] = []
        runs_merged: list[str] = []
        lost: set[tuple[str, str, str]] = set()
        diverged = other_answers = resolved = 0
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            conn = self._conn
            for table, row in rows:
                if table == "runs":
                    if self._merge_run(row, source):
                        runs_added.append(row["run_id"])
                        added["runs"] += 1
                    else:
                        runs_merged.append(row["run_id"])
                        present["runs"] += 1
                    continue
                key = (row["run_id"], row["sample_id"], row["template"])
                if table != "outputs" and key in lost and (
                        table == "scores" or row["stage"] == "score"):
                    other_answers += 1
                    continue
                if table == "failures" and self._result_stored(row):
                    resolved += 1
                    continue
                if self._insert(table, row):
                    added[table] += 1
                    if table == "outputs":
                        conn.execute("DELETE FROM failures WHERE run_id = ? AND sample_id = ? "
                                     "AND template = ? AND stage = 'respond'", key)
                    elif table == "scores":
                        conn.execute("DELETE FROM failures WHERE run_id = ? AND sample_id = ? "
                                     "AND template = ? AND stage = 'score' AND scorer = ?",
                                     (*key, row["scorer"]))
                    continue
                present[table] += 1
                if table == "outputs":
                    stored = conn.execute(
                        "SELECT text FROM outputs WHERE run_id = ? AND sample_id = ? "
                        "AND template = ?", key).fetchone()
                    if stored is not None and stored[0] != row["text"]:
                        diverged += 1
                        lost.add(key)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT" if commit else "ROLLBACK")
        return MergeCounts(runs_added=tuple(runs_added), runs_merged=tuple(runs_merged),
                           added=added, present=present, diverged=diverged,
                           of_other_answers=other_answers, failures_resolved=resolved)

    def _merge_run(self, row: Mapping[str, Any], source: str) -> bool:
        """Store or widen one incoming run row (inside :meth:`merge_rows`' transaction).

        Returns:
            Whether the run was new here.
        """
        run_id = row["run_id"]
        local = self._conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if local is None:
            return self._insert("runs", row)
        mine, theirs = json.loads(local["config"]), row["config"]
        incoming = _run_info({**row, "config": _dumps(theirs),
                              "model_hashes": _dumps(row["model_hashes"])})
        differ = [d.key for d in diff_runs(_run_info(local), incoming) if d.identity]
        differ += [c for c in ("benchmark", "system") if local[c] != row[c]]
        if differ:
            shown = ", ".join(differ[:6]) + (f" and {len(differ) - 6} more" if len(differ) > 6
                                             else "")
            raise RunConflictError(
                f"run {run_id} ({local['benchmark']}, {local['system']}) is stored in "
                f"{self.path} and in {source} with different identities (they differ in "
                f"{shown}); nothing was stored",
                hint="one run id must mean one run: were the two stores written by "
                "freshwiki versions that derive run ids differently? Compare the two with "
                "`freshwiki runs --json`, and import from a store of the same version.")
        versions = local["code_version"].split("; ")
        versions += [v for v in str(row["code_version"]).split("; ") if v not in versions]
        self._conn.execute(
            "UPDATE runs SET config = ?, code_version = ?, label = ?, created_at = ?, "
            "updated_at = ? WHERE run_id = ?",
            (_dumps(_merge_work(mine, theirs)), "; ".join(versions),
             local["label"] or row["label"],
             min(local["created_at"], row["created_at"], key=dt.datetime.fromisoformat),
             max(local["updated_at"], row["updated_at"], key=dt.datetime.fromisoformat),
             run_id))
        return False

    def _insert(self, table: str, row: Mapping[str, Any]) -> bool:
        """``INSERT ... ON CONFLICT DO NOTHING`` of one row; whether it was stored."""
        columns = COLUMNS[table]
        values = [_dumps(row[c]) if kind == "json" else row[c] for c, kind in columns.items()]
        cursor = self._conn.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) ON CONFLICT DO NOTHING", values)
        return cursor.rowcount == 1

    def _result_stored(self, failure: Mapping[str, Any]) -> bool:
        """Whether the result a failure row says is missing is stored (so it is not)."""
        key = (failure["run_id"], failure["sample_id"], failure["template"])
        if failure["stage"] == "respond":
            sql = "SELECT 1 FROM outputs WHERE run_id = ? AND sample_id = ? AND template = ?"
            return self._conn.execute(sql, key).fetchone() is not None
        sql = ("SELECT 1 FROM scores WHERE run_id = ? AND sample_id = ? AND template = ? "
               "AND scorer = ?")
        return self._conn.execute(sql, (*key, failure["scorer"])).fetchone() is not None

    def count(self, table: str, run_id: str) -> tuple[int, int]:
        """(rows, distinct keys) of ``outputs``/``scores``/``failures`` for a run.

        Both numbers are the same by construction; tests and ``freshwiki runs`` check it.
        """
        keys = {
            "outputs": "sample_id || char(0) || template",
            "scores": "sample_id || char(0) || template || char(0) || scorer",
            "failures": "sample_id || char(0) || template || char(0) || stage || char(0) "
                        "|| scorer",
        }
        if table not in keys:
            raise ValueError(f"no table {table!r}")
        row = self._conn.execute(
            f"SELECT COUNT(*), COUNT(DISTINCT {keys[table]}) FROM {table} WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return int(row[0]), int(row[1])


def _traces(conn: sqlite3.Connection, run_id: str, key: str | None) -> Iterator[StoredOutput]:
    query = "SELECT sample_id, template, metadata, text, trace FROM outputs WHERE run_id = ?"
    params: tuple[Any, ...] = (run_id,)
    if key is not None:
        query += " AND instr(trace, ?) > 0"
        params += (json.dumps(key) + ":",)
    for row in conn.execute(query + " ORDER BY sample_index, sample_id, template", params):
        yield (row[0], row[1], json.loads(row[2]), row[3], json.loads(row[4]))


@dataclass(frozen=True)
class _StoredOutputs:
    """A run's outputs in a store file, read on demand.

    On a connection of their own: the store that loaded the run may be closed, or busy in
    another thread, by then.
    """

    path: Path
    run_id: str

    def traces(self, key: str | None = None) -> Iterator[StoredOutput]:
        conn = sqlite3.connect(self.path, timeout=60.0)
        try:
            yield from _traces(conn, self.run_id, key)
        finally:
            conn.close()


def _run_info(row: sqlite3.Row | Mapping[str, Any]) -> RunInfo:
    return RunInfo(
        run_id=row["run_id"],
        benchmark=row["benchmark"],
        system=row["system"],
        model=row["model"],
        config=json.loads(row["config"]),
        code_version=row["code_version"],
        model_hashes=json.loads(row["model_hashes"]),
        created_at=dt.datetime.fromisoformat(row["created_at"]),
        updated_at=dt.datetime.fromisoformat(row["updated_at"]),
        label=row["label"],
    )


def work_set_items(
    results: RunResults,
    *,
    sample_ids: Sequence[str] | None = None,
    templates: Sequence[str] | None = None,
    scorers: Sequence[str] | None = None,
) -> list[ScoredItem]:
    """The scored items of ``results`` within a work set (``None``: no restriction)."""
    ids = None if sample_ids is None else set(sample_ids)
    return [
        item for item in results.items
        if (ids is None or item.sample_id in ids)
        and (templates is None or item.template in templates)
        and (scorers is None or item.scorer in scorers)
    ]
