#!/usr/bin/env python
"""Benchmark edit labelling throughput (revisions/s) on a long history stream.

Run from the repository root::

    .venv/bin/python experiments/edit_labelling.py [--revisions N] [--repeats R] [--seed S]

Input: a ``pages-meta-history`` XML stream built in a temp dir from the real history
``../shared/data/wikipedia/histories/article-pear-0.10.xml`` (the 26 kB, 30-paragraph Pear
article of 2014). Its one real revision is the start of each page; every following revision
is a perturbation of the previous one, drawn with ``random.Random(seed)``, in the mix a real
history has: a sentence added to a random paragraph (often kept, sometimes reverted by the
next revision to the exact earlier text), a sentence of a paragraph removed, a typo fix,
a category change (markup only), a null revision. Pages of 200 revisions each, so
page boundaries and pending-edit flushes happen too.

Measured in the same run, on the same file, best of R:

* ``read`` (the anchor): :func:`freshwiki.corpus.iter_revisions` over the stream, nothing
  else: the floor any labeller that reads the dump stands on.
* ``label``: :func:`freshwiki.changes.edits.label_history` (reading, cleaning every
  revision's wikitext, paragraph diffs, revert detection, labels), records consumed.

Printed: revisions/s of both, and the ratio label/read (how many times slower than merely
reading the stream labelling is). Tests never assert on time; this script is the figure.
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape

from _provenance import data_provenance, write_result
from freshwiki.changes.edits import LabelReport, label_history
from freshwiki.config import load_settings
from freshwiki.corpus import iter_revisions

ROOT = Path(__file__).resolve().parents[1]
RESULTS_PATH = ROOT / "experiments" / "results" / "edit_labelling.json"
SOURCE = load_settings().settings.data_dir / "wikipedia" / "histories" / "article-pear-0.10.xml"
PAGE_SIZE = 200
SENTENCES = [
    "Pear orchards in the region were expanded considerably during the late nineteenth century.",
    "Several local cultivars were lost when the old nurseries closed after the war years.",
    "The fruit was also pressed for a sweet syrup that was sold at markets across the valley.",
    "Growers reported that late frosts damaged the blossom in more than one season that decade.",
]


def perturb(text: str, rng: random.Random, history: list[str]) -> str:
    """One realistic next revision of ``text``."""
    roll = rng.random()
    paragraphs = text.split("\n\n")
    prose = [i for i, p in enumerate(paragraphs) if len(p) > 200 and p[0].isalpha()]
    if roll < 0.15 and len(history) >= 2:
        return history[-2]  # the previous edit reverted: identity revert
    if roll < 0.55:
        i = rng.choice(prose)
        paragraphs[i] = paragraphs[i] + " " + rng.choice(SENTENCES)
    elif roll < 0.70:
        i = rng.choice(prose)
        sentences = re.split(r"(?<=\.) ", paragraphs[i])
        if len(sentences) > 2:
            del sentences[rng.randrange(len(sentences))]
        paragraphs[i] = " ".join(sentences)
    elif roll < 0.80:
        i = rng.choice(prose)
        paragraphs[i] = paragraphs[i].replace(" the ", " teh ", 1)
    elif roll < 0.92:
        return text + f"\n[[Category:Pears {rng.randrange(100)}]]"
    return "\n\n".join(paragraphs)


def build_stream(target: Path, revisions: int, seed: int) -> Path:
    base = next(iter_revisions(SOURCE))
    rng = random.Random(seed)
    rev_id = 1_000_000
    parts = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n']
    for page in range(0, revisions, PAGE_SIZE):
        parts.append(f"<page><title>Pear {page // PAGE_SIZE}</title><ns>0</ns>"
                     f"<id>{page + 1}</id>\n")
        history = [base.text]
        parent: int | None = None
        for n in range(min(PAGE_SIZE, revisions - page)):
            text = history[-1] if n == 0 else perturb(history[-1], rng, history)
            history.append(text)
            history = history[-3:]
            stamp = f"2015-{1 + n // 28 % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:00:00Z"
            who = (f"<ip>192.0.2.{n % 250}</ip>" if rng.random() < 0.3
                   else f"<username>Editor{n % 37}</username><id>{n % 37 + 1}</id>")
            parts.append(
                f"<revision><id>{rev_id}</id>"
                + (f"<parentid>{parent}</parentid>" if parent else "")
                + f"<timestamp>{stamp}</timestamp><contributor>{who}</contributor>"
                + f"<comment>edit {n}</comment>"
                + f'<text xml:space="preserve">{escape(text)}</text></revision>\n')
            parent, rev_id = rev_id, rev_id + 1
        parts.append("</page>\n")
    parts.append("</mediawiki>\n")
    target.write_text("".join(parts), encoding="utf-8")
    return target


def best_of(repeats: int, run: object) -> tuple[float, object]:
    assert callable(run)
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--revisions", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stream = build_stream(Path(tmp) / "pear-history.xml", args.revisions, args.seed)
        size_mb = stream.stat().st_size / 1e6

        def read() -> int:
            return sum(1 for _ in iter_revisions(stream))

        def label() -> LabelReport:
            report = LabelReport()
            for _ in label_history([stream], report=report):
                pass
            return report

        read(), label()  # warm-up: imports, caches, page cache
        read_s, count = best_of(args.repeats, read)
        label_s, report = best_of(args.repeats, label)
    assert isinstance(report, LabelReport) and count == report.revisions
    read_rate, label_rate = args.revisions / read_s, args.revisions / label_s
    print(f"stream: {args.revisions:,} revisions, {args.revisions // PAGE_SIZE} pages, "
          f"{size_mb:.1f} MB of XML (built from {SOURCE.name}, seed {args.seed})")
    print(f"read  (iter_revisions, anchor): {read_s:8.3f} s  {read_rate:10,.0f} revisions/s")
    print(f"label (label_history)         : {label_s:8.3f} s  {label_rate:10,.0f} revisions/s")
    print(f"ratio label/read: {label_rate / read_rate:.3f} "
          f"(labelling is {read_rate / label_rate:.1f}x slower than reading)")
    reasons = Counter(report.discarded)
    print(f"labels: {report.accepted} accepted, {report.rejected} rejected, "
          f"{sum(reasons.values())} discarded {dict(reasons.most_common())}")
    path = write_result(RESULTS_PATH, {
        "revisions": args.revisions, "pages": args.revisions // PAGE_SIZE, "repeats":
        args.repeats, "seed": args.seed, "xml_mb": round(size_mb, 2),
        "read_s": read_s, "label_s": label_s,
        "read_revisions_per_s": read_rate, "label_revisions_per_s": label_rate,
        "ratio_label_over_read": label_rate / read_rate,
        "labels": {"accepted": report.accepted, "rejected": report.rejected,
                   "discarded": dict(reasons.most_common())},
    }, data=data_provenance(
        {"real": 1 / args.revisions, "constructed": 1 - 1 / args.revisions},
        sample="n/a (no trained part; a speed figure)",
        figure="measured (best of the repeats)",
        sources=f"one real revision ({SOURCE.name}, ../shared/data/wikipedia/histories); "
                "every later revision a seeded rule-made edit of the one before",
        shares_of="revisions"))
    print(f"results: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
