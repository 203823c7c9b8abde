"""Response-cache files: carry stored LLM answers from one machine (or session) to another.

Why: a run's identity includes the code that scores it, so a scorer change gives every run a
new id, and the new run is answered again. On the machine that made the answers that costs
nothing (the response cache serves them), but a fresh machine, or a session that starts with
an empty home, has no cache and would spend hours generating the same text again. A run bundle
(``freshwiki runs export``) keeps the outputs but not the requests, so it cannot warm a cache.
A cache file does: ``freshwiki llm cache export`` writes the stored responses of a model, and
``freshwiki llm cache import`` adds them to another machine's cache, after which every request
already answered is served from it, under whatever run id.

Format: gzip'd JSON lines. A header ``{"format": "freshwiki-llm-responses", "schema": 1, ...}``,
one ``{"row": {...}}`` per response with the cache's columns (the request's canonical JSON
included, so its key can be checked), and an ``{"end": {"rows": N}}`` line so a cut-off file
is noticed. A row's key must be the SHA-256 of its request: a row that was edited by hand
would otherwise answer a request it was never asked.

Prompts are in the file (the request is the prompt): export only what may be shared (the
WikiContradict prompts quote Wikipedia, CC BY-SA; the external claim sets have no licence).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freshwiki.errors import FreshwikiError
from freshwiki.llm._cache import COLUMNS, ResponseCache

FORMAT = "freshwiki-llm-responses"
SCHEMA = 1

_TYPES: dict[str, tuple[type, ...]] = {
    "key": (str,), "backend": (str,), "model": (str,), "request": (str,), "text": (str,),
    "finish_reason": (str,), "prompt_tokens": (int,), "completion_tokens": (int,),
    "refusal": (str, type(None)), "created": (float, int),
}


class CacheFileError(FreshwikiError):
    """A response-cache file that cannot be imported as it is."""


@dataclass(frozen=True)
class CacheImport:
    """What an import did: rows read, added, and already in the cache."""

    rows: int
    added: int
    present: int


def export_responses(cache: ResponseCache, path: Path, *, model: str | None = None) -> int:
    """Write the stored responses of ``model`` (an id prefix; all if None) to ``path``.

    Written to a temporary file beside ``path`` and renamed, so an interrupted export never
    leaves a half file under the name. Returns the number of rows written.
    """
    rows = cache.rows(model)
    tmp = path.with_name(path.name + ".part")
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(tmp, "wt", encoding="utf-8") as out:
        header = {"format": FORMAT, "schema": SCHEMA, "model": model,
                  "exported_at": datetime.now(UTC).isoformat(timespec="seconds")}
        out.write(json.dumps(header) + "\n")
        for row in rows:
            out.write(json.dumps({"row": row}, ensure_ascii=False) + "\n")
        out.write(json.dumps({"end": {"rows": len(rows)}}) + "\n")
    tmp.replace(path)
    return len(rows)


def read_responses(path: Path) -> list[dict[str, Any]]:
    """The rows of the cache file at ``path``, every one checked.

    Raises:
        CacheFileError: the file is missing, not a cache file, cut off, or a row lacks a
            column, has one of the wrong type, or a key that is not its request's SHA-256
            (the message names the file, the line and the column).
    """
    if not path.is_file():
        raise CacheFileError(f"no response-cache file at {path}",
                             hint="give the file `freshwiki llm cache export` wrote.")
    rows: list[dict[str, Any]] = []
    end: int | None = None
    try:
        with gzip.open(path, "rt", encoding="utf-8") as src:
            for number, line in enumerate(src, start=1):
                rows_or_end = _parse(path, number, line, header=number == 1)
                if number == 1:
                    continue
                if end is not None:
                    raise CacheFileError(f"{path}, line {number}: text after the end line")
                if isinstance(rows_or_end, int):
                    end = rows_or_end
                elif rows_or_end is not None:
                    rows.append(rows_or_end)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CacheFileError(f"{path} is not a readable gzip'd response-cache file: {exc}",
                             hint="export it again with `freshwiki llm cache export`.") from exc
    if end is None:
        raise CacheFileError(f"{path} has no end line: the file is cut off",
                             hint="copy or export it again; nothing was imported.")
    if end != len(rows):
        raise CacheFileError(f"{path}: its end line says {end} rows, the file holds {len(rows)}",
                             hint="export it again; nothing was imported.")
    return rows


def _parse(path: Path, number: int, line: str, *, header: bool) -> dict[str, Any] | int | None:
    where = f"{path}, line {number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CacheFileError(f"{where}: not JSON ({exc.msg})") from exc
    if not isinstance(record, dict):
        raise CacheFileError(f"{where}: expected an object")
    if header:
        if record.get("format") != FORMAT:
            raise CacheFileError(f"{where}: field 'format' is {record.get('format')!r}, "
                                 f"not {FORMAT!r}: not a response-cache file",
                                 hint="run bundles are imported with `freshwiki runs import`.")
        if record.get("schema") != SCHEMA:
            raise CacheFileError(f"{where}: field 'schema' is {record.get('schema')!r}; this "
                                 f"freshwiki reads schema {SCHEMA}")
        return None
    if "end" in record:
        rows = record["end"].get("rows") if isinstance(record["end"], dict) else None
        if not isinstance(rows, int):
            raise CacheFileError(f"{where}: field 'end.rows' is missing or not a number")
        return rows
    row = record.get("row")
    if not isinstance(row, dict):
        raise CacheFileError(f"{where}: expected a 'row' or an 'end' object")
    for column in COLUMNS:
        if column not in row:
            raise CacheFileError(f"{where}: field 'row.{column}' is missing")
        value = row[column]
        if not isinstance(value, _TYPES[column]) or isinstance(value, bool):
            raise CacheFileError(f"{where}: field 'row.{column}' is {type(value).__name__}, "
                                 f"expected {' or '.join(t.__name__ for t in _TYPES[column])}")
    digest = hashlib.sha256(row["request"].encode("utf-8")).hexdigest()
    if digest != row["key"]:
        raise CacheFileError(f"{where}: field 'row.key' is not the SHA-256 of 'row.request'",
                             hint="the row was edited after export; export the file again.")
    return {column: row[column] for column in COLUMNS}


def import_responses(cache: ResponseCache, path: Path,
                     on_read: Callable[[int], None] | None = None) -> CacheImport:
    """Add the rows of ``path`` that ``cache`` does not hold yet; all or nothing.

    The whole file is read and checked before the first row is written, so a bad row leaves
    the cache as it was. ``on_read`` is told the number of rows read (for a progress line).

    Raises:
        CacheFileError: see :func:`read_responses`.
    """
    rows = read_responses(path)
    if on_read is not None:
        on_read(len(rows))
    added, present = cache.add_rows(rows)
    return CacheImport(rows=len(rows), added=added, present=present)
