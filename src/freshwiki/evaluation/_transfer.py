"""Moving runs between machines: one file out of a results store, merged into another.

Evaluations often run on several machines (a GPU box for the large model, a laptop for the
small one) and their results belong on one leaderboard. ``freshwiki runs export`` writes the
chosen runs, every output, score and failure of them, into one file; ``freshwiki runs import``
merges such a file into the local store.

**The file** is gzip-compressed JSON lines, so it is small, streams in constant memory and
can be read with ``zcat`` when something looks wrong:

1. a header ``{"format": "freshwiki-runs", "schema": N, "freshwiki": VERSION, "runs": [...]}``
   where ``schema`` is the results store's schema the rows follow;
2. one line per row, ``{"table": "runs"|"outputs"|"scores"|"failures", "row": {...}}``, a
   run's row before its results, outputs before their scores;
3. an end line ``{"end": {"records": N, "counts": {...}, "sha256": HEX}}``: the SHA-256 of
   every byte before it. A file cut short has no end line; a file edited or damaged after
   export fails the checksum (gzip's own CRC catches most damage earlier).

**Importing** reads the whole file once to check it (format, schema, every row's columns and
types, references, checksum) before touching the store, then merges it in one transaction
(:meth:`~freshwiki.evaluation._store.ResultsStore.merge_rows`), re-checking the checksum
before committing. So a damaged file, a file of another schema, or a run that conflicts
changes nothing; importing the same file twice, or two overlapping ones, adds each result once,
keyed exactly as the store keys them.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import math
import os
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from freshwiki import __version__
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._store import COLUMNS, SCHEMA_VERSION, MergeCounts, ResultsStore

FORMAT = "freshwiki-runs"
"""The ``format`` every runs file's header names."""
SUFFIX = ".jsonl.gz"

Progress = Callable[[str, int, int | None], None]
"""Called with (stage, done, total or None): stages ``export`` (rows), ``check`` and
``import`` (compressed bytes read)."""

_SQLITE_MAGIC = b"SQLite format 3\x00"
_GZIP_MAGIC = b"\x1f\x8b"


class TransferError(FreshwikiError):
    """A runs file that cannot be read: missing, damaged, truncated or not a runs file."""


class SchemaMismatchError(TransferError):
    """A runs file written for another results-store schema than this freshwiki's."""


@dataclass(frozen=True)
class ExportSummary:
    """What :func:`export_runs` wrote.

    Attributes:
        path: The file.
        run_ids: The runs in it.
        counts: Rows per table.
        sha256: The checksum in its end line.
        size: Bytes on disk.
    """

    path: Path
    run_ids: tuple[str, ...]
    counts: Mapping[str, int]
    sha256: str
    size: int


@dataclass(frozen=True)
class FileContents:
    """One checked runs file.

    Attributes:
        path: The file.
        header: Its header (format, schema, freshwiki version, export time, run ids).
        counts: Its rows per table.
    """

    path: Path
    header: Mapping[str, Any]
    counts: Mapping[str, int]


@dataclass(frozen=True)
class ImportSummary:
    """What :func:`import_runs` did (or, in a dry run, would do).

    Attributes:
        files: The files, checked, in the order merged.
        merged: What the store did with their rows (all files together).
        dry_run: Whether the merge was rolled back.
    """

    files: tuple[FileContents, ...]
    merged: MergeCounts
    dry_run: bool


def select_runs(store: ResultsStore, run_ids: Sequence[str] = (),
                benchmarks: Sequence[str] = ()) -> list[str]:
    """The full ids of the runs to export, in store order (most recently updated first).

    Those named (ids or unique prefixes), plus every run of the named benchmarks; all runs
    when neither is given. Each once.

    Raises:
        UnknownRunError: an id matches no run, or several.
        TransferError: a benchmark has no run in the store.
    """
    overviews = store.list_runs()
    if not run_ids and not benchmarks:
        return [o.info.run_id for o in overviews]
    chosen = {store.resolve_run_id(r) for r in run_ids}
    known = {o.info.benchmark for o in overviews}
    for name in benchmarks:
        if name not in known:
            raise TransferError(
                f"no run of benchmark {name!r} in {store.path}",
                hint="benchmarks with runs: " + (", ".join(sorted(known)) or "(none)") + ".")
    chosen |= {o.info.run_id for o in overviews if o.info.benchmark in benchmarks}
    return [o.info.run_id for o in overviews if o.info.run_id in chosen]


def _line(record: Mapping[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False)
            + "\n").encode("utf-8")


def export_runs(store: ResultsStore, path: Path, run_ids: Sequence[str], *,
                progress: Progress | None = None) -> ExportSummary:
    """Write the given runs, with all their results, to the runs file ``path``.

    The file is written beside ``path`` under a temporary name and renamed into place, so
    ``path`` is either the complete new file or untouched. The rows are one consistent
    snapshot of the store, even while a run keeps committing.

    Args:
        store: The store to read.
        path: The file to write (conventionally ``*.jsonl.gz``); replaced if it exists.
        run_ids: Full run ids (see :func:`select_runs`).
        progress: Called per thousand rows with the rows written and the total expected.

    Raises:
        TransferError: no runs were given.
        UnknownRunError: a run id is not stored.
    """
    if not run_ids:
        raise TransferError(f"no runs to export from {store.path}",
                            hint="`freshwiki runs` lists the stored runs; `freshwiki eval` "
                            "makes one.")
    ids = tuple(dict.fromkeys(run_ids))
    expected = {o.info.run_id: o for o in store.list_runs()}
    total = sum(1 + o.outputs + o.scores + o.failures
                for r, o in expected.items() if r in ids)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    counts: Counter[str] = Counter()
    try:
        with tmp.open("wb") as raw:
            # No file name or time in the gzip header: the same rows give the same bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                def write(record: Mapping[str, Any]) -> None:
                    data = _line(record)
                    digest.update(data)
                    gz.write(data)

                write({"format": FORMAT, "schema": SCHEMA_VERSION, "freshwiki": __version__,
                       "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                       "source": str(store.path), "runs": list(ids)})
                for table, row in store.export_rows(ids):
                    write({"table": table, "row": row})
                    counts[table] += 1
                    done = counts.total()
                    if progress is not None and done % 1000 == 0:
                        progress("export", done, total)
                end = {"records": counts.total(), "counts": dict(counts),
                       "sha256": digest.hexdigest()}
                gz.write(_line({"end": end}))
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    if progress is not None:
        progress("export", counts.total(), total)
    return ExportSummary(path=path, run_ids=ids, counts=dict(counts),
                         sha256=str(end["sha256"]), size=path.stat().st_size)


# ----------------------------------------------------------------------------- reading


def _damaged(path: Path, what: str) -> TransferError:
    return TransferError(f"{path} is damaged: {what}; nothing was imported",
                         hint="copy or export the file again (`freshwiki runs export` on the "
                         "machine that has the runs).")


def _open(path: Path) -> tuple[IO[bytes], bool]:
    """The file, opened raw, and whether it is gzip-compressed.

    Checks first that it looks like a runs file at all: gzip, or plain JSON lines (a bundle
    unpacked with ``gunzip``, read the same way).
    """
    if not path.exists():
        raise TransferError(f"no file {path}",
                            hint="give the path of a file written by `freshwiki runs export`.")
    if path.is_dir():
        raise TransferError(f"{path} is a folder, not a runs file",
                            hint="give the path of a file written by `freshwiki runs export`.")
    raw = path.open("rb")
    head = raw.read(len(_SQLITE_MAGIC))
    raw.seek(0)
    if head.startswith(_GZIP_MAGIC):
        return raw, True
    if head.startswith(b"{"):
        return raw, False
    raw.close()
    if head == _SQLITE_MAGIC:
        raise TransferError(
            f"{path} is a results database, not a runs file",
            hint="on the machine it comes from, run `freshwiki --home HOME runs export "
            "--out FILE.jsonl.gz` and import that file.")
    raise TransferError(f"{path} is not a freshwiki runs file (neither gzip-compressed nor "
                        "JSON lines)", hint="runs files are written by `freshwiki runs export`.")


def _check_header(path: Path, line: bytes) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TransferError(f"{path} is not a freshwiki runs file (its first line names no "
                            f"format {FORMAT!r})",
                            hint="runs files are written by `freshwiki runs export`.")
    schema = header.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise _damaged(path, "its header has no schema number")
    written_by = header.get("freshwiki", "an unknown version")
    if schema > SCHEMA_VERSION:
        raise SchemaMismatchError(
            f"{path} has runs-file schema {schema} (written by freshwiki {written_by}); "
            f"this freshwiki ({__version__}) reads schema {SCHEMA_VERSION}; nothing was "
            "imported",
            hint="upgrade freshwiki on this machine to the version that wrote the file, then "
            "import again.")
    if schema < SCHEMA_VERSION:
        raise SchemaMismatchError(
            f"{path} has runs-file schema {schema} (written by freshwiki {written_by}); "
            f"this freshwiki ({__version__}) reads schema {SCHEMA_VERSION} and cannot "
            "convert older files; nothing was imported",
            hint="upgrade freshwiki on the machine that has the runs (its store is converted "
            "when opened), export them again, and import the new file.")
    if not isinstance(header.get("runs"), list):
        raise _damaged(path, "its header lists no runs")
    return header


def _valid(kind: str, value: Any) -> bool:
    if kind in ("text", "time"):
        if not isinstance(value, str):
            return False
        if kind == "time":
            try:
                dt.datetime.fromisoformat(value)
            except ValueError:
                return False
        return True
    if kind == "text?":
        return value is None or isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "real":
        return (isinstance(value, int | float) and not isinstance(value, bool)
                and math.isfinite(value))
    return isinstance(value, dict)  # json: every JSON column holds an object


class _Reader:
    """One pass over a runs file: yields its rows, checks everything, raises at the first fault.

    See :func:`read_runs_file` for what is checked.
    """

    def __init__(self, path: Path, progress: Progress | None, stage: str) -> None:
        self.path = path
        self.progress = progress
        self.stage = stage
        self.header: dict[str, Any] = {}
        self.counts: Counter[str] = Counter()

    def rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        path = self.path
        raw, compressed = _open(path)
        size = path.stat().st_size
        try:
            stream: IO[bytes] = (cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
                                 if compressed else raw)
            with stream as gz:
                lines = self._lines(gz)
                first = next(lines, None)
                if first is None:
                    raise TransferError(f"{path} is empty",
                                        hint="export the runs again.")
                digest = hashlib.sha256(first[1])
                self.header = _check_header(path, first[1])
                runs = set()
                outputs: set[tuple[str, str, str]] = set()
                end: Any = None
                for number, line in lines:
                    if end is not None:
                        raise _damaged(path, f"line {number} follows its end line")
                    record = self._record(number, line)
                    if "end" in record:
                        end = record["end"]
                        continue
                    digest.update(line)
                    table, row = self._row(number, record)
                    if table == "runs":
                        if row["run_id"] in runs:
                            raise _damaged(path, f"line {number} repeats run {row['run_id']}")
                        runs.add(row["run_id"])
                    elif row["run_id"] not in runs:
                        raise _damaged(path, f"line {number} belongs to run {row['run_id']}, "
                                       "which has no run line before it")
                    if table == "outputs":
                        outputs.add((row["run_id"], row["sample_id"], row["template"]))
                    elif table == "scores" and (
                            row["run_id"], row["sample_id"], row["template"]) not in outputs:
                        raise _damaged(path, f"line {number} scores an answer the file does "
                                       "not contain")
                    self.counts[table] += 1
                    if self.progress is not None and number % 1000 == 0:
                        self.progress(self.stage, raw.tell(), size)
                    yield table, row
                self._check_end(end, digest.hexdigest(), runs)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            if isinstance(exc, EOFError):
                raise TransferError(
                    f"{path} is cut short (the compressed data ends early); nothing was "
                    "imported", hint="copy the file again, completely.") from None
            raise _damaged(path, f"its compressed data is corrupt ({exc})") from None
        finally:
            raw.close()
        if self.progress is not None:
            self.progress(self.stage, size, size)

    def _lines(self, gz: IO[bytes]) -> Iterator[tuple[int, bytes]]:
        for number, line in enumerate(gz, start=1):
            if not line.endswith(b"\n"):
                raise TransferError(f"{self.path} is cut short (line {number} is incomplete); "
                                    "nothing was imported",
                                    hint="copy the file again, completely.")
            yield number, line

    def _record(self, number: int, line: bytes) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except ValueError:
            raise _damaged(self.path, f"line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise _damaged(self.path, f"line {number} is not a JSON object")
        return record

    def _row(self, number: int, record: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        table, row = record.get("table"), record.get("row")
        if not isinstance(table, str) or table not in COLUMNS or not isinstance(row, dict):
            raise _damaged(self.path, f"line {number} is not a row of runs, outputs, scores "
                           "or failures")
        columns = COLUMNS[table]
        if set(row) != set(columns):
            missing = sorted(set(columns) - set(row))
            extra = sorted(set(row) - set(columns))
            raise _damaged(self.path, f"line {number} ({table}) "
                           + (f"lacks {', '.join(missing)}" if missing else "")
                           + ("; " if missing and extra else "")
                           + (f"has unknown {', '.join(extra)}" if extra else ""))
        for name, kind in columns.items():
            if not _valid(kind, row[name]):
                raise _damaged(self.path, f"line {number} ({table}): {name} is "
                               f"{json.dumps(row[name])[:60]}, not {kind}")
        if table == "scores" and not 0.0 <= row["value"] <= 1.0:
            raise _damaged(self.path, f"line {number}: score {row['value']} is not in [0, 1]")
        if table == "failures" and row["stage"] not in ("respond", "score"):
            raise _damaged(self.path, f"line {number}: failure stage {row['stage']!r}")
        return table, row

    def _check_end(self, end: Any, digest: str, runs: set[str]) -> None:
        if end is None:
            raise TransferError(f"{self.path} is cut short (it has no end line); nothing was "
                                "imported", hint="copy or export the file again, completely.")
        if not isinstance(end, dict) or end.get("sha256") != digest:
            raise _damaged(self.path, "its checksum does not match its content (it was changed "
                           "after export)")
        if end.get("counts") != dict(self.counts) or set(self.header["runs"]) != runs:
            raise _damaged(self.path, "its row counts or run list do not match its content")


def read_runs_file(path: Path, *, progress: Progress | None = None,
                   stage: str = "check") -> tuple[dict[str, Any], dict[str, int]]:
    """Check a runs file completely without importing it.

    Returns:
        Its header and its rows per table.

    Raises:
        TransferError: the file is missing, not a runs file, damaged or cut short.
        SchemaMismatchError: it follows another store schema (the message gives both).
    """
    reader = _Reader(path, progress, stage)
    for _ in reader.rows():
        pass
    return reader.header, dict(reader.counts)


def check_runs_files(paths: Sequence[Path], *,
                     progress: Progress | None = None) -> list[FileContents]:
    """Check every file completely (see :func:`read_runs_file`), before any is imported.

    Raises:
        TransferError: no files, or one is missing, not a runs file, damaged or cut short.
        SchemaMismatchError: one follows another store schema.
    """
    if not paths:
        raise TransferError("no runs files to import",
                            hint="give one or more files written by `freshwiki runs export`.")
    files = []
    for path in paths:
        header, counts = read_runs_file(path, progress=progress, stage=f"check {path.name}")
        files.append(FileContents(path, header, counts))
    return files


def merge_runs_files(store: ResultsStore, files: Sequence[FileContents], *,
                     dry_run: bool = False, progress: Progress | None = None) -> ImportSummary:
    """Merge checked files (:func:`check_runs_files`) into ``store`` in one transaction.

    Each file is read again, and checked again as it is merged (its checksum before the
    commit), so a file changed since it was checked still cannot leave half its rows behind.

    Raises:
        TransferError: a file changed into a damaged one since it was checked.
        RunConflictError: a run id of a file names a different run here (nothing is
            imported).
    """
    def rows() -> Iterator[tuple[str, dict[str, Any]]]:
        for f in files:
            yield from _Reader(f.path, progress, f"import {f.path.name}").rows()

    source = ", ".join(str(f.path) for f in files)
    merged = store.merge_rows(rows(), source=source, commit=not dry_run)
    return ImportSummary(files=tuple(files), merged=merged, dry_run=dry_run)


def import_runs(store: ResultsStore, paths: Sequence[Path], *, dry_run: bool = False,
                progress: Progress | None = None) -> ImportSummary:
    """Check runs files, then merge them all into ``store`` in one transaction.

    Every file is checked completely first, so one damaged file imports nothing; then all
    are merged in one transaction, so a conflict in the last file undoes the first too.

    Args:
        store: The local store.
        paths: Files written by :func:`export_runs` (overlapping ones are fine).
        dry_run: Count what would be added, then roll back.
        progress: Called with (stage, compressed bytes read, file size) for the check and
            the import pass of each file; the stage names the file.

    Raises:
        TransferError: a file is missing, not a runs file, damaged or cut short (nothing
            is imported).
        SchemaMismatchError: a file follows another store schema (nothing is imported).
        RunConflictError: a run id of a file names a different run here (nothing is
            imported).
    """
    files = check_runs_files(paths, progress=progress)
    return merge_runs_files(store, files, dry_run=dry_run, progress=progress)


BUNDLE_SUFFIXES = (".json.gz", ".jsonl.gz", ".json", ".jsonl")
"""File names a folder of run bundles is read for (``freshwiki leaderboard --from DIR``)."""


def bundle_files(folder: Path) -> list[Path]:
    """The run bundles in ``folder`` (not its subfolders), sorted by name.

    Raises:
        TransferError: ``folder`` is not a folder, or holds no bundle.
    """
    if not folder.is_dir():
        raise TransferError(f"{folder} is not a folder of run bundles",
                            hint="give the folder `freshwiki runs export --out DIR/NAME.json.gz` "
                            "wrote to, e.g. experiments/runs.")
    files = sorted(p for p in folder.iterdir()
                   if p.is_file() and p.name.endswith(BUNDLE_SUFFIXES)
                   and not p.name.startswith("."))
    if not files:
        raise TransferError(f"{folder} holds no run bundle ({', '.join(BUNDLE_SUFFIXES)})",
                            hint="`freshwiki runs export RUN --out "
                            f"{folder}/NAME.json.gz` writes one.")
    return files


@contextmanager
def bundle_store(paths: Sequence[Path], *,
                 progress: Progress | None = None) -> Iterator[ResultsStore]:
    """A throw-away results store holding exactly the runs of ``paths``.

    Every file is checked completely before any is read in (:func:`check_runs_files`), so
    a damaged bundle yields no store at all; the store lives in a temporary folder removed on
    exit, so the user's own store is never opened. Used to build the leaderboard from the
    bundles committed in a repository.

    Raises:
        TransferError: a file is missing, not a runs file, damaged or cut short.
        SchemaMismatchError: a file follows another store schema.
        RunConflictError: two bundles hold different runs under one id.
    """
    files = check_runs_files(paths, progress=progress)
    with (tempfile.TemporaryDirectory(prefix="freshwiki-bundles-") as scratch,
          ResultsStore(Path(scratch) / "runs.sqlite") as store):
        merge_runs_files(store, files, progress=progress)
        yield store
