"""Reading the user's posts file: post id to text and date.

The Community Notes downloads never include the posts (tweets) the notes are about, so a user
who has them (from the X API, an archive, a scrape) supplies them in whatever shape their tool
wrote: CSV, TSV or JSONL, plain or gzip, with ``tweetId``/``postId``/``id`` style columns. The
format is sniffed from the content, and only the posts the labelled notes need are kept, so a
posts file far larger than the notes costs no memory.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections import Counter
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from freshwiki.changes.notes.records import Post
from freshwiki.changes.notes.tables import NotesFormatError, Source, open_text

ID_COLUMNS = ("tweetId", "postId", "id", "tweet_id", "post_id", "id_str")
TEXT_COLUMNS = ("text", "postText", "tweetText", "full_text", "fullText", "content", "body")
DATE_COLUMNS = ("createdAt", "created_at", "createdAtMillis", "date", "timestamp", "postDate",
                "post_date", "tweetDate", "time")
LANG_COLUMNS = ("lang", "language", "postLang", "post_lang", "tweetLang")
"""Optional: the post's language (the X API's ``lang``), for HelloFresh's English filter."""
MEDIA_COLUMNS = ("has_media", "hasMedia", "media", "media_keys", "mediaKeys", "attachments")
"""Optional: whether the post carries media, for HelloFresh's no-media filter."""

PostsFormat = Literal["csv", "tsv", "jsonl"]


@dataclass
class PostsReport:
    """What reading the posts file found; skips carry their reason.

    Attributes:
        path: The posts file.
        format: The sniffed format.
        columns: The id, text, date, language and media columns used (``None`` when absent).
        rows: Data rows (or JSON lines) read.
        kept: Posts kept because a labelled note points at them.
        skipped: Rows not used, by reason (unparseable date, empty id, bad JSON...).
    """

    path: Path
    format: PostsFormat
    columns: dict[str, str | None] = field(default_factory=dict)
    rows: int = 0
    kept: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def parse_post_date(value: Any) -> dt.datetime | None:
    """A post date from the shapes tools write: ISO 8601, epoch seconds/millis, X API v1.1.

    Naive times are taken as UTC, the zone every X export uses.

    Raises:
        ValueError: The value is none of these shapes.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a date: {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    else:
        text = str(value).strip()
        try:
            number = float(text)
        except ValueError:
            number = float("nan")
        if number != number:  # not numeric: a calendar string
            for parse in (dt.datetime.fromisoformat,
                          lambda s: dt.datetime.strptime(s, "%a %b %d %H:%M:%S %z %Y")):
                try:
                    parsed = parse(text)
                except ValueError:
                    continue
                if parsed.tzinfo is None:
                    parsed = parsed.replace(tzinfo=dt.UTC)
                return parsed.astimezone(dt.UTC)
            raise ValueError(f"not a date: {text!r}")
    # Epoch numbers: milliseconds (what the notes files use) once past ~2001 in seconds.
    seconds = number / 1000 if abs(number) >= 1e11 else number
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def parse_has_media(value: Any) -> bool | None:
    """Whether a media column's value says the post has media; ``None`` when it says nothing.

    Tools write a flag (``1``/``true``/``0``/``false``), a list of media keys, or the X
    API's ``attachments`` object (``{"media_keys": [...]}``): a non-empty list or object is
    media, an empty one none.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, list):
        return bool(value)
    if isinstance(value, dict):
        keys = value.get("media_keys", value)
        return bool(keys)
    text = str(value).strip()
    lowered = text.lower()
    if lowered in ("", "null", "none"):
        return None
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no", "[]", "{}"):
        return False
    if text.startswith(("[", "{")):
        try:
            return parse_has_media(json.loads(text))
        except json.JSONDecodeError:
            pass
    return True  # a media key or URL written as plain text


def _pick(names: Container[str] | list[str], candidates: tuple[str, ...]) -> str | None:
    return next((c for c in candidates if c in names), None)


def _sniff(first_line: str) -> PostsFormat:
    stripped = first_line.lstrip()
    if stripped.startswith("{"):
        return "jsonl"
    return "tsv" if "\t" in first_line else "csv"


def _dict_rows(text: IO[str], fmt: PostsFormat,
               report: PostsReport) -> Iterator[dict[str, Any]]:
    if fmt == "jsonl":
        for line in text:
            if not line.strip():
                continue
            report.rows += 1
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                report.skipped["line is not valid JSON"] += 1
                continue
            if not isinstance(item, dict):
                report.skipped["line is not a JSON object"] += 1
                continue
            yield item
        return
    reader = csv.DictReader(text, delimiter="\t" if fmt == "tsv" else ",")
    for row in reader:
        report.rows += 1
        if None in row:
            report.skipped["row has more fields than the header"] += 1
            continue
        yield row


def read_posts(path: Path, wanted: Container[str] | None = None,
               ) -> tuple[dict[str, Post], PostsReport]:
    """Read posts, keeping those whose id is in ``wanted`` (all when ``None``).

    Raises:
        NotesFormatError: The file is missing, or has no recognisable id or text column.
    """
    if not path.is_file():
        raise NotesFormatError(
            f"posts file {path} does not exist",
            hint="pass a CSV, TSV or JSONL file with a post id, text and date per post.",
        )
    source = Source(path)
    with open_text(source) as (text, _, _):
        first = text.readline()
    fmt = _sniff(first)
    report = PostsReport(path, fmt)
    posts: dict[str, Post] = {}
    columns_known = False
    with open_text(source) as (text, _, _):
        for row in _dict_rows(text, fmt, report):
            if not columns_known:
                names = list(row)
                id_col = _pick(names, ID_COLUMNS)
                text_col = _pick(names, TEXT_COLUMNS)
                date_col = _pick(names, DATE_COLUMNS)
                lang_col = _pick(names, LANG_COLUMNS)
                media_col = _pick(names, MEDIA_COLUMNS)
                missing = [what for what, col in (("post id", id_col), ("text", text_col))
                           if col is None]
                if missing or id_col is None or text_col is None:
                    raise NotesFormatError(
                        f"posts file {path}: no {' or '.join(missing)} column among "
                        f"{', '.join(map(str, names))}",
                        hint=f"name the id column one of {', '.join(ID_COLUMNS)} and the text "
                        f"column one of {', '.join(TEXT_COLUMNS)}; a date column "
                        f"({', '.join(DATE_COLUMNS)}) is optional.",
                    )
                report.columns = {"id": id_col, "text": text_col, "date": date_col,
                                  "lang": lang_col, "media": media_col}
                columns_known = True
            id_col = report.columns["id"] or ""
            text_col = report.columns["text"] or ""
            date_col = report.columns["date"]
            raw_id = row.get(id_col)
            post_id = "" if raw_id is None else str(raw_id).strip()
            if not post_id:
                report.skipped["empty post id"] += 1
                continue
            if wanted is not None and post_id not in wanted:
                continue
            body = row.get(text_col)
            if body is None:
                report.skipped["no text"] += 1  # a JSON line without the text key
                continue
            try:
                when = parse_post_date(row.get(date_col)) if date_col else None
            except (ValueError, OverflowError, OSError):
                report.skipped["unparseable date"] += 1
                continue
            lang = row.get(report.columns["lang"] or "")
            media = row.get(report.columns["media"] or "")
            posts[post_id] = Post(post_id, str(body), when,
                                  lang=str(lang).strip() or None if lang is not None else None,
                                  has_media=parse_has_media(media))
    if not columns_known:
        raise NotesFormatError(
            f"posts file {path} holds no posts",
            hint="pass a file with a header row and one post per row (or one JSON object "
            "per line).",
        )
    report.kept = len(posts)
    return posts, report
