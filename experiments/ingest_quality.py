#!/usr/bin/env python
"""How often corpus ingest falls back to regex cleaning on real Wikipedia text.

Run from the repository root::

    .venv/bin/python experiments/ingest_quality.py [--output PATH]

When mwparserfromhell cannot be trusted with a chunk of a page (it nests past the depth the
parser handles, or the parser or our renderer raises), the cleaner strips that chunk with
regexes instead: the text stays, but tables and most templates go and stray markup may
remain. Ingest counts this (``IngestReport.fallback_*``, ``freshwiki corpus info``); this
script measures it on every real wikitext source in ``../shared/data/wikipedia``:

* ``dumps/enwiki-pages-articles-sample.xml.bz2``: the real articles dump slice (one
  revision per page);
* every file in ``histories/``: real ``pages-meta-history`` exports, every revision;
* ``dumps/enwiki-table-markup.xml.bz2``: one more real dump, heavy in table markup.

Each source goes through the real ``ingest`` into a fresh store in a temp dir, twice: as
``freshwiki corpus ingest`` does by default (articles only, namespace 0) and with every
namespace (``--all-namespaces``; the simplewiki history holds only user and talk pages).
Both with 1 and 2 worker processes, which must agree. Redirects are skipped, as in ingest.

Units, since the fallback works on chunks, not pages: a **revision** is one stored version
of a page (a dump has one per page, a history several); a **chunk** is a piece of a
revision's wikitext that the cleaner parses on its own (cut at blank and heading lines
outside every construct, about 32,000 characters at most; most articles are one chunk). The
rates are revisions with at least one fallback chunk over revisions cleaned, and fallback
chunks over chunks. Chunk totals come from ``clean_wikitext_result`` run on each revision
directly, which also checks the ingest's count. Every revision that falls back is listed
with its title, revision id and reason (``nested deeper than 20`` or the exception type).

No timing: nothing here is a speed figure. Results go to
``experiments/results/ingest_quality.json``; nothing from the data is written into the
repository.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _provenance import RESULTS, data_provenance, write_result
from freshwiki.corpus import (
    CorpusStore,
    IngestOptions,
    clean_wikitext_result,
    ingest,
    read_source,
)
from freshwiki.corpus.ingest import is_redirect

RESULTS_PATH = RESULTS / "ingest_quality.json"
# ../shared/data beside the checkout (DEVELOPERS.md): read there, never copied.
WIKIPEDIA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikipedia"
SCOPES: dict[str, frozenset[int] | None] = {"articles": frozenset({0}), "all_namespaces": None}


def sources(root: Path) -> list[tuple[str, Path]]:
    """(kind, path) of every real wikitext source, in a fixed order."""
    found = [("articles dump", root / "dumps" / "enwiki-pages-articles-sample.xml.bz2")]
    found += [("history", p) for p in sorted((root / "histories").glob("*.xml*"))]
    found.append(("articles dump (extra)", root / "dumps" / "enwiki-table-markup.xml.bz2"))
    return found


def direct_counts(path: Path, namespaces: frozenset[int] | None) -> dict[str, Any]:
    """Chunks and fallbacks of each revision, cleaned one by one as ingest cleans them."""
    options = IngestOptions()
    revisions = chunks = 0
    fallbacks: dict[int, list[str]] = {}
    for revision in read_source(path, namespaces=set(namespaces) if namespaces is not None
                                else None):
        if is_redirect(revision) or revision.text_format != "wikitext":
            continue
        result = clean_wikitext_result(revision.text, title=revision.page.title,
                                       keep_tables=options.keep_tables,
                                       keep_infobox=options.keep_infobox)
        revisions += 1
        chunks += result.chunks
        if result.fallbacks:
            fallbacks[revision.id] = [f.reason for f in result.fallbacks]
    return {"revisions": revisions, "chunks": chunks, "fallbacks": fallbacks}


def measure(path: Path, namespaces: frozenset[int] | None, scratch: Path) -> dict[str, Any]:
    """One source in one scope, through the real ingest with 1 and 2 workers."""
    reports: dict[int, dict[str, Any]] = {}
    listed: list[dict[str, Any]] = []
    for workers in (1, 2):
        db = scratch / f"{path.name}-{workers}-{'all' if namespaces is None else 'ns0'}.sqlite"
        with CorpusStore(db) as store:
            report = ingest(path, store, workers=workers,
                            namespaces=set(namespaces) if namespaces is not None else None)
            summary = store.fallback_summary()
            reports[workers] = report.as_dict() | {"store": summary.as_dict()}
            listed = [{"title": f.title, "page_id": f.page_id, "revision_id": f.revision_id,
                       "reasons": [x.reason for x in f.fallbacks],
                       "chunk_chars": [x.chunk_chars for x in f.fallbacks]}
                      for f in store.fallbacks()]
    if reports[1] != reports[2]:
        raise SystemExit(f"workers=1 and workers=2 disagree on {path}: {reports}")
    report = reports[2]
    direct = direct_counts(path, namespaces)
    fell_back = {item["revision_id"]: item["reasons"] for item in listed}
    if direct["revisions"] != report["revisions_added"] or direct["fallbacks"] != fell_back:
        raise SystemExit(f"ingest and direct cleaning disagree on {path}: {report} vs {direct}")
    return {
        "revisions_cleaned": report["revisions_added"],
        "redirects_skipped": report["redirects_skipped"],
        "chunks": direct["chunks"],
        "fallback_revisions": report["fallback_revisions"],
        "fallback_chunks": report["fallback_chunks"],
        "fallback_reasons": report["fallback_reasons"],
        "fallback_revision_rate": rate(report["fallback_revisions"], report["revisions_added"]),
        "fallback_chunk_rate": rate(report["fallback_chunks"], direct["chunks"]),
        "store_summary": report["store"],
        "fallback_pages": listed,
    }


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    revisions = sum(r["revisions_cleaned"] for r in rows)
    chunks = sum(r["chunks"] for r in rows)
    fb_revisions = sum(r["fallback_revisions"] for r in rows)
    fb_chunks = sum(r["fallback_chunks"] for r in rows)
    reasons: Counter[str] = Counter()
    for r in rows:
        reasons.update(r["fallback_reasons"])
    return {"revisions_cleaned": revisions, "chunks": chunks,
            "fallback_revisions": fb_revisions, "fallback_chunks": fb_chunks,
            "fallback_reasons": dict(reasons),
            "fallback_revision_rate": rate(fb_revisions, revisions),
            "fallback_chunk_rate": rate(fb_chunks, chunks)}


def verdict(scopes: dict[str, Any]) -> str:
    """One sentence a reader can quote: the headline counts, and zero said as zero."""
    t = scopes["all_namespaces"]["total_sample_dump_and_histories"]
    counts = (f"{t['fallback_revisions']} of {t['revisions_cleaned']} revisions and "
              f"{t['fallback_chunks']} of {t['chunks']} chunks of the sample dump and the "
              "histories (every revision, all namespaces)")
    if t["fallback_revisions"] == 0:
        return (f"The regex fallback never ran on the real data: {counts} were cleaned by "
                "it; the rate is 0.")
    return (f"The regex fallback cleaned {counts} (revision rate "
            f"{t['fallback_revision_rate']}); the pages are listed per source.")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    parser.add_argument("--data", type=Path, default=WIKIPEDIA,
                        help="the shared data's wikipedia folder")
    args = parser.parse_args(argv)
    found = sources(args.data)
    missing = [str(p) for _, p in found if not p.exists()]
    if missing:
        print(f"error: missing {', '.join(missing)} (the real data lives in ../shared/data)",
              file=sys.stderr)
        return 2
    results: dict[str, Any] = {"scopes": {}}
    with tempfile.TemporaryDirectory(prefix="freshwiki-ingest-quality-") as tmp:
        for scope, namespaces in SCOPES.items():
            rows = []
            for kind, path in found:
                shown = f"../shared/{path.relative_to(args.data.parents[1])}"
                row = {"source": shown, "kind": kind, **measure(path, namespaces, Path(tmp))}
                rows.append(row)
            headline = [r for r in rows if r["kind"] != "articles dump (extra)"]
            results["scopes"][scope] = {
                "namespaces": sorted(namespaces) if namespaces is not None else "all",
                "sources": rows,
                "total_sample_dump_and_histories": totals(headline),
                "total_with_extra_dump": totals(rows),
            }
    results["units"] = {
        "revision": "one stored version of a page (a dump has one per page, a history "
                    "several); redirects are skipped and not counted",
        "chunk": "a piece of a revision's wikitext parsed on its own, cut at blank and "
                 "heading lines outside every construct, at most about 32,000 characters",
        "fallback_revision_rate": "revisions with >= 1 regex-cleaned chunk / revisions cleaned",
        "fallback_chunk_rate": "regex-cleaned chunks / chunks",
    }
    results["verdict"] = verdict(results["scopes"])
    results["checks"] = ("each source ingested with workers=1 and workers=2 (same report); "
                         "the ingest's fallbacks equal clean_wikitext_result's, revision by "
                         "revision")
    write_result(args.output, results, data=data_provenance(
        {"real": 1.0}, sample="n/a", figure="measured",
        sources="../shared/data/wikipedia: dumps/enwiki-pages-articles-sample.xml.bz2 and "
        "dumps/enwiki-table-markup.xml.bz2 (gensim test data), histories/*.xml (pywikibot and "
        "analytics-refinery-source test data); Wikipedia text CC BY-SA 4.0"))
    print_report(results)
    print(f"\n{results['verdict']}\nJSON: {args.output}")
    return 0


def print_report(results: dict[str, Any]) -> None:
    for scope, block in results["scopes"].items():
        print(f"\n== {scope} (namespaces: {block['namespaces']})")
        print(f"  {'source':62}{'revisions':>10}{'chunks':>8}{'fb rev':>8}{'fb chunks':>10}")
        for r in block["sources"]:
            print(f"  {r['source']:62}{r['revisions_cleaned']:>10}{r['chunks']:>8}"
                  f"{r['fallback_revisions']:>8}{r['fallback_chunks']:>10}")
            for page in r["fallback_pages"]:
                print(f"      {page['title']} (revision {page['revision_id']}): "
                      f"{', '.join(page['reasons'])}")
        for label in ("total_sample_dump_and_histories", "total_with_extra_dump"):
            t = block[label]
            print(f"  {label}: {t['fallback_revisions']} of {t['revisions_cleaned']} revisions "
                  f"(rate {t['fallback_revision_rate']}), {t['fallback_chunks']} of "
                  f"{t['chunks']} chunks (rate {t['fallback_chunk_rate']}) regex-cleaned; "
                  f"reasons {t['fallback_reasons'] or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
