#!/usr/bin/env python
"""Benchmark corpus ingest (dump → clean text → passages → store) against wikiextractor.

Run from the repository root::

    .venv/bin/python experiments/ingest.py [--quick] [--repeats N] [--output PATH]

Input: the real sample dump ``../shared/data/wikipedia/dumps/enwiki-pages-articles-sample.xml.bz2``
(206 pages: 106 articles, 99 article redirects, 1 redirect in another namespace). Both
sides process the same 106 articles and skip the redirects.

What is measured, interleaved round by round (the row order is reversed every other round, so
a drift in machine load does not always land on the same rows), after one unmeasured warm-up
round:

wikiextractor 3.1.0 (the anchor, same run, same input)
    * ``we reader``: its reader alone (``decode_open`` + ``collect_pages``).
    * ``we serial``: **the anchor for the 1-process rows.** Every step its CLI takes, in this
      process and on one core: siteinfo scan, its template pre-pass over the dump
      (``load_templates``; the CLI does it by default), then ``collect_pages`` and
      ``Extractor.extract`` (``--json`` output, sections kept, links dropped) into a file.
      No interpreter start-up, no worker or reducer processes.
    * ``we process_dump pN``: its own map/reduce driver ``process_dump`` called in this
      process with N extract processes (exactly the CLI path minus interpreter start-up and
      argument parsing). It always runs a mapper, N workers and a reducer, so even N=1 uses
      more than one core. ``p2`` is **the anchor for the 2-process rows**.
    * ``we CLI pN``: ``python -m wikiextractor.WikiExtractor --processes N --json -q -o TMP``
      end to end in a subprocess (includes interpreter start-up).

freshwiki
    * ``ours reader``: ``read_source`` over the file (bz2 → revisions), nothing else.
    * ``ours clean+segment``: reader + ``process_revision`` (wikitext cleaning with
      sections and maintenance tags, sentence segmentation, passages) for every
      non-redirect revision, in this process.
    * ``ours ingest wN``: the full ``ingest`` into a fresh ``CorpusStore`` in a temp dir with
      ``workers=N`` (1: in-process; 2: a process pool).
    * ``ours CLI wN``: ``freshwiki --home TMP corpus ingest FILE --workers N`` end to end.

Reported per row: wall time (best of N, the headline, and median), MB/s of decompressed XML
and of the compressed file, articles/s (106 articles over the wall time) and articles per
CPU-second (user+sys of this process and its children, i.e. throughput per core), and the
throughput ratio ours/wikiextractor for the comparable rows. The goal is ours >= 2x while
keeping sections and tags; the verdict is printed plainly.

Also measured:

* **Where the time goes** (1 process): reader, ``clean_wikitext``, ``make_passages`` and
  ``CorpusStore.add`` timed unprofiled through the public API, and cProfile's split of
  cleaning into sanitizer / mwparserfromhell's tokenizer (C) / its node builder (only for
  the constructs that need nodes) / rendering / assembly and of segmentation into blingfire /
  packing. Our ``split_sentences`` is timed beside blingfire's offsets API (whose Python
  wrapper maps UTF-8 to character offsets with a per-byte loop) and its ``text_to_sentences``
  (the C split behind a wrapper that allocates a fresh buffer per call; ours calls the same C
  function with a reused buffer).
* **Regex fallbacks**: how many articles (and chunks of them) the wikitext parser failed
  on, so the cleaner stripped them with regexes instead (``IngestReport.fallback_*``), in
  ``outputs.freshwiki``. ``experiments/ingest_quality.py`` measures this alone, per page.
* **Peak memory against dump size**: synthetic plain-XML dumps of the sample's 106 article
  pages repeated 1x, 4x and 16x (each copy with its own page id, revision id and title),
  built in a temp dir and ingested (``workers=1``) in a fresh subprocess each; its peak RSS
  after imports and after the ingest (``VmHWM``: Linux carries ``ru_maxrss`` across
  ``exec``, so a child's ``ru_maxrss`` would start at this process's size). Flat means
  roughly constant.

The machine has 2 cores shared with other work. The load average is printed at the start and
end, and before and after each round the number of other runnable tasks (``/proc/loadavg``,
which unlike the load average is not inflated by our own previous round); a note says when
the machine was busy. ``--wait-quiet SECONDS`` waits (within that budget overall) for a quiet
machine before the start and before each round. Nothing is asserted. Results go to
``experiments/results/ingest.json``; nothing from the dump is written into the repository.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import logging
import os
import platform
import pstats
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from _provenance import data_provenance, write_result

ROOT = Path(__file__).resolve().parent
RESULTS_PATH = ROOT / "results" / "ingest.json"
# ../shared/data beside the checkout (DEVELOPERS.md): read there, never copied.
DUMP_PATH = (
    ROOT.parent.parent / "shared" / "data" / "wikipedia" / "dumps"
    / "enwiki-pages-articles-sample.xml.bz2"
)
GOAL = 2.0
DEFAULT_REPEATS = 5
QUICK_REPEATS = 2
MEMORY_SIZES = (1, 4, 16)
ID_STRIDE = 1_000_000_000  # page and revision ids of copy k are shifted by k * ID_STRIDE
HIGH_LOAD_PER_CORE = 0.5
BUSY_OTHERS = 0.5  # other runnable tasks (mean) from which the machine counts as busy
MEMORY_FLAT_TOLERANCE = 1.25  # peak at the largest size within 25% of the smallest


# -- helpers ----------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"  .. {msg}", flush=True)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return [0.0, 0.0, 0.0]


def cpu_seconds() -> float:
    """User + system CPU of this process and of every child it has waited for."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB.

    ``VmHWM`` from ``/proc/self/status`` where there is one: Linux carries ``ru_maxrss``
    across ``exec``, so in a subprocess started from this (large) benchmark process
    ``ru_maxrss`` starts at the parent's size, while ``VmHWM`` starts afresh.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover
        pass
    return ru_maxrss_mb()


def ru_maxrss_mb() -> float:
    """``getrusage(RUSAGE_SELF).ru_maxrss`` in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_checked(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


def others_running(samples: int = 10, interval_s: float = 0.1) -> float:
    """Mean number of runnable tasks other than this one, sampled over about a second.

    Read from ``/proc/loadavg`` (field 4, ``running/total``) between measurements, when this
    process is the only one of ours running. Unlike the load average it is not inflated by
    our own previous measurement, so it tells whether someone else is using the cores now.
    NaN where there is no ``/proc/loadavg``.
    """
    counts = []
    try:
        for _ in range(samples):
            field4 = Path("/proc/loadavg").read_text().split()[3]
            counts.append(int(field4.split("/")[0]) - 1)
            time.sleep(interval_s)
    except (OSError, ValueError, IndexError):
        return float("nan")
    return sum(counts) / len(counts)


class QuietWaiter:
    """Waits, within one overall time budget, until no one else is using the cores."""

    def __init__(self, budget_s: float) -> None:
        self.deadline = time.monotonic() + budget_s
        self.waited_s = 0.0

    def wait(self) -> float:
        """Return the other runnable tasks measured last (after waiting, if there was need)."""
        others = others_running()
        while others >= BUSY_OTHERS and time.monotonic() < self.deadline:
            log(f"{others:.1f} other runnable task(s) on average: waiting for a quiet machine "
                f"(load {loadavg()[0]:.2f})")
            started = time.monotonic()
            time.sleep(10)
            self.waited_s += time.monotonic() - started
            others = others_running()
        return others


def version_of(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


@contextlib.contextmanager
def fresh_dir(parent: Path, name: str) -> Iterator[Path]:
    path = parent / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- the rows ---------------------------------------------------------------------------------


@dataclass
class Row:
    """One measured configuration: a callable that processes the whole dump once."""

    key: str
    label: str
    side: str  # "wikiextractor" or "freshwiki"
    procs: str  # how many processes it runs, for the table
    run: Callable[[Path], int]  # given a scratch dir, returns the number of articles done
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    articles: list[int] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)

    def measure(self, scratch: Path, *, record: bool) -> float:
        with fresh_dir(scratch, self.key.replace(" ", "_")) as work:
            load = loadavg()[0]
            cpu0 = cpu_seconds()
            t0 = time.perf_counter()
            done = self.run(work)
            wall = time.perf_counter() - t0
            cpu = cpu_seconds() - cpu0
        if record:
            self.walls.append(wall)
            self.cpus.append(cpu)
            self.articles.append(done)
            self.loads.append(load)
        return wall

    def best(self) -> float:
        return min(self.walls) if self.walls else float("nan")

    def median(self) -> float:
        return median(self.walls)

    def cpu_at_best(self) -> float:
        return self.cpus[self.walls.index(self.best())] if self.walls else float("nan")


# wikiextractor ---------------------------------------------------------------------------


def we_extractor_kwargs() -> dict[str, Any]:
    """What wikiextractor's ``main()`` builds for ``--json`` without ``--links``/``--html``."""
    from wikiextractor.extract import _DEFAULT_IGNORED_TAG_PATTERNS, ignoreTag  # type: ignore[import-untyped]

    return {
        "keepLinks": False,
        "HtmlFormatting": False,
        "to_json": True,
        "to_text": False,
        "discard_empty": False,
        "ignored_tag_patterns": [*_DEFAULT_IGNORED_TAG_PATTERNS, ignoreTag("a")],
    }


def we_siteinfo(stream: Any) -> tuple[str, set[str], str]:
    """The siteinfo scan at the top of ``process_dump``: url base, namespaces, template prefix.

    Like ``process_dump`` it sets the module's ``templateNamespace``, which ``collect_pages``
    reads (with it left empty every page looks like a template and none is extracted).
    """
    from wikiextractor import WikiExtractor as we  # type: ignore[import-untyped]

    urlbase, known, prefix = "", {"Template"}, ""
    for line in stream:
        m = we.tagRE.search(line)
        if not m:
            continue
        tag = m.group(2)
        if tag == "base":
            base = m.group(3)
            urlbase = base[: base.rfind("/")]
        elif tag == "namespace":
            known.add(m.group(3))
            if 'key="10"' in line:
                we.templateNamespace = m.group(3)
                prefix = m.group(3) + ":"
        elif tag == "/siteinfo":
            break
    return urlbase, known, prefix


def we_reader(dump: Path) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        from wikiextractor import WikiExtractor as we

        with we.decode_open(str(dump)) as stream:
            we_siteinfo(stream)
            return sum(1 for _ in we.collect_pages(stream))

    return run


def we_serial(dump: Path) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        from wikiextractor import WikiExtractor as we
        from wikiextractor.extract import Extractor

        kwargs = we_extractor_kwargs()
        with we.decode_open(str(dump)) as stream:
            urlbase, known, prefix = we_siteinfo(stream)
            templates: dict[str, Any] = {}
            redirects: dict[str, Any] = {}
            # The CLI's default template pre-pass, over the rest of the same stream.
            we.load_templates(stream, templates=templates, redirects=redirects,
                              template_prefix=prefix)
        n = 0
        out_path = work / "wiki_00"
        with we.decode_open(str(dump)) as stream, out_path.open("w", encoding="utf-8") as out:
            for page_id, revid, title, page in we.collect_pages(stream):
                buf = io.StringIO()
                Extractor(page_id, revid, urlbase, title, page, templates=templates,
                          redirects=redirects, templatePrefix=prefix, knownNamespaces=known,
                          **kwargs).extract(buf)
                out.write(buf.getvalue())
                n += 1
        return n

    return run


def count_json_lines(folder: Path) -> int:
    total = 0
    for path in folder.rglob("wiki_*"):
        with path.open(encoding="utf-8") as fh:
            total += sum(1 for line in fh if line.strip())
    return total


def we_process_dump(dump: Path, processes: int) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        from wikiextractor import WikiExtractor as we

        we.configure_wikiextractor_logging(logging.ERROR)
        out = work / "out"
        out.mkdir()
        we.process_dump(str(dump), None, str(out), 1024**2, False, processes, True,
                        expand_templates=True, extractor_kwargs=we_extractor_kwargs(),
                        log_level=logging.ERROR)
        return count_json_lines(out)

    return run


def we_cli(dump: Path, processes: int) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        out = work / "out"
        cmd = [sys.executable, "-m", "wikiextractor.WikiExtractor", "--processes",
               str(processes), "--json", "-q", "-o", str(out), str(dump)]
        run_checked(cmd, cwd=work)
        return count_json_lines(out)

    return run


# freshwiki -------------------------------------------------------------------------------


def ours_reader(dump: Path) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        from freshwiki.corpus import read_source
        from freshwiki.corpus.ingest import is_redirect

        return sum(1 for r in read_source(dump) if not is_redirect(r))

    return run


def ours_process(dump: Path) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        from freshwiki.corpus import IngestOptions, process_revision, read_source
        from freshwiki.corpus.ingest import is_redirect

        options = IngestOptions()
        n = 0
        for revision in read_source(dump):
            if not is_redirect(revision):
                process_revision(revision, options)
                n += 1
        return n

    return run


def ours_ingest(dump: Path, workers: int) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        from freshwiki.corpus import CorpusStore, ingest

        with CorpusStore(work / "corpus.sqlite") as store:
            report = ingest(dump, store, workers=workers)
        return report.revisions_added

    return run


def freshwiki_exe() -> Path | None:
    exe = Path(sys.executable).parent / "freshwiki"
    return exe if exe.exists() else None


def ours_cli(dump: Path, workers: int) -> Callable[[Path], int]:
    def run(work: Path) -> int:
        exe = freshwiki_exe()
        assert exe is not None
        cmd = [str(exe), "--home", str(work / "home"), "corpus", "ingest", str(dump),
               "--workers", str(workers)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("FRESHWIKI_")}
        done = run_checked(cmd, cwd=work, env=env)
        m = re.search(r"(\d+) revisions added", done.stdout)
        return int(m.group(1)) if m else -1

    return run


def make_rows(dump: Path) -> list[Row]:
    rows = [
        Row("we_reader", "wikiextractor reader (collect_pages)", "wikiextractor", "1",
            we_reader(dump)),
        Row("we_serial", "wikiextractor serial in-process [ANCHOR 1p]", "wikiextractor", "1",
            we_serial(dump)),
        Row("we_dump_p1", "wikiextractor process_dump --processes 1", "wikiextractor",
            "1+2", we_process_dump(dump, 1)),
        Row("we_dump_p2", "wikiextractor process_dump --processes 2 [ANCHOR 2p]",
            "wikiextractor", "2+2", we_process_dump(dump, 2)),
        Row("we_cli_p1", "wikiextractor CLI --processes 1", "wikiextractor", "1+2",
            we_cli(dump, 1)),
        Row("we_cli_p2", "wikiextractor CLI --processes 2", "wikiextractor", "2+2",
            we_cli(dump, 2)),
        Row("ours_reader", "freshwiki reader (read_source)", "freshwiki", "1",
            ours_reader(dump)),
        Row("ours_process", "freshwiki reader + process_revision", "freshwiki", "1",
            ours_process(dump)),
        Row("ours_ingest_w1", "freshwiki ingest workers=1", "freshwiki", "1",
            ours_ingest(dump, 1)),
        Row("ours_ingest_w2", "freshwiki ingest workers=2", "freshwiki", "2+1",
            ours_ingest(dump, 2)),
    ]
    if freshwiki_exe() is not None:
        rows += [
            Row("ours_cli_w1", "freshwiki CLI corpus ingest --workers 1", "freshwiki", "1",
                ours_cli(dump, 1)),
            Row("ours_cli_w2", "freshwiki CLI corpus ingest --workers 2", "freshwiki", "2+1",
                ours_cli(dump, 2)),
        ]
    return rows


# (ours, anchor, label, counts towards the goal)
COMPARISONS: list[tuple[str, str, str, bool]] = [
    ("ours_reader", "we_reader", "reader vs reader, 1 process", False),
    ("ours_process", "we_serial", "clean+segment (no store) vs anchor, 1 process", False),
    ("ours_ingest_w1", "we_serial", "full ingest vs anchor, 1 process", True),
    ("ours_ingest_w2", "we_dump_p2", "full ingest vs anchor, 2 processes", True),
    ("ours_cli_w1", "we_cli_p1", "CLI end to end, 1 worker each", False),
    ("ours_cli_w2", "we_cli_p2", "CLI end to end, 2 workers each", False),
]


def run_rounds(
    rows: list[Row], repeats: int, scratch: Path, waiter: QuietWaiter | None
) -> list[dict[str, Any]]:
    log("warm-up round (unmeasured)")
    for row in rows:
        row.measure(scratch, record=False)
    rounds: list[dict[str, Any]] = []
    for i in range(repeats):
        order = rows if i % 2 == 0 else rows[::-1]
        others = waiter.wait() if waiter else others_running()
        rounds.append({"loadavg": loadavg(), "other_runnable_before": round(others, 2)})
        for row in order:
            row.measure(scratch, record=True)
        rounds[-1]["other_runnable_after"] = round(others_running(), 2)
        log(
            f"round {i + 1}/{repeats} (load {rounds[-1]['loadavg'][0]:.2f}, other runnable "
            f"tasks before/after {others:.1f}/{rounds[-1]['other_runnable_after']:.1f}): "
            + ", ".join(f"{r.key} {r.walls[-1]:.2f}s" for r in rows)
        )
    return rounds


# -- what each side produces ------------------------------------------------------------------


def output_summary(dump: Path, scratch: Path) -> dict[str, Any]:
    """Counts of what each pipeline keeps, from one more run of each (not timed)."""
    from freshwiki.corpus import CorpusStore, ingest

    out: dict[str, Any] = {}
    with fresh_dir(scratch, "summary") as work:
        we_serial(dump)(work)
        with (work / "wiki_00").open(encoding="utf-8") as fh:
            texts = [json.loads(line)["text"] for line in fh]
        out["wikiextractor"] = {
            "articles": len(texts),
            "text_chars": sum(len(t) for t in texts),
            "structure": "one text per article; section titles are plain lines; no tags",
        }
        with CorpusStore(work / "corpus.sqlite") as store:
            report = ingest(dump, store, workers=1)
            passages = list(store.passages())
        sections = {(p.page_id, p.section_path) for p in passages}
        out["freshwiki"] = {
            "articles": report.revisions_added,
            "passages": len(passages),
            "sections": len(sections),
            "sentences": sum(len(p.sentences) for p in passages),
            "maintenance_tags": sum(len(p.tags) for p in passages),
            "text_chars": sum(len(p.text) for p in passages),
            # Revisions (and their chunks) the parser failed on, so cleaned by the regex
            # fallback instead; per revision in experiments/results/ingest_quality.json.
            "fallback_revisions": report.fallback_revisions,
            "fallback_chunks": report.fallback_chunks,
            "fallback_reasons": report.fallback_reasons,
        }
    return out


# -- where the time goes ----------------------------------------------------------------------


def _cum_builtin(stats: pstats.Stats, needle: str) -> float:
    """Cumulative time of C functions (pstats file ``~``) whose name contains ``needle``."""
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    return float(sum(v[3] for (file, _, func), v in raw.items() if file == "~" and needle in func))


def _cum(stats: pstats.Stats, where: str, names: set[str]) -> float:
    """Cumulative time of functions ``names`` in the file ``where`` ends.

    A ``where`` ending with ``/`` is a folder: any file in it counts (the cleaner is a package
    of stage modules).
    """
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]

    def matches(file: str) -> bool:
        path = file.replace("\\", "/")
        return where in path if where.endswith("/") else path.endswith(where)

    return float(sum(v[3] for (file, _, func), v in raw.items()
                     if func in names and matches(file)))


def profile_breakdown(dump: Path, scratch: Path, repeats: int) -> dict[str, Any]:
    """Stage times of one single-process ingest, unprofiled, plus cProfile's inner split."""
    import blingfire

    from freshwiki.corpus import (
        CorpusStore,
        IngestOptions,
        clean_wikitext,
        make_passages,
        read_source,
        split_sentences,
    )
    from freshwiki.corpus.ingest import is_redirect

    options = IngestOptions()
    stages: dict[str, list[float]] = {"reader": [], "clean_wikitext": [], "make_passages": [],
                                      "store.add": []}
    articles = []
    paragraphs: dict[int, Any] = {}
    processed: list[Any] = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        articles = [r for r in read_source(dump) if not is_redirect(r)]
        stages["reader"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for r in articles:
            paragraphs[r.id] = clean_wikitext(r.text, title=r.page.title,
                                              keep_tables=options.keep_tables,
                                              keep_infobox=options.keep_infobox)
        stages["clean_wikitext"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        processed = [
            (r, make_passages(paragraphs[r.id], page_id=r.page.id, revision_id=r.id,
                              title=r.page.title, timestamp=r.timestamp,
                              max_words=options.max_words))
            for r in articles
        ]
        stages["make_passages"].append(time.perf_counter() - t0)
        with fresh_dir(scratch, "profile_store") as work, \
                CorpusStore(work / "c.sqlite") as store:
            t0 = time.perf_counter()
            for i in range(0, len(processed), 16):  # ingest's batch size
                store.add(processed[i : i + 64], keep_text=options.keep_text)
            stages["store.add"].append(time.perf_counter() - t0)
    stage_s = {k: round(median(v), 4) for k, v in stages.items()}

    # cProfile split inside cleaning and segmentation (shares, applied to unprofiled times).
    prof = cProfile.Profile()
    prof.enable()
    for r in articles:
        paras = clean_wikitext(r.text, title=r.page.title)
        make_passages(paras, page_id=r.page.id, revision_id=r.id, title=r.page.title,
                      timestamp=r.timestamp)
    prof.disable()
    st = pstats.Stats(prof)
    wt = "freshwiki/corpus/wikitext/"
    p_clean = _cum(st, wt, {"clean_wikitext"})
    p_sanitize = _cum(st, wt, {"_strip_comments", "_extract_ext_tags", "_balance", "_chunks"})
    p_tokenize = _cum_builtin(st, "'tokenize' of")
    p_build = _cum(st, "mwparserfromhell/parser/builder.py", {"build"})
    p_render = _cum(st, wt, {"render_chunk", "fallback_stream"}) - p_tokenize - p_build
    p_passages = _cum(st, "freshwiki/corpus/segment.py", {"make_passages"})
    p_split = _cum(st, "freshwiki/corpus/segment.py", {"split_sentences"})

    def share(part: float, whole: float, of: str) -> float:
        return round(stage_s[of] * ratio(part, whole), 4)

    inner = {
        "sanitizer (comments, ext tags, _balance, chunking)": share(p_sanitize, p_clean,
                                                                   "clean_wikitext"),
        "mwparserfromhell tokenizer (C)": share(p_tokenize, p_clean, "clean_wikitext"),
        "mwparserfromhell node builder": share(p_build, p_clean, "clean_wikitext"),
        "renderer (tokens and nodes → stream)": share(p_render, p_clean, "clean_wikitext"),
        "assembly, tidy, other cleaning": share(
            p_clean - p_sanitize - p_tokenize - p_build - p_render, p_clean, "clean_wikitext"),
        "sentence split (split_sentences, blingfire)": share(p_split, p_passages,
                                                             "make_passages"),
        "passage packing": share(p_passages - p_split, p_passages, "make_passages"),
    }

    # blingfire: its offsets API, its text_to_sentences, and ours, on the same paragraphs.
    texts = [p.text for ps in paragraphs.values() for p in ps if p.text.strip()]
    ascii_share = ratio(sum(t.isascii() for t in texts), len(texts))

    def timed(fn: Callable[[], object]) -> float:
        runs = []
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            fn()
            runs.append(time.perf_counter() - t0)
        return min(runs)

    bf_offsets = timed(lambda: [blingfire.text_to_sentences_and_offsets(t) for t in texts])
    bf_c_only = timed(lambda: [blingfire.text_to_sentences(t) for t in texts])
    split_s = timed(lambda: [split_sentences(t) for t in texts])
    return {
        "stages_s_median": stage_s,
        "stages_total_s": round(sum(stage_s.values()), 4),
        "inner_split_s_estimated": inner,
        "blingfire": {
            "paragraphs": len(texts),
            "paragraph_mb_utf8": round(sum(len(t.encode()) for t in texts) / 1e6, 3),
            "ascii_paragraph_share": round(ascii_share, 3),
            "split_sentences_s": round(split_s, 4),
            "text_to_sentences_and_offsets_s": round(bf_offsets, 4),
            "text_to_sentences_c_only_s": round(bf_c_only, 4),
            "wrapper_python_overhead_s": round(bf_offsets - bf_c_only, 4),
        },
        "profiled_s": {"clean_wikitext": round(p_clean, 3), "tokenizer": round(p_tokenize, 3),
                       "node builder": round(p_build, 3), "sanitizer": round(p_sanitize, 3),
                       "renderer": round(p_render, 3), "make_passages": round(p_passages, 3),
                       "split_sentences": round(p_split, 3)},
        "top_functions_tottime": top_functions(st, 12),
    }


def top_functions(stats: pstats.Stats, n: int) -> list[dict[str, Any]]:
    raw: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    items = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:n]
    out = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in items:
        short = "/".join(Path(file).parts[-2:]) if file != "~" else "builtin"
        out.append({"function": f"{short}:{line}({func})", "calls": nc,
                    "tottime_s": round(tt, 3), "cumtime_s": round(ct, 3)})
    return out


# -- memory against dump size ---------------------------------------------------------------

_PAGE_RE = re.compile(rb"[ \t]*<page>.*?</page>[ \t]*\n?", re.S)
_TITLE_RE = re.compile(rb"<title>(.*?)</title>")
_PAGE_ID_RE = re.compile(rb"(</ns>\s*<id>)(\d+)(</id>)")
_REV_ID_RE = re.compile(rb"(<revision>\s*<id>)(\d+)(</id>)")
_PARENT_ID_RE = re.compile(rb"(<parentid>)(\d+)(</parentid>)")


def sample_parts(dump: Path) -> tuple[bytes, list[bytes], bytes]:
    """Header (up to the first page), the article pages (ns 0, not redirects), and footer."""
    import bz2

    with bz2.open(dump, "rb") as fh:
        data = fh.read()
    first = _PAGE_RE.search(data)
    assert first is not None
    header = data[: first.start()]
    pages = [
        p for p in _PAGE_RE.findall(data) if b"<ns>0</ns>" in p and b"<redirect" not in p
    ]
    return header, pages, b"</mediawiki>\n"


def copy_page(page: bytes, k: int) -> bytes:
    if k == 0:
        return page
    shift = k * ID_STRIDE

    def bump(m: re.Match[bytes]) -> bytes:
        return m.group(1) + str(int(m.group(2)) + shift).encode() + m.group(3)

    page = _TITLE_RE.sub(lambda m: b"<title>" + m.group(1) + b" (copy %d)</title>" % k,
                         page, count=1)
    page = _PAGE_ID_RE.sub(bump, page, count=1)
    page = _REV_ID_RE.sub(bump, page, count=1)
    return _PARENT_ID_RE.sub(bump, page, count=1)


def write_synthetic(parts: tuple[bytes, list[bytes], bytes], copies: int, path: Path) -> int:
    header, pages, footer = parts
    with path.open("wb") as out:
        out.write(header)
        for k in range(copies):
            for page in pages:
                out.write(copy_page(page, k))
        out.write(footer)
    return path.stat().st_size


def child_ingest(xml: Path, db: Path) -> int:
    """Subprocess body for the memory test: ingest ``xml`` with workers=1, print JSON."""
    from freshwiki.corpus import CorpusStore, ingest

    base = peak_rss_mb()
    t0 = time.perf_counter()
    with CorpusStore(db) as store:
        report = ingest(xml, store, workers=1)
    wall = time.perf_counter() - t0
    print(json.dumps({
        "maxrss_after_imports_mb": round(base, 1),
        "maxrss_mb": round(peak_rss_mb(), 1),
        "ru_maxrss_mb_inherited_across_exec": round(ru_maxrss_mb(), 1),
        "wall_s": round(wall, 3),
        "revisions_added": report.revisions_added,
        "passages": report.passages,
        "bytes_read": report.read.bytes_read if report.read else None,
    }))
    return 0


def memory_scaling(dump: Path, scratch: Path, sizes: Sequence[int]) -> dict[str, Any]:
    parts = sample_parts(dump)
    runs = []
    for copies in sizes:
        with fresh_dir(scratch, f"mem_{copies}") as work:
            xml = work / f"synthetic-{copies}x.xml"
            size = write_synthetic(parts, copies, xml)
            cmd = [sys.executable, __file__, "--child-ingest", str(xml), "--child-store",
                   str(work / "corpus.sqlite")]
            done = run_checked(cmd)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result.update({
                "copies": copies,
                "pages": copies * len(parts[1]),
                "xml_mb": round(size / 1e6, 2),
                "store_mb": round((work / "corpus.sqlite").stat().st_size / 1e6, 2),
                "articles_per_s": round(ratio(result["revisions_added"], result["wall_s"]), 1),
            })
            runs.append(result)
            log(
                f"memory {copies}x: {result['pages']} pages, {result['xml_mb']} MB XML, "
                f"peak RSS {result['maxrss_mb']} MB (after imports "
                f"{result['maxrss_after_imports_mb']} MB), {result['wall_s']:.1f} s"
            )
    peaks = [r["maxrss_mb"] for r in runs]
    growth = ratio(peaks[-1], peaks[0]) if peaks else float("nan")
    slope = (
        1000 * ratio(peaks[-1] - peaks[-2], runs[-1]["pages"] - runs[-2]["pages"])
        if len(runs) > 1 else float("nan")
    )
    return {
        "runs": runs,
        "peak_growth_largest_over_smallest": round(growth, 3),
        "mb_per_1000_pages_between_two_largest": round(slope, 2),
        "flat": bool(len(runs) > 1 and growth <= MEMORY_FLAT_TOLERANCE),
        "judged": len(runs) > 1,
    }


# -- report -----------------------------------------------------------------------------------


def row_record(row: Row, xml_bytes: int, bz2_bytes: int, articles: int) -> dict[str, Any]:
    best = row.best()
    return {
        "label": row.label,
        "side": row.side,
        "processes": row.procs,
        "wall_s_best": round(best, 4),
        "wall_s_median": round(row.median(), 4),
        "walls_s": [round(w, 4) for w in row.walls],
        "cpu_s_at_best": round(row.cpu_at_best(), 4),
        "cpu_s_median": round(median(row.cpus), 4),
        "articles": row.articles[-1] if row.articles else None,
        "xml_mb_s": round(xml_bytes / 1e6 / best, 2),
        "bz2_mb_s": round(bz2_bytes / 1e6 / best, 3),
        "articles_per_s": round(articles / best, 1),
        "articles_per_s_median": round(articles / row.median(), 1),
        "articles_per_cpu_s": round(ratio(articles, row.cpu_at_best()), 1),
        "loadavg_1m_per_round": row.loads,
    }


def comparisons(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for ours, anchor, label, goal in COMPARISONS:
        if ours not in rows or anchor not in rows:
            continue
        a, b = rows[ours], rows[anchor]
        out.append({
            "ours": ours,
            "anchor": anchor,
            "label": label,
            "counts_for_goal": goal,
            "ratio_best": round(ratio(b["wall_s_best"], a["wall_s_best"]), 3),
            "ratio_median": round(ratio(b["wall_s_median"], a["wall_s_median"]), 3),
            "ratio_per_cpu_s": round(ratio(a["articles_per_cpu_s"], b["articles_per_cpu_s"]), 3),
            "meets_goal": ratio(b["wall_s_best"], a["wall_s_best"]) >= GOAL,
        })
    return out


def verdict(cmp: list[dict[str, Any]]) -> str:
    goal_rows = [c for c in cmp if c["counts_for_goal"]]
    if not goal_rows:
        return "no verdict: the goal rows were not measured"
    parts = [f"{c['label']}: {c['ratio_best']:.2f}x" for c in goal_rows]
    if all(c["meets_goal"] for c in goal_rows):
        return f"GOAL MET (>= {GOAL:.0f}x wikiextractor): " + "; ".join(parts)
    worst = min(goal_rows, key=lambda c: c["ratio_best"])
    need = ratio(GOAL, worst["ratio_best"])
    slower = "SLOWER than" if worst["ratio_best"] < 1 else "faster than, but short of the goal over"
    return (
        f"GOAL NOT MET (>= {GOAL:.0f}x wikiextractor): " + "; ".join(parts)
        + f". freshwiki is {slower} wikiextractor; reaching {GOAL:.0f}x needs a "
        f"{need:.1f}x speed-up of the worst row."
    )


def print_report(results: dict[str, Any]) -> None:
    meta = results["meta"]
    rows = results["rows"]
    width = 122
    print("\n" + "=" * width)
    print(
        f"corpus ingest on {Path(meta['dump']).name}: {meta['xml_mb']:.2f} MB XML "
        f"({meta['bz2_mb']:.2f} MB bz2), {meta['pages']} pages, {meta['articles']} articles "
        f"processed by each side; {meta['repeats']} rounds, headline = best of N "
        "(median beside it)"
    )
    others = [(r["other_runnable_before"], r["other_runnable_after"]) for r in meta["rounds"]]
    print(
        f"load average at start {meta['loadavg_at_start']}, at end {meta['loadavg_at_end']} "
        f"({meta['cpu_count']} cores); other runnable tasks before/after each round: "
        + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in others)
        + (f"; waited {meta['waited_for_quiet_s']:.0f} s for quiet" if meta.get(
            "waited_for_quiet_s") else "")
    )
    head = (f"{'':50}{'procs':>6}{'best s':>8}{'med s':>8}{'XML MB/s':>10}{'bz2 MB/s':>10}"
            f"{'art/s':>8}{'art/CPU-s':>11}{'CPU/wall':>10}")
    print("-" * width)
    print(head)
    print("-" * width)
    side = None
    for r in rows.values():
        if side is not None and r["side"] != side:
            print()
        side = r["side"]
        print(
            f"{r['label']:50}{r['processes']:>6}{r['wall_s_best']:>8.3f}"
            f"{r['wall_s_median']:>8.3f}{r['xml_mb_s']:>10.2f}{r['bz2_mb_s']:>10.3f}"
            f"{r['articles_per_s']:>8.1f}{r['articles_per_cpu_s']:>11.1f}"
            f"{ratio(r['cpu_s_at_best'], r['wall_s_best']):>10.2f}"
        )
    print("-" * width)
    print(
        "procs N+M: N processes extracting + M helpers (wikiextractor: mapper and reducer; "
        "freshwiki: the parent, which reads and stores).\n"
        "art/CPU-s: articles per CPU-second (user+sys, all processes) = throughput per core. "
        "1-process rows: art/s is per core.\nCPU/wall: cores kept busy in the best round "
        "(below ~0.95 on a 1-process row means it was kept waiting, e.g. by other work).\n"
        "The ANCHOR rows are what the goal is measured against: 1 process vs 1, 2 vs 2."
    )
    print(f"\nratios ours/wikiextractor (throughput; > 1 = ours faster; goal >= {GOAL:.0f}x)")
    for c in results["comparisons"]:
        flag = ("meets goal" if c["meets_goal"] else "BELOW GOAL") if c["counts_for_goal"] \
            else ""
        print(
            f"  {c['label']:48}{c['ours']:>16} / {c['anchor']:<12}"
            f"{c['ratio_best']:>6.2f}x  (median {c['ratio_median']:.2f}x, per CPU-s "
            f"{c['ratio_per_cpu_s']:.2f}x)  {flag}"
        )
    print(f"\nVERDICT: {results['verdict']}")
    kept = results.get("outputs")
    if kept:
        fw, we = kept["freshwiki"], kept["wikiextractor"]
        print(
            f"what each side keeps: freshwiki {fw['articles']} articles -> {fw['passages']} "
            f"passages in {fw['sections']} sections, {fw['sentences']} sentences, "
            f"{fw['maintenance_tags']} maintenance tags, {fw['text_chars']:,} chars (stored in "
            f"SQLite); wikiextractor {we['articles']} articles, {we['text_chars']:,} chars, "
            f"{we['structure']}"
        )
        print(
            f"regex fallback (the parser failed on a chunk): {fw['fallback_revisions']} of "
            f"{fw['articles']} articles, {fw['fallback_chunks']} chunks"
            + (f" {fw['fallback_reasons']}" if fw["fallback_reasons"] else "")
        )

    prof = results.get("profile")
    if prof:
        total = prof["stages_total_s"]
        print(f"\nwhere the time goes, 1 process (unprofiled stage times, median; total "
              f"{total:.2f} s):")
        for name, secs in prof["stages_s_median"].items():
            print(f"  {name:52}{secs:>8.3f} s {100 * ratio(secs, total):>5.1f}%")
        print("  split inside cleaning and segmentation (cProfile shares x unprofiled time):")
        for name, secs in prof["inner_split_s_estimated"].items():
            print(f"    {name:50}{secs:>8.3f} s {100 * ratio(secs, total):>5.1f}%")
        bf = prof["blingfire"]
        print(
            f"  sentences of {bf['paragraphs']} paragraphs ({bf['paragraph_mb_utf8']} MB, "
            f"{100 * bf['ascii_paragraph_share']:.0f}% ASCII): our split_sentences "
            f"{bf['split_sentences_s']:.3f} s; blingfire's offsets API "
            f"{bf['text_to_sentences_and_offsets_s']:.3f} s (its per-byte Python offset loop: "
            f"{bf['wrapper_python_overhead_s']:.3f} s); blingfire's text_to_sentences "
            f"{bf['text_to_sentences_c_only_s']:.3f} s (C split, fresh buffer per call)"
        )
        print("  top functions by own time (profiled):")
        for f in prof["top_functions_tottime"][:8]:
            print(f"    {f['tottime_s']:>7.3f} s  {f['calls']:>9}  {f['function']}")

    mem = results.get("memory")
    if mem:
        print("\npeak memory, full ingest workers=1 in a fresh subprocess, synthetic dumps "
              "(sample's articles repeated); peak RSS = VmHWM:")
        print(f"  {'copies':>6}{'pages':>7}{'XML MB':>9}{'peak RSS MB':>13}"
              f"{'after imports':>15}{'wall s':>8}{'art/s':>8}{'store MB':>10}")
        for r in mem["runs"]:
            print(
                f"  {r['copies']:>6}{r['pages']:>7}{r['xml_mb']:>9.1f}{r['maxrss_mb']:>13.1f}"
                f"{r['maxrss_after_imports_mb']:>15.1f}{r['wall_s']:>8.2f}"
                f"{r['articles_per_s']:>8.1f}{r['store_mb']:>10.1f}"
            )
        if mem["judged"]:
            state = "FLAT" if mem["flat"] else "NOT FLAT"
            print(f"  -> {state}: peak at the largest size / smallest = "
                  f"{mem['peak_growth_largest_over_smallest']:.2f}x "
                  f"(flat means <= {MEMORY_FLAT_TOLERANCE:.2f}x); between the two largest "
                  f"sizes {mem['mb_per_1000_pages_between_two_largest']:+.1f} MB per 1000 "
                  "pages")
        else:
            print("  -> one size only (--quick): flatness not judged")
    print(f"\nwall time {results['wall_time_s']:.0f} s; JSON: {results['results_path']}")
    busy_rounds = sum(
        1 for r in results["meta"]["rounds"]
        if max(r["other_runnable_before"], r["other_runnable_after"]) >= BUSY_OTHERS
    )
    if results["meta"]["high_load"] or busy_rounds:
        print(f"NOTE: the machine was busy with other work (at the start: "
              f"{results['meta']['high_load']}; rounds with other runnable tasks: {busy_rounds}"
              f"/{len(results['meta']['rounds'])}); rerun when it is quieter (--wait-quiet).")


# -- main -------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    from freshwiki.corpus import ReadReport, read_source

    started = time.perf_counter()
    dump: Path = args.dump
    cores = os.cpu_count() or 1
    waiter = QuietWaiter(args.wait_quiet) if args.wait_quiet else None
    others0 = waiter.wait() if waiter else others_running()
    load0 = loadavg()
    # Other runnable tasks say whether someone else is busy now; the load average also
    # remembers work that has ended (ours included), so it only decides without /proc.
    high = (others0 >= BUSY_OTHERS if others0 == others0
            else load0[0] > HIGH_LOAD_PER_CORE * cores)
    print(f"load average at start: {load0} on {cores} cores; other runnable tasks now: "
          f"{others0:.1f}"
          + (" -- BUSY: timings will be pessimistic, rerun later (or use --wait-quiet)"
             if high else ""), flush=True)
    report = ReadReport()
    from freshwiki.corpus.ingest import is_redirect

    articles = sum(1 for r in read_source(dump, namespaces=None, report=report)
                   if not is_redirect(r))
    xml_bytes, bz2_bytes = report.bytes_read, dump.stat().st_size
    repeats = args.repeats or (QUICK_REPEATS if args.quick else DEFAULT_REPEATS)
    results: dict[str, Any] = {"meta": {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "argv": sys.argv,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": cores,
        "loadavg_at_start": load0,
        "high_load": high,
        "dump": str(dump),
        "xml_bytes": xml_bytes,
        "bz2_bytes": bz2_bytes,
        "xml_mb": xml_bytes / 1e6,
        "bz2_mb": bz2_bytes / 1e6,
        "pages": report.pages,
        "articles": articles,
        "repeats": repeats,
        "versions": {d: version_of(d) for d in ("freshwiki", "wikiextractor",
                                                "mwparserfromhell", "lxml", "blingfire")},
        "definitions": {
            "wall_s_best": "minimum wall time over the measured rounds (headline)",
            "xml_mb_s": "decompressed XML bytes / best wall time (1 MB = 1e6 bytes)",
            "bz2_mb_s": "compressed file bytes / best wall time",
            "articles_per_s": "articles processed (non-redirect main-namespace pages) / best "
            "wall time",
            "articles_per_cpu_s": "articles / (user+sys CPU of this process and children) in "
            "the best round: throughput per core",
            "ratio_best": "anchor best wall / ours best wall (throughput ratio)",
        },
    }}
    with tempfile.TemporaryDirectory(prefix="freshwiki-bench-ingest-") as tmp:
        scratch = Path(tmp)
        rows = make_rows(dump)
        print(f"\n== throughput: {len(rows)} configurations x {repeats} rounds", flush=True)
        results["meta"]["rounds"] = run_rounds(rows, repeats, scratch, waiter)
        results["meta"]["waited_for_quiet_s"] = round(waiter.waited_s, 1) if waiter else 0.0
        bad = [r.key for r in rows if any(n != articles for n in r.articles)]
        if bad:
            print(f"  !! article counts differ from {articles} in: {bad}", flush=True)
        results["meta"]["article_count_mismatch"] = bad
        results["rows"] = {r.key: row_record(r, xml_bytes, bz2_bytes, articles) for r in rows}
        results["comparisons"] = comparisons(results["rows"])
        results["verdict"] = verdict(results["comparisons"])
        print("\n== what each side keeps", flush=True)
        results["outputs"] = output_summary(dump, scratch)
        if not args.no_profile:
            print("\n== where the time goes (1 process)", flush=True)
            results["profile"] = profile_breakdown(dump, scratch, min(repeats, 3))
        if not args.no_memory:
            sizes = (1,) if args.quick else MEMORY_SIZES
            print(f"\n== peak memory against dump size: {', '.join(f'{s}x' for s in sizes)}",
                  flush=True)
            results["memory"] = memory_scaling(dump, scratch, sizes)
    results["meta"]["loadavg_at_end"] = loadavg()
    results["wall_time_s"] = round(time.perf_counter() - started, 1)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_REPEATS} rounds and the 1x memory size only")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"measured rounds (default {DEFAULT_REPEATS}, quick "
                        f"{QUICK_REPEATS})")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    parser.add_argument("--dump", type=Path, default=DUMP_PATH, help="the dump to read")
    parser.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                        help="wait (up to this long in all) before the start and before each "
                        "round until no other task is runnable")
    parser.add_argument("--no-profile", action="store_true", help="skip the stage breakdown")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory test")
    parser.add_argument("--child-ingest", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-store", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_ingest:
        return child_ingest(args.child_ingest, args.child_store)
    if not args.dump.exists():
        print(f"error: {args.dump} does not exist (the sample dump lives in ../shared/data)",
              file=sys.stderr)
        return 2
    results = run(args)
    results["results_path"] = str(args.output)
    write_result(args.output, results, data=data_provenance(
        {"real": 1.0}, sample="n/a (no trained part; a speed figure)", figure="measured",
        sources=f"{args.dump} (206 real enwiki pages, gensim test data)",
        memory_rows="synthetic dumps: the sample's 106 article pages repeated 1x, 4x, 16x "
                    "with their own ids and titles (peak memory against size only)"))
    print_report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
