#!/usr/bin/env python
"""What ``freshwiki contradictions mine`` finds on the real data, and how often it is right.

Run from the repository root::

    .venv/bin/python experiments/contradiction_mining.py [--output PATH] [--show-sample]

Three measurements, each through :func:`freshwiki.corpus.mine_contradictions` (what the
command runs):

1. **Real dumps and histories** (``../shared/data/wikipedia``): the articles dump slice, the
   table-markup dump and every real history file, every namespace. Counts per tag type, and
   how many revisions the prefilter let through to cleaning (each one is a near miss: a page
   that mentions ``contradict``/``inconsistent`` in a template without carrying a tag, such as
   ``{{inconsistent citations}}``). These files hold no contradiction tag at all (checked with
   ``grep`` as well), so they give counts of 0 and no candidate to check.
2. **WikiContradict's tagged paragraphs as a dump** (constructed from real text): the release's
   ``paragraph_A`` is the raw wikitext of a real tagged paragraph. One page per article title:
   first the article's own passage B where the item has one (text the annotators took from the
   same article, inline markers such as ``[inconsistent]`` removed; left out when it is part
   of the tagged paragraph itself), then each distinct
   ``paragraph_A``; for the 8 items whose passage B is in another article, that article is a
   page of its own (item 98's ``paragraphB_article`` reads "Tornadoes of 2019" but its tag
   names "Tornadoes of 2010" and the passage is about the October 2010 outbreak the tag
   cites, so the page takes the tag's title). Counts per type; recall against the release (each
   item has a candidate on its page whose clean paragraph is the item's ``paragraph_A_clean``,
   up to whitespace, with the same tag); and **precision of 30 candidates checked by reading**
   (``experiments/data/contradiction_candidates_labels.jsonl``: one line per candidate with a
   one-line reason; a candidate is right when its paragraph is the one the tag refers to *and*
   it contains, or sits beside, the contradiction the tag claims). The 30 are drawn with
   ``random.Random(14)`` from all candidates; ``--show-sample`` prints them for reading.
3. **Histories built from those paragraphs** (constructed): for every item whose paragraph
   is not only the tag, a page of four revisions (untagged text, tagged, tagged with a
   ``date=`` changed, tag removed). Checks that each tag is reported once, from the third
   revision, first seen in the second and removed in the fourth.

No timing: nothing here is a speed figure. Results go to
``experiments/results/contradiction_mining.json``.
"""

from __future__ import annotations

import argparse
import bz2
import json
import random
import re
import sys
import tempfile
from html import escape
from pathlib import Path
from typing import Any

from _provenance import RESULTS, data_provenance, write_result
from freshwiki.benchmarks.wikicontradict import clean_passage
from freshwiki.corpus import Candidate, mine_contradictions

RESULTS_PATH = RESULTS / "contradiction_mining.json"
LABELS = Path(__file__).resolve().parent / "data" / "contradiction_candidates_labels.jsonl"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
WIKIPEDIA = SHARED / "wikipedia"
RELEASE = SHARED / "wikicontradict" / "wikicontradict.json"
SAMPLE_SEED, SAMPLE_SIZE = 14, 30
STAMP = "2024-02-26T00:00:00Z"  # the day the WikiContradict authors collected their tags
RENAMED = {98: "Tornadoes of 2010"}  # see the module docstring


def _revision(rev_id: int, text: str, stamp: str) -> str:
    return (f"    <revision>\n      <id>{rev_id}</id>\n      <timestamp>{stamp}</timestamp>\n"
            f'      <text xml:space="preserve">{escape(text, quote=False)}</text>\n'
            "    </revision>\n")


def write_dump(path: Path, pages: list[tuple[str, list[tuple[str, str]]]]) -> Path:
    """A bz2 MediaWiki export: (title, [(timestamp, wikitext), ...]) per page, in order."""
    parts = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n']
    rev_id = 1000
    for page_id, (title, revisions) in enumerate(pages, 1):
        parts.append(f"  <page>\n    <title>{escape(title, quote=False)}</title>\n"
                     f"    <ns>0</ns>\n    <id>{page_id}</id>\n")
        for stamp, text in revisions:
            rev_id += 1
            parts.append(_revision(rev_id, text, stamp))
        parts.append("  </page>\n")
    parts.append("</mediawiki>\n")
    path.write_bytes(bz2.compress("".join(parts).encode("utf-8")))
    return path


def release_pages(items: list[dict[str, Any]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The WikiContradict pages described in the module docstring."""
    texts: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        ann = item["annotationResult"]
        title = item["title"].strip()
        b_title = RENAMED.get(index, ann["paragraphB_article"].strip())
        b_text = clean_passage(ann["paragraphB_information"])
        page = texts.setdefault(title, [])
        if b_title == title:
            inside = _norm(b_text) in _norm(item["paragraph_A_clean"])
            if b_text and not inside and b_text not in page:
                page.insert(0, b_text)
        else:
            other = texts.setdefault(b_title, [])
            if b_text and b_text not in other:
                other.append(b_text)
        if item["paragraph_A"] not in page:
            page.append(item["paragraph_A"])
    return [(title, [(STAMP, "\n\n".join(paras))]) for title, paras in texts.items()]


def history_pages(items: list[dict[str, Any]]) -> tuple[list[tuple[str, list[tuple[str, str]]]],
                                                        list[str]]:
    """Four revisions per item with text beside its tag: without, with, date changed, without."""
    pages, titles = [], []
    for index, item in enumerate(items):
        raw, clean = item["paragraph_A"], item["paragraph_A_clean"]
        if not clean.strip() or "{{" not in raw:
            continue
        redated = re.sub(r"(\{\{[^{}|]*)(\||\}\})", r"\1|date=January 2030\2", raw, count=1)
        title = f"History {index:03d}"
        pages.append((title, [("2020-01-01T00:00:00Z", clean), ("2021-01-01T00:00:00Z", raw),
                              ("2022-01-01T00:00:00Z", redated),
                              ("2023-01-01T00:00:00Z", clean + " Edited.")]))
        titles.append(title)
    return pages, titles


def _norm(text: str) -> str:
    """Letters and digits only.

    The release's clean text keeps list bullets and the spaces left by removed templates
    before punctuation; ours tidies both.
    """
    return "".join(re.findall(r"\w+", text)).casefold()


def recall(items: list[dict[str, Any]], candidates: list[Candidate]) -> dict[str, Any]:
    """Items of the release that come back as candidates.

    Same page, same template, and the same clean paragraph (letters and digits), or, where the
    release's paragraph is only a heading and a banner (no text of the section was taken), an
    empty paragraph carrying the banner.
    """
    by_title: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_title.setdefault(c.title, []).append(c)
    missed, banners = [], []
    for index, item in enumerate(items):
        template = item["tag"].split("|")[0].strip().casefold()
        clean = _norm(item["paragraph_A_clean"])
        mine = [c for c in by_title.get(item["title"].strip(), [])
                if c.template.strip().casefold() == template]
        if any(_norm(c.paragraph) == clean for c in mine):
            continue
        if any(not c.paragraph and c.scope == "block" for c in mine):
            banners.append(index)
        else:
            missed.append(index)
    return {"items": len(items), "same_paragraph": len(items) - len(missed) - len(banners),
            "banner_without_text": banners, "missed": missed}


def precision(candidates: list[Candidate]) -> dict[str, Any]:
    """The committed reading of the 30 sampled candidates."""
    sample = random.Random(SAMPLE_SEED).sample(candidates, SAMPLE_SIZE)
    labels = {}
    if LABELS.exists():
        for line in LABELS.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                labels[row["id"]] = row
    missing = [c.id for c in sample if c.id not in labels]
    if missing:
        return {"sampled": [c.id for c in sample], "labelled": False, "missing": missing}
    rows = [labels[c.id] for c in sample]
    right = [r for r in rows if r["paragraph_ok"] and r["contradiction_ok"]]
    by_type: dict[str, list[int]] = {}
    for c, r in zip(sample, rows, strict=True):
        by_type.setdefault(c.tag_type, [0, 0])
        by_type[c.tag_type][0] += int(r["paragraph_ok"] and r["contradiction_ok"])
        by_type[c.tag_type][1] += 1
    return {
        "sampled": [c.id for c in sample], "labelled": True,
        "checked": len(rows), "right": len(right), "precision": round(len(right) / len(rows), 3),
        "paragraph_ok": sum(r["paragraph_ok"] for r in rows),
        "contradiction_ok": sum(r["contradiction_ok"] for r in rows),
        "by_type": {t: {"right": a, "checked": b} for t, (a, b) in sorted(by_type.items())},
        "wrong": [{"id": r["id"], "reason": r["reason"]} for r in rows
                  if not (r["paragraph_ok"] and r["contradiction_ok"])],
        "labels": str(LABELS.relative_to(LABELS.parents[2])),
        "labeller": rows[0]["labeller"],
    }


def show(candidates: list[Candidate], items: list[dict[str, Any]]) -> None:
    """Print the sampled candidates with the release's own annotation, for reading."""
    by_title: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_title.setdefault(item["title"].strip(), []).append(item)
    sample = random.Random(SAMPLE_SEED).sample(candidates, SAMPLE_SIZE)
    for n, c in enumerate(sample, 1):
        print(f"=== {n} {c.id} | {c.title} | {c.tag_type} ({c.template}, {c.scope}) "
              f"date={c.date!r} reason={c.reason!r}")
        print(f"  section: {c.section_path}  offset: {c.sentence_offset}")
        print(f"  PARAGRAPH: {c.paragraph}")
        print(f"  TAGGED: {c.tagged_sentence}")
        print(f"  BEFORE: {(c.before or '')[:400]}")
        print(f"  AFTER: {(c.after or '')[:400]}")
        for o in c.others:
            print(f"  OTHER {o.title} -> {o.status}: "
                  + " | ".join(f"{p.score} {p.text[:200]}" for p in o.passages))
        for item in by_title.get(c.title, []):
            ann = item["annotationResult"]
            print(f"  RELEASE tag={item['tag'][:80]!r}")
            print(f"    A: {ann.get('relevantInfo_comment_A', '')[:300]}")
            print(f"    B: {ann.get('relevantInfo_comment_B', '')[:300]}")
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    parser.add_argument("--show-sample", action="store_true",
                        help="print the 30 sampled candidates for reading, and stop")
    args = parser.parse_args(argv)
    items: list[dict[str, Any]] = json.loads(RELEASE.read_text(encoding="utf-8"))

    real: dict[str, Any] = {}
    sources = [WIKIPEDIA / "dumps" / "enwiki-pages-articles-sample.xml.bz2",
               WIKIPEDIA / "dumps" / "enwiki-table-markup.xml.bz2",
               *sorted((WIKIPEDIA / "histories").glob("*.xml"))]
    for source in sources:
        report = mine_contradictions(source, namespaces=None).report.as_dict()
        real[source.name] = {k: report[k] for k in (
            "pages", "revisions", "redirects", "revisions_cleaned", "revisions_without_tag",
            "tags_unattached", "candidates", "by_type")}
        print(f"{source.name}: {report['candidates']} candidates, {report['revisions']} "
              f"revisions, {report['revisions_cleaned']} cleaned after the prefilter")

    with tempfile.TemporaryDirectory() as tmp:
        pages = release_pages(items)
        dump = write_dump(Path(tmp) / "wikicontradict-pages.xml.bz2", pages)
        mined = mine_contradictions(dump)
        unfiltered = mine_contradictions(dump, prefilter=False)
        hist_pages, hist_titles = history_pages(items)
        history = mine_contradictions(write_dump(Path(tmp) / "histories.xml.bz2", hist_pages))
    candidates = mined.candidates
    if args.show_sample:
        show(candidates, items)
        return 0
    same_without_filter = ([c.as_dict() for c in candidates]
                           == [c.as_dict() for c in unfiltered.candidates])
    others = [{"candidate": c.id, "title": c.title, "other": o.title, "status": o.status,
               "found_title": o.found_title,
               "best_passage": o.passages[0].text[:300] if o.passages else None,
               "shared": list(o.passages[0].shared) if o.passages else []}
              for c in candidates for o in c.others]
    expected_runs = ["2021-01-01T00:00:00+00:00", "2022-01-01T00:00:00+00:00",
                     "2023-01-01T00:00:00+00:00"]
    history_ok = [
        [c.history.first_seen.timestamp, c.revision.timestamp,
         c.history.removed_in.timestamp if c.history.removed_in else None] == expected_runs
        and c.history.revisions_of_page == 4 and not c.history.first_seen_is_earliest
        for c in history.candidates
    ]
    paged = {c.title for c in history.candidates}
    result = {
        "real": real,
        "wikicontradict_pages": {
            "pages": len(pages), "report": mined.report.as_dict(),
            "recall": recall(items, candidates),
            "prefilter_changes_nothing": same_without_filter,
            "other_articles": others,
            "precision": precision(candidates),
        },
        "constructed_histories": {
            "pages": len(hist_titles), "pages_with_a_candidate": len(paged),
            "candidates": len(history.candidates),
            "history_as_constructed": sum(history_ok),
            "report": history.report.as_dict(),
        },
    }
    pre = result["wikicontradict_pages"]["precision"]
    n_real = sum(r["candidates"] for r in real.values())
    write_result(args.output, result, data=data_provenance(
        {"real": 0.0, "constructed": 1.0}
        if not n_real else {"real": 0.5, "constructed": 0.5},
        sample="n/a (no trained or tuned part; the tag table was written from the release's "
               "spellings, so recall on the release is in sample)",
        sources="../shared/data/wikipedia (dump slice, table-markup dump, histories: real, "
                "CC BY-SA); ../shared/data/wikicontradict/wikicontradict.json (real tagged "
                "paragraphs laid out as pages and histories: constructed; MIT)",
        real_candidates=n_real,
    ))
    print(f"WikiContradict pages: {mined.report.candidates} candidates "
          f"{dict(mined.report.by_type)}; recall {result['wikicontradict_pages']['recall']}")
    print(f"prefilter changes nothing: {same_without_filter}")
    print(f"histories: {sum(history_ok)}/{len(history.candidates)} as constructed, "
          f"{len(paged)}/{len(hist_titles)} pages")
    if pre.get("labelled"):
        print(f"precision of {pre['checked']} read: {pre['right']}/{pre['checked']} "
              f"= {pre['precision']}")
    else:
        print(f"precision: {len(pre['missing'])} sampled candidates not labelled yet "
              "(run with --show-sample and label them)")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
