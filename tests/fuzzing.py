"""Fuzz targets shared by the seeded CI slices (``tests/**/test_fuzz_*.py``) and the benchmark.

Each :class:`Target` pairs a Hypothesis strategy with a function that feeds one input to a
parser and the error type that parser documents. :func:`fuzz` runs a target on ``count``
inputs and *collects* every exception instead of stopping at the first, so one run counts
inputs, handled errors and unhandled ones. "Handled" means the documented error type with a
message that names the input (the file or folder path, for file readers): an error the CLI
would print as a clean message. Anything else is unhandled: a crash with a traceback.

Strategies mix three kinds of input, because each finds what the others miss:

* real data cut and spliced (windows of the real enwiki dump slice and Community Notes
  files in ``../shared/data``), which reaches deep code paths the way real files do;
* structured inputs with fuzzed values (a page, an API response, a chat request whose
  fields hold any JSON), which get past the first checks;
* markup and byte soup (tokens, binary, truncated or bit-flipped compression).

``experiments/reliability.py`` runs these at 10^5 inputs per target; the tests run a few
hundred with a fixed seed.
"""

from __future__ import annotations

import asyncio
import bz2
import gzip
import html
import io
import json
import lzma
import random
import re
import shutil
import tempfile
import time
import traceback
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
DUMP = SHARED_DATA / "wikipedia" / "dumps" / "enwiki-pages-articles-sample.xml.bz2"
NOTES = SHARED_DATA / "communitynotes"


# -- running a target ------------------------------------------------------------------------


@dataclass(frozen=True)
class Unhandled:
    """One input that raised something other than the documented, named error."""

    error: str
    message: str
    where: str
    input: str


@dataclass
class Outcome:
    """What :func:`fuzz` saw on one target."""

    target: str
    inputs: int = 0
    handled: Counter[str] = field(default_factory=Counter)
    unhandled: list[Unhandled] = field(default_factory=list)
    slowest_s: float = 0.0
    seconds: float = 0.0

    @property
    def unhandled_kinds(self) -> Counter[str]:
        return Counter(f"{u.error} at {u.where}" for u in self.unhandled)

    def as_dict(self, examples: int = 3) -> dict[str, Any]:
        firsts: dict[str, Unhandled] = {}
        for u in self.unhandled:
            firsts.setdefault(f"{u.error} at {u.where}", u)
        return {
            "inputs": self.inputs, "handled": dict(self.handled),
            "unhandled": len(self.unhandled), "unhandled_kinds": dict(self.unhandled_kinds),
            "examples": [{"error": u.error, "message": u.message[:300], "where": u.where,
                          "input": u.input[:400]} for u in list(firsts.values())[:examples]],
            "slowest_input_s": round(self.slowest_s, 3), "seconds": round(self.seconds, 1),
        }


@dataclass(frozen=True)
class Target:
    """A parser under fuzz: inputs, how one is fed (given a scratch folder), what it may raise.

    ``names``: the path, under the scratch folder, that a handled error's message must
    contain (the file or folder the input was written to); ``None`` when any message will do.
    """

    name: str
    what: str
    strategy: st.SearchStrategy[Any]
    run: Callable[[Any, Path], object]
    handled: tuple[type[BaseException], ...]
    names: str | None = None


def _where(exc: BaseException) -> str:
    """The innermost freshwiki frame of the traceback (where a fix would go)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/freshwiki/" in f.filename] or frames
    last = ours[-1] if ours else None
    if last is None:
        return "?"
    return f"{last.filename.split('/src/')[-1]}:{last.lineno}"


def fuzz(target: Target, count: int, *, seed: int = 0, budget_s: float | None = None,
         workdir: Path | None = None) -> Outcome:
    """Run ``target`` on ``count`` Hypothesis inputs (fewer if ``budget_s`` runs out)."""
    outcome = Outcome(target.name)
    folder = Path(tempfile.mkdtemp(prefix=f"fuzz-{target.name}-", dir=workdir))
    started = time.perf_counter()
    deadline = None if budget_s is None else started + budget_s

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(target.strategy)
    def body(value: Any) -> None:
        if deadline is not None and time.perf_counter() > deadline:
            return
        outcome.inputs += 1
        t0 = time.perf_counter()
        try:
            target.run(value, folder)
        except target.handled as exc:
            text = str(exc)
            if must_name is None or must_name in text:
                outcome.handled[type(exc).__name__] += 1
            else:
                outcome.unhandled.append(Unhandled(
                    f"{type(exc).__name__} (message does not name the input)", text,
                    _where(exc), repr(value)[:2000]))
        except Exception as exc:  # RecursionError included: this is what we are looking for
            outcome.unhandled.append(Unhandled(type(exc).__name__, str(exc)[:1000],
                                               _where(exc), repr(value)[:2000]))
        finally:
            outcome.slowest_s = max(outcome.slowest_s, time.perf_counter() - t0)

    must_name = None if target.names is None else str(folder / target.names)
    try:
        body()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        outcome.seconds = time.perf_counter() - started
    return outcome


# -- real data -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def dump_xml() -> bytes:
    """The real enwiki dump slice, decompressed (6 MB)."""
    return bz2.open(DUMP).read()


@lru_cache(maxsize=1)
def dump_parts() -> tuple[bytes, tuple[bytes, ...]]:
    """(the ``<mediawiki><siteinfo>`` head, each ``<page>`` element under 16 kB)."""
    data = dump_xml()
    head, *pages = data.split(b"  <page>")
    return head, tuple(b"  <page>" + p.split(b"</mediawiki>")[0] for p in pages
                       if len(p) < 16_000)


@lru_cache(maxsize=1)
def wikitexts() -> tuple[str, ...]:
    """The wikitext of every page of the real dump (articles, redirects)."""
    texts = re.findall(rb"<text[^>]*>(.*?)</text>", dump_xml(), flags=re.DOTALL)
    return tuple(html.unescape(t.decode("utf-8")) for t in texts if t.strip())


@lru_cache(maxsize=1)
def notes_lines() -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
    """(notes header, 200 note rows, scoredNotes header, its rows for those notes)."""
    with (NOTES / "notes-00000.tsv").open(encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n")
        rows = tuple(fh.readline().rstrip("\n") for _ in range(200))
    ids = {r.split("\t", 1)[0] for r in rows}
    with (NOTES / "scoredNotes.tsv").open(encoding="utf-8") as fh:
        scored_header = fh.readline().rstrip("\n")
        scored = tuple(line.rstrip("\n") for line in fh if line.split("\t", 1)[0] in ids)
    return header, rows, scored_header, scored


# -- generators -----------------------------------------------------------------------------
# Hypothesis picks the shape of each input and a seed; a seeded ``random.Random`` fills in the
# details. Drawing every character and field through Hypothesis made generation 90 % of the
# time (80 inputs a second); this keeps its choice of shapes and seeds, at hundreds a second.

ODD_TEXT = ("\t", "\n", "\r\n", '"', "'", "\\", "\x00", "\x85", "\u2028", "\ufeff", "\ue000",
            "\ud800", "é", "²", "٣", "𝔘", "&", "<", ">", "{", "}", "[", "]", " ")


def _text(rng: random.Random, size: int = 12) -> str:
    """Mostly ASCII, with odd characters (controls, surrogates, digits of other scripts,
    separators) mixed in."""
    out = []
    for _ in range(rng.randint(0, size)):
        roll = rng.random()
        if roll < 0.6:
            out.append(chr(rng.randint(32, 126)))
        elif roll < 0.85:
            out.append(rng.choice(ODD_TEXT))
        else:
            out.append(chr(rng.randint(0, 0x10FFFF)))
    return "".join(out)


_SCALARS: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 2**31, 2**63, 2**80, -(2**80), 1.5, -0.0, 1e308,
    float("inf"), float("-inf"), float("nan"), "", "0", "1", "-1", "1e999", "NaN", "true",
)


def _scalar(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(_SCALARS)
    return rng.randint(-(2**40), 2**40) if roll < 0.75 else _text(rng)


def _json(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON value (NaN and infinities included, as ``json`` writes them)."""
    roll = rng.random()
    if depth > 3 or roll < 0.6:
        return _scalar(rng)
    if roll < 0.8:
        return [_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {_text(rng, 6): _json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _or_junk(rng: random.Random, value: Any, rate: float = 0.15) -> Any:
    """Usually ``value``, sometimes any JSON value in its place."""
    return _json(rng) if rng.random() < rate else value


def _mutate(rng: random.Random, data: bytes, tokens: tuple[bytes, ...], most: int = 3) -> bytes:
    """``data`` with a few cuts, insertions of ``tokens`` or random bytes, and byte flips."""
    out = bytearray(data)
    for _ in range(rng.randint(0, most)):
        kind = rng.choice(("cut", "insert", "delete", "flip", "dup"))
        at = rng.randint(0, len(out))
        if kind == "cut":
            del out[at:]
        elif kind == "insert":
            out[at:at] = (rng.choice(tokens) if rng.random() < 0.7
                          else rng.randbytes(rng.randint(1, 8)))
        elif kind == "delete":
            del out[at:at + rng.randint(1, 64)]
        elif kind == "flip" and out:
            out[min(at, len(out) - 1)] ^= 1 << rng.randint(0, 7)
        elif kind == "dup":
            out[at:at] = out[max(0, at - 40):at]
    return bytes(out)


SEEDS = st.integers(0, 2**63 - 1)


def _seeded(shapes: tuple[str, ...], build: Callable[[str, random.Random], Any]
            ) -> st.SearchStrategy[Any]:
    """Inputs built by ``build(shape, rng)``, the shape and the seed chosen by Hypothesis."""
    return st.tuples(st.sampled_from(shapes), SEEDS).map(
        lambda pair: build(pair[0], random.Random(pair[1])))


# -- wikitext cleaner ------------------------------------------------------------------------

WIKITEXT_TOKENS = (
    "{{", "}}", "[[", "]]", "{|", "|}", "|-", "||", "|", "!", "{{{", "}}}", "<ref>", "</ref>",
    "<ref name=a/>", '<ref name="b">', "<!--", "-->", "==", "===", "\n", "\n\n", "'''", "''",
    "<nowiki>", "</nowiki>", "<math>", "</math>", "<pre>", "</pre>", "<span>", "</span>",
    '<div style="x">', "</div>", "<br/>", "<br>", "&nbsp;", "&lt;", "&amp;", "&#x10FFFF;",
    "\ue000", "\uf8ff", "\u200b", "\r\n", "\t", "#REDIRECT [[X]]", "* ", "# ", "; ", ": ",
    "__TOC__", "[http://example.org x]", "[[File:X.jpg|thumb|a [[b]] c]]", "[[Category:X]]",
    "{{Inconsistent|date=May 2020}}", "{{Citation needed|date=2021}}", "{{Update}}",
    "{{Multiple issues|{{Update}}|refimprove=May 2020}}", "{{cite web|url=x|title=y}}",
    "{{Infobox person|name=A|birth_date={{birth date|1900|1|1}}}}", "{{lang|fr|mot}}",
    "{{convert|12|km|mi}}", "{{nowrap|a b}}", "{{PAGENAME}}", "<gallery>", "</gallery>",
    '<syntaxhighlight lang="py">', "</syntaxhighlight>", "<references/>",
    "== References ==", "== See also ==", "{{reflist}}", "<includeonly>", "<noinclude>",
    "{{#if:x|y|z}}", "[[:en:X]]", "[[fr:X]]", "{{!}}", "<onlyinclude>", "<ce>", "<chem>",
)
_PAIRS = (("{{", "}}"), ("[[", "]]"), ("{|\n", "\n|}"), ("<span>", "</span>"),
          ("<ref>", "</ref>"), ("''", "''"), ("{{{", "}}}"), ("<!--", "-->"))


def _wikitext(shape: str, rng: random.Random) -> tuple[str, bool, bool, bool]:
    if shape == "real":  # a window of a real page, with markup spliced in
        real = rng.choice(wikitexts())
        start = rng.randint(0, max(0, len(real) - 1))
        pieces = list(real[start:start + rng.randint(0, 4000)])
        for _ in range(rng.randint(0, 6)):
            at = rng.randint(0, len(pieces))
            pieces[at:at] = [rng.choice(WIKITEXT_TOKENS)]
        text = "".join(pieces)
    elif shape == "soup":
        text = "".join(rng.choice(WIKITEXT_TOKENS) if rng.random() < 0.6 else _text(rng, 6)
                       for _ in range(rng.randint(0, 80)))
    elif shape == "deep":  # one construct nested deep, closed or not
        opener, closer = rng.choice(_PAIRS)
        depth = rng.randint(1, 600)
        text = opener * depth + _text(rng) + closer * rng.randint(0, depth)
    else:
        text = _text(rng, 300)
    return text, rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.8


def wikitext_inputs() -> st.SearchStrategy[tuple[str, bool, bool, bool]]:
    """(wikitext, keep_tables, keep_infobox, keep_lists)."""
    return _seeded(("real", "real", "soup", "deep", "text"), _wikitext)


def _run_wikitext(value: tuple[str, bool, bool, bool], _: Path) -> None:
    from freshwiki.corpus.wikitext import clean_wikitext, extract_tags

    text, tables, infobox, lists = value
    clean_wikitext(text, title="Fuzz", keep_tables=tables, keep_infobox=infobox,
                   keep_lists=lists)
    extract_tags(text)


def wikitext_target() -> Target:
    from freshwiki.corpus.wikitext import WikitextError

    return Target("wikitext", "clean_wikitext + extract_tags (corpus.wikitext)",
                  wikitext_inputs(), _run_wikitext, (WikitextError,))


# -- dump reader -----------------------------------------------------------------------------

XML_TOKENS = (
    b"<page>", b"</page>", b"<revision>", b"</revision>", b"<mediawiki>", b"</mediawiki>",
    b"<siteinfo>", b"</siteinfo>", b"<text>", b"</text>", b'<text deleted="deleted"/>',
    b"<title>", b"</title>", b"<ns>", b"</ns>", b"<id>", b"</id>", b"<timestamp>",
    b"</timestamp>", b"<redirect/>", b'<redirect title="X"/>', b"&", b"&amp;", b"&#0;",
    b"<", b">", b"<![CDATA[", b"]]>", b'<?xml version="1.0"?>', b"\xff\xfe", b"\xc3",
    b"\x00", b'<contributor deleted="deleted"/>', b"<page ", b"</page >", b"<!DOCTYPE x [",
    b'<!ENTITY a "b">', b"]>", b"<ns>1</ns>", b"<id>-1</id>", b"<id>99999999999999999999</id>",
)


def _page_xml(rng: random.Random) -> bytes:
    """A ``<page>`` element written from fuzzed fields (elements sometimes left out)."""

    def element(tag: str, value: str) -> str:
        return "" if rng.random() < 0.1 else f"<{tag}>{html.escape(value, quote=False)}</{tag}>"

    def number() -> str:
        if rng.random() < 0.8:
            return str(rng.choice((rng.randint(0, 10**6), -1, 2**70)))
        return _text(rng, 6)

    def stamp() -> str:
        if rng.random() < 0.8:
            return (f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-"
                    f"{rng.randint(1, 28):02d}T12:00:00Z")
        return _text(rng, 25)

    revisions = []
    for _ in range(rng.randint(0, 3)):
        attrs = rng.choice(("", ' bytes="12"', ' bytes="-1"', ' xml:space="preserve"',
                            ' deleted="deleted"'))
        revisions.append(
            "<revision>" + element("id", number()) + element("parentid", number())
            + element("timestamp", stamp())
            + rng.choice(("", "<contributor><username>A</username><id>1</id></contributor>",
                          "<contributor><ip>1.2.3.4</ip></contributor>",
                          '<contributor deleted="deleted"/>'))
            + rng.choice(("", "<minor/>")) + element("comment", _text(rng, 20))
            + f"<text{attrs}>{html.escape(_text(rng, 80), quote=False)}</text>"
            + element("sha1", _text(rng, 8)) + "</revision>")
    page = ("<page>" + element("title", _text(rng, 20)) + element("ns", number())
            + element("id", number())
            + rng.choice(("", '<redirect title="Elsewhere" />', "<redirect/>"))
            + "".join(revisions) + "</page>")
    return page.encode("utf-8", "surrogatepass")


def _dump(shape: str, rng: random.Random) -> tuple[bytes, str, bool, bool]:
    head, pages = dump_parts()
    compression, source = shape.split("/")
    if source == "real":
        body = b"".join(rng.choice(pages) for _ in range(rng.randint(0, 3)))
    else:
        body = b"".join(_page_xml(rng) for _ in range(rng.randint(0, 3)))
    start = rng.choice((head, b"<mediawiki>", b"", b'<mediawiki xmlns="x">'))
    xml = _mutate(rng, start + body + rng.choice((b"</mediawiki>\n", b"")), XML_TOKENS)
    data: bytes
    if compression == "bz2":
        data = bz2.compress(xml, rng.randint(1, 9))
    elif compression == "bz2-multi":  # a multistream dump: one bz2 stream per part
        cut = rng.randint(0, len(xml))
        data = bz2.compress(xml[:cut], 1) + bz2.compress(xml[cut:], 1)
    elif compression == "gzip":
        data = gzip.compress(xml, mtime=0)
    elif compression == "xz":
        data = lzma.compress(xml)
    elif compression == "bytes":
        data = rng.randbytes(rng.randint(0, 300))
    else:
        data = xml
    if compression not in ("none", "bytes") and rng.random() < 0.5:  # damaged in transit
        data = _mutate(rng, data, (b"BZh9", b"\x1f\x8b", b"\x00" * 8))
    reader = rng.choice(("revisions", "pages", "latest"))
    return data, reader, rng.random() < 0.5, rng.random() < 0.5


def dump_inputs() -> st.SearchStrategy[tuple[bytes, str, bool, bool]]:
    """(file bytes, reader, skip_bad_pages, all namespaces)."""
    shapes = (*(f"{c}/{s}" for c in ("none", "bz2", "bz2-multi", "gzip", "xz")
                for s in ("real", "fields")), "bytes/none")
    return _seeded(shapes, _dump)


def _run_dump(value: tuple[bytes, str, bool, bool], folder: Path) -> None:
    from freshwiki.corpus.readers import ReadReport, iter_latest, iter_pages, iter_revisions

    data, reader, skip, every = value
    path = folder / "input.xml"
    path.write_bytes(data)
    report = ReadReport()
    namespaces = None if every else {0}
    read = {"revisions": iter_revisions, "pages": iter_pages, "latest": iter_latest}[reader]
    for _ in read(path, namespaces=namespaces, skip_bad_pages=skip, report=report):
        pass
    report.summary()


def dump_target() -> Target:
    from freshwiki.corpus.readers import DumpReadError

    return Target("dump_reader", "iter_revisions / iter_pages / iter_latest on XML, bz2 "
                  "(multistream), gzip, xz, damaged (corpus.readers)",
                  dump_inputs(), _run_dump, (DumpReadError,), "input.xml")


# -- Community Notes TSV loader --------------------------------------------------------------

TSV_TOKENS = ("\t", "\n", "\r\n", '"', '""', "\x00", "-", "--1", "1e3", "²", "٣", "9" * 30,
              "-" + "9" * 30, " ", "NaN", "CURRENTLY_RATED_HELPFUL", "Currently Rated Helpful",
              "CURRENTLY_RATED_NOT_HELPFUL", "NEEDS_MORE_RATINGS", "HELPFUL", "NOT_HELPFUL",
              "SOMEWHAT_HELPFUL", "\ufeff", "\x85", "\u2028")


def _field(rng: random.Random, original: str) -> str:
    roll = rng.random()
    if roll < 0.6:
        return original
    if roll < 0.75:
        return rng.choice(TSV_TOKENS)
    if roll < 0.9:
        return original + rng.choice(TSV_TOKENS)
    return _text(rng)


def _table(rng: random.Random, header: str, rows: tuple[str, ...]) -> str:
    columns = header.split("\t")
    if rng.random() < 0.2:  # a damaged header: a column dropped, renamed or added
        i = rng.randrange(len(columns))
        columns[i:i + 1] = rng.choice(([], [columns[i] + "x"], [columns[i]] * 2,
                                       [columns[i], "newColumn"]))
    lines = ["\t".join(columns)]
    for _ in range(rng.randint(0, 6)):
        fields = [_field(rng, f) for f in rng.choice(rows).split("\t")]
        if rng.random() < 0.15:
            del fields[rng.randrange(len(fields)):]
        lines.append("\t".join(fields))
    return rng.choice(("\n", "\r\n")).join(lines) + rng.choice(("\n", "", "\n\n"))


def _pack(rng: random.Random, name: str, text: str) -> tuple[str, bytes]:
    data = text.encode("utf-8", "surrogatepass")
    how = rng.choice(("plain", "plain", "plain", "gzip", "zip", "latin-1", "cut"))
    if how == "gzip":
        return name + ".gz", gzip.compress(data, mtime=0)
    if how == "zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(name, data)
        return name + ".zip", _mutate(rng, buffer.getvalue(), (b"PK\x03\x04",), most=1)
    if how == "latin-1":
        return name, text.encode("latin-1", "replace") + b"\xe9\xff"
    if how == "cut":
        return name + ".gz", gzip.compress(data, mtime=0)[:rng.randint(0, 60)]
    return name, data


def _notes(shape: str, rng: random.Random) -> dict[str, bytes]:
    header, rows, scored_header, scored = notes_lines()
    files: dict[str, bytes] = dict([_pack(rng, "notes.tsv", _table(rng, header, rows))])
    if shape != "no-status":
        name, data = _pack(rng, "scored.tsv", _table(rng, scored_header, scored))
        files[name] = data
    if shape == "ratings":
        ids = [r.split("\t", 1)[0] for r in rows]
        ratings = "noteId\thelpfulnessLevel\thelpful\tnotHelpful\n" + "".join(
            f"{rng.choice(ids)}\t{rng.choice(('HELPFUL', 'NOT_HELPFUL', '', 'X'))}\t"
            f"{rng.choice(('1', '0', '', '2'))}\t{rng.choice(('1', '0', ''))}\n"
            for _ in range(rng.randint(0, 4)))
        name, data = _pack(rng, "ratings.tsv", ratings)
        files[name] = data
    if shape == "junk":
        files["junk.bin"] = rng.randbytes(rng.randint(0, 64))
    return files


def notes_inputs() -> st.SearchStrategy[dict[str, bytes]]:
    """A folder's files: a notes table, a scoredNotes table, maybe ratings, maybe junk."""
    return _seeded(("plain", "plain", "ratings", "junk", "no-status"), _notes)


def _run_notes(files: dict[str, bytes], folder: Path) -> None:
    from freshwiki.changes.notes import load_notes

    target = folder / "download"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for name, data in files.items():
        (target / name).write_bytes(data)
    load_notes(target)


def notes_target() -> Target:
    from freshwiki.changes.notes import NotesFormatError

    return Target("notes_tsv", "load_notes on a folder of notes/scoredNotes/ratings tables, "
                  "plain, gzip, zip, damaged (changes.notes)",
                  notes_inputs(), _run_notes, (NotesFormatError,), "download")


# -- MediaWiki API JSON edit reader ----------------------------------------------------------


def _api_revision(rng: random.Random, v2: bool) -> dict[str, Any]:
    def flag() -> Any:
        return _or_junk(rng, rng.random() < 0.5 if v2 else "")

    def stamp() -> str:
        return (f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-"
                f"{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z")

    fields: dict[str, Callable[[], Any]] = {
        "revid": lambda: rng.randint(0, 2**40), "parentid": lambda: rng.randint(0, 2**40),
        "timestamp": stamp, "user": lambda: _text(rng, 10),
        "userid": lambda: rng.randint(0, 10**9), "comment": lambda: _text(rng, 20),
        "sha1": lambda: _text(rng, 8), "size": lambda: rng.randint(0, 10**6),
        "minor": flag, "anon": flag, "userhidden": flag, "commenthidden": flag,
        "texthidden": flag, "sha1hidden": flag,
    }
    rev = {key: _or_junk(rng, make()) for key, make in fields.items()
           if rng.random() < (0.9 if key in ("revid", "timestamp") else 0.3)}
    roll = rng.random()
    if roll < 0.5:
        slot = {"content" if v2 else "*": _or_junk(rng, _text(rng, 40))}
        if rng.random() < 0.1:
            slot["texthidden"] = flag()
        rev["slots"] = _or_junk(rng, {"main": _or_junk(rng, slot)})
    elif roll < 0.8:
        rev["*"] = _or_junk(rng, _text(rng, 40))
    return rev


def _api_response(rng: random.Random) -> Any:
    v2 = rng.random() < 0.5
    pages = []
    for i in range(rng.randint(0, 3)):
        page: dict[str, Any] = {}
        makers: tuple[tuple[str, Callable[[], Any]], ...] = (
            ("pageid", lambda: rng.randint(0, 2**40)), ("title", lambda: _text(rng, 10)),
            ("ns", lambda: rng.randint(-2, 15)))
        for key, make in makers:
            if rng.random() < 0.9:
                page[key] = _or_junk(rng, make())
        if rng.random() < 0.1:
            page[rng.choice(("missing", "invalid"))] = True if v2 else ""
        page["revisions"] = _or_junk(rng, [_api_revision(rng, v2)
                                           for _ in range(rng.randint(0, 3))])
        pages.append((str(page.get("pageid", i)), page))
    holder: Any = [p for _, p in pages] if v2 else dict(pages)
    roll = rng.random()
    if roll < 0.05:
        return {"error": _or_junk(rng, {"info": _text(rng)}, 0.5)}
    if roll < 0.1:
        return _json(rng)
    return {"batchcomplete": True, "query": _or_junk(rng, {"pages": _or_junk(rng, holder)})}


def _raw(shape: str, rng: random.Random, most: int) -> bytes | None:
    """Random bytes (``bytes``) or JSON nested up to 10^5 deep (``deep``); else ``None``."""
    if shape == "bytes":
        return rng.randbytes(rng.randint(0, most))
    if shape == "deep":
        depth = rng.randint(1, 100_000)
        return (rng.choice("[{") * depth).encode() + b"]" * rng.randint(0, depth)
    return None


def _api(shape: str, rng: random.Random) -> bytes:
    raw = _raw(shape, rng, 200)
    if raw is not None:
        return raw
    responses = [_api_response(rng) for _ in range(rng.randint(1, 3))]
    if shape == "one":
        text = json.dumps(responses[0])
    elif shape == "array":
        text = json.dumps(responses)
    else:
        text = "\n".join(json.dumps(r) for r in responses)
    data = rng.choice((b"", b"", b"\xef\xbb\xbf")) + text.encode()
    return _mutate(rng, data, (b"{", b"}", b"[", b"]", b'"', b"\xff", b"NaN", b"1e999"), most=2)


def api_inputs() -> st.SearchStrategy[bytes]:
    """A saved export: one response, an array of them, JSONL, or damaged bytes."""
    return _seeded(("one", "one", "array", "jsonl", "bytes", "deep"), _api)


def _run_api(data: bytes, folder: Path) -> None:
    from freshwiki.changes.edits import iter_api_revisions, looks_like_api_export

    path = folder / "export.json"
    path.write_bytes(data)
    looks_like_api_export(path)
    for _ in iter_api_revisions(path):
        pass


def api_target() -> Target:
    from freshwiki.changes.edits import ApiExportError

    return Target("api_json", "iter_api_revisions on saved API exports, formatversion 1 and "
                  "2, arrays, JSONL, damaged (changes.edits)",
                  api_inputs(), _run_api, (ApiExportError,), "export.json")


# -- chat API request bodies -----------------------------------------------------------------


def _message(rng: random.Random) -> Any:
    role = _or_junk(rng, rng.choice(("user", "user", "assistant", "system", "developer",
                                     "tool")))
    roll = rng.random()
    content: Any
    if roll < 0.5:
        content = _text(rng, 40)
    elif roll < 0.6:
        content = "x " * rng.randint(0, 40_000)
    elif roll < 0.8:
        content = [{"type": _or_junk(rng, rng.choice(("text", "text", "image_url"))),
                    "text": _or_junk(rng, _text(rng, 20))} for _ in range(rng.randint(0, 3))]
    else:
        content = _json(rng)
    message: dict[str, Any] = {"role": role, "content": content}
    if rng.random() < 0.15:
        del message[rng.choice(("role", "content"))]
    return message if rng.random() < 0.95 else _json(rng)


def _chat(shape: str, rng: random.Random) -> bytes:
    raw = _raw(shape, rng, 100)
    if raw is not None:
        return raw
    if shape == "json":
        return json.dumps(_json(rng)).encode()
    fields: dict[str, Callable[[], Any]] = {
        "model": lambda: "m" * rng.randint(0, 300),
        "messages": lambda: ([_message(rng) for _ in range(rng.randint(0, 5))]
                             if rng.random() < 0.9 else
                             [{"role": "user", "content": "hi"}] * rng.randint(190, 210)),
        "stream": lambda: rng.random() < 0.5,
        "conversation_id": lambda: rng.choice(("known", "0" * 32, "", _text(rng, 70))),
        "today": lambda: rng.choice((f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-"
                                     f"{rng.randint(1, 28):02d}", _text(rng, 12))),
        "temperature": lambda: _json(rng),
    }
    body = {key: _or_junk(rng, make()) for key, make in fields.items()
            if rng.random() < (0.95 if key == "messages" else 0.3)}
    data = json.dumps(body).encode()
    if shape == "damaged":
        data = _mutate(rng, data, (b"{", b"}", b'"', b"\xff", b"NaN", b"\\ud800"), most=2)
    return data


def chat_inputs() -> st.SearchStrategy[bytes]:
    """A request body: OpenAI's shape with fuzzed fields, or not JSON at all."""
    return _seeded(("request", "request", "request", "damaged", "json", "bytes", "deep"), _chat)


class ChatBodies:
    """The server's own parsing of a chat request, without the HTTP server around it.

    The body goes through ``_parse`` (JSON, then the pydantic model) and
    ``ChatService.prepare`` (roles, content parts, lengths, the stored conversation) exactly as
    the route calls them; the conversation store is a real one holding one conversation, which
    ``"conversation_id": "known"`` continues.
    """

    def __init__(self, home: Path) -> None:
        from freshwiki.chat import Reply, TurnTrace
        from freshwiki.chat.conversations import ConversationStore
        from freshwiki.config import load_settings
        from freshwiki.serve import ChatService

        settings = load_settings({"home": home}).settings
        self.store = ConversationStore.open(settings)
        reply = Reply("It is so [1].", (), TurnTrace("fast", "2026-01-01"), grounded=False)
        self.known, _ = self.store.save_turn(reply, user="What is it?", model="fuzz")
        self.service = ChatService(None, self.store, "fuzz")
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.loop.close()
        self.store.close()

    def __call__(self, raw: bytes, _: Path) -> None:
        from starlette.requests import Request

        from freshwiki.serve._chat import _parse

        raw = raw.replace(b'"known"', json.dumps(self.known).encode())

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": raw, "more_body": False}

        request = Request({"type": "http", "method": "POST", "path": "/v1/chat/completions",
                           "headers": [(b"content-type", b"application/json")],
                           "query_string": b""}, receive)
        body = self.loop.run_until_complete(_parse(request))
        self.service.prepare(body)


def chat_target(home: Path) -> tuple[Target, ChatBodies]:
    from freshwiki.serve import ChatAPIError

    bodies = ChatBodies(home)
    return Target("chat_body", "POST /v1/chat/completions bodies through the route's parsing "
                  "and ChatService.prepare (serve)", chat_inputs(), bodies,
                  (ChatAPIError,)), bodies
