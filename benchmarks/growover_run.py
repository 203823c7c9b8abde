#!/usr/bin/env python
"""GrowOVER figure: build a living benchmark from real histories, evaluate vanilla vs RaLM.

Run from the repository root (full size: see ``--help`` for the knobs)::

    FRESHWIKI_N_THREADS=1 .venv/bin/python benchmarks/growover_run.py \
        --model local:qwen2.5-coder-1.5b --out benchmarks/results/growover

Sources (built at run time, nothing copied into the repository):

- **real**: ``../shared/data/wikipedia/histories/article-pear.xml`` (Pear, 2002 revisions),
  ``article-pear-0.10.xml`` (Pear as of 2014-12-17, same page id) and ``article-pyrus.xml``
  (Pyrus: mostly a redirect; exercises the recorded skips);
- **constructed**: two later revisions of Pear (2015-06-01, 2016-06-01) derived from the real
  2014 text by :func:`constructed_revision` (one constructed sentence appended to every
  third prose paragraph = new sentences; in the others the first visible number raised =
  changed facts; paragraphs without a number untouched = unchanged), written to
  ``OUT/sources/``; plus, with ``--articles N``, N articles of the real enwiki dump slice
  with the same two constructed revisions each (more instances, tighter intervals).
  Constructed sentences are not Wikipedia facts; they exist to exercise the update rules.

Cuts: 2014-12-31 (real text), 2015-06-30 and 2016-06-30 (constructed edits): three snapshots
whose text differs. The 2002 revisions are before the first cut and only decide that the page
existed. The dataset is built under ``FRESHWIKI_HOME/growover/NAME`` (resumable), then every
system in ``--systems`` (those registered; ``rilm`` when present) is run through the ordinary
runner on QA and dialogue, and ``OUT/growover.md`` / ``OUT/growover.json`` tabulate per
snapshot x type the mean F1 / EM / BLEU / hit@k with 95% bootstrap intervals and n
(``no-retrieval`` hit skips left out). ``freshwiki report RUN...`` gives the HTML report.

Text from Wikipedia, CC BY-SA 4.0.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import re
import sys
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from freshwiki.benchmarks.growover import (
    Dataset,
    GrowOver,
    build_dataset,
    datasets_dir,
    retrieval_scored,
)
from freshwiki.changes.snapshots import LLMJudge
from freshwiki.config import load_settings
from freshwiki.corpus import iter_latest, iter_revisions
from freshwiki.evaluation import ResultsStore, default_results_path, run_evaluation, summarize
from freshwiki.llm import open_llm
from freshwiki.retrieval import Embedder
from freshwiki.systems import system_names

REPO = Path(__file__).resolve().parents[1]
SHARED = load_settings().settings.data_dir / "wikipedia"
"""The real data, found like every command finds it (``FRESHWIKI_DATA_DIR``, else
``../shared/data`` beside the checkout)."""
REAL = [SHARED / "histories" / n for n in ("article-pear.xml", "article-pear-0.10.xml",
                                           "article-pyrus.xml")]
SAMPLE_DUMP = SHARED / "dumps" / "enwiki-pages-articles-sample.xml.bz2"
CUTS = ["2014-12-31", "2015-06-30", "2016-06-30"]
EDITS = [("2015-06-01T12:00:00Z", 1), ("2016-06-01T12:00:00Z", 2)]
_NUMBER = re.compile(r"(?<![\w.,])(\d{2,4})(?![\w,]|\.\d)")
HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" '
        'xml:lang="en"><siteinfo><sitename>Wikipedia</sitename><namespaces>'
        '<namespace key="0" /></namespaces></siteinfo>')


def _prose(line: str) -> bool:
    head = line.lstrip()[:2]
    if head == "[[" and line.lstrip()[2:].split(":")[0].lower() in ("file", "image", "category"):
        return False
    return bool(line.strip()) and head not in ("{{", "{|", "|", "|}", "==", "*", "#", "!",
                                               "<!", "}}", ":")


def constructed_revision(text: str, step: int) -> str:
    """The ``step``-th constructed edit of a wikitext: see the module docstring.

    Prose paragraph ``i`` (in order): ``i % 3 == 1`` gets one constructed sentence appended
    (new); any other gets its first visible 2-4 digit number raised by ``step`` (a changed
    fact), and is left alone (unchanged) when it shows no number. Edits accumulate: step 2
    applies to step 1's text, so a paragraph changed at step 1 changes again.
    """
    out = []
    prose = 0
    for line in text.split("\n"):
        if _prose(line):
            if prose % 3 != 1:
                # Only visible prose: a number inside a <ref> or a template would change
                # nothing the cleaned article shows.
                cut = min((i for i in (line.find("<ref"), line.find("{{")) if i >= 0),
                          default=len(line))
                head = _NUMBER.sub(lambda m: str(int(m.group(1)) + step), line[:cut], count=1)
                line = head + line[cut:]
            else:
                line = (f"{line} In {2014 + step}, a survey counted {11 * step + prose} "
                        f"local varieties of this kind.")
            prose += 1
        out.append(line)
    return "\n".join(out)


def write_constructed(out: Path, articles: int) -> Path:
    """A history file with the constructed revisions of Pear (and ``articles`` dump pages)."""
    base = [r for r in iter_revisions(REAL[1])]
    if articles:
        pages = [r for r in iter_latest(SAMPLE_DUMP) if r.text.count("\n\n") >= 4
                 and not r.text.lstrip().lower().startswith("#redirect")][:articles]
        base += pages
    parts = [HEAD]
    for rev in base:
        text = rev.text
        revs = []
        if rev.page.id != 24278:  # a dump page: its real text first, dated before the first cut
            revs.append(_revision(rev.id, "2014-12-01T00:00:00Z", text))
        for n, (when, step) in enumerate(EDITS, start=1):
            text = constructed_revision(text, step)
            revs.append(_revision(rev.id * 10 + n, when, text))
        parts.append(f"<page><title>{escape(rev.page.title)}</title><ns>0</ns>"
                     f"<id>{rev.page.id}</id>{''.join(revs)}</page>")
    path = out / "sources" / "constructed.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts) + "</mediawiki>", encoding="utf-8")
    return path


def _revision(rid: int, when: str, text: str) -> str:
    return (f"<revision><id>{rid}</id><timestamp>{when}</timestamp><contributor>"
            f"<username>freshwiki-constructed</username><id>0</id></contributor>"
            f'<text xml:space="preserve">{escape(text)}</text></revision>')


def table(items: list[Any], scorer: str) -> list[dict[str, Any]]:
    """Mean, 95% CI and n per snapshot x type for one scorer."""
    mine = [i for i in items if i.scorer == scorer]
    if scorer == "growover-hit":
        mine = retrieval_scored(mine)
    rows = []
    for g in summarize(mine, by=("snapshot", "type")):
        rows.append({"snapshot": g.key[0], "type": g.key[1], "n": g.n, "mean": g.mean,
                     "ci": [g.ci.low, g.ci.high] if g.ci else None})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--name", default="growover-pear")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/growover")
    parser.add_argument("--articles", type=int, default=0,
                        help="Also use N articles of the enwiki dump slice (constructed edits).")
    parser.add_argument("--kinds", default="qa,dialogue")
    parser.add_argument("--systems", default="vanilla,ralm,ralm-best,rilm")
    parser.add_argument("--limit", type=int, default=None, help="Samples per run (tiny runs).")
    parser.add_argument("--titles", default="", help="Only these articles (comma-separated).")
    parser.add_argument("--judge", action="store_true",
                        help="Check undecided sentence pairs with the model (more calls); "
                        "without, those sentences are left out and recorded as skips.")
    args = parser.parse_args()

    settings = load_settings({"model": args.model}).settings
    args.out.mkdir(parents=True, exist_ok=True)
    sources = [*REAL, write_constructed(args.out, args.articles)]
    kinds = [k for k in args.kinds.split(",") if k]
    cuts = [dt.datetime.combine(dt.date.fromisoformat(c), dt.time.max, tzinfo=dt.UTC)
            for c in CUTS]
    root = datasets_dir(settings.home) / args.name
    encoder = Embedder.default(settings)
    started = time.perf_counter()

    def progress(what: str, done: int, total: int | None) -> None:
        print(f"\r{what}: {done}/{total or '?'}", end="", file=sys.stderr, flush=True)

    async def build() -> Dataset:
        llm = open_llm(args.model, settings=settings)
        try:
            return await build_dataset(
                root, sources, llm=llm, model_spec=args.model, encoder=encoder, cuts=cuts,
                judge=LLMJudge(llm) if args.judge else None,
                kinds=kinds,  # type: ignore[arg-type]
                titles={t.strip() for t in args.titles.split(",") if t.strip()} or None,
                progress=progress, embedder=encoder)
        finally:
            await llm.aclose()

    dataset = asyncio.run(build())
    build_s = time.perf_counter() - started
    print(file=sys.stderr)
    systems = [s for s in args.systems.split(",") if s in system_names()]
    results: dict[str, Any] = {"dataset": str(root), "snapshots": [
        s.to_dict() for s in dataset.snapshots], "build_s": round(build_s, 1), "runs": []}
    store_path = default_results_path(settings)
    for kind in kinds:
        if not list(GrowOver(dataset, kind=kind).samples()):
            continue
        for system in systems:
            t0 = time.perf_counter()
            summary = asyncio.run(run_evaluation(
                "growover", system=system, model=args.model, judge="none", limit=args.limit,
                benchmark_options={"path": str(root), "kind": kind}, settings=settings))
            with ResultsStore(store_path) as store:
                items = store.load_run(summary.info.run_id).items
            scorers = sorted({i.scorer for i in items})
            results["runs"].append({
                "system": system, "kind": kind, "run_id": summary.info.run_id,
                "seconds": round(time.perf_counter() - t0, 1),
                "failures": len(summary.failures),
                "tables": {s: table(items, s) for s in scorers}})
    (args.out / "growover.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    lines = [f"# GrowOVER: {args.name} ({args.model})", "",
             "| snapshot | pages | QA initial/unchanged/new/changed | dialogues i/u/n | skips |",
             "| --- | --- | --- | --- | --- |"]
    for s in dataset.snapshots:
        c = s.counts
        lines.append(f"| {s.label} | {c.get('pages')} | " + "/".join(
            str(c.get(f"qa_{t}", 0)) for t in ("initial", "unchanged", "new", "changed"))
            + " | " + "/".join(str(c.get(f"dialogue_{t}", 0))
                               for t in ("initial", "unchanged", "new"))
            + f" | {c.get('skips')} |")
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
    lines += ["", "Text from Wikipedia, CC BY-SA 4.0 (plus constructed revisions, see the "
              "script's docstring)."]
    (args.out / "growover.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"build {build_s:.0f} s; results in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
