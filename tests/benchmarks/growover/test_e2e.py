"""End to end through the real CLI: build from the real Pear history (plus one constructed
revision) with the real SmolLM2 weights, then ``freshwiki eval growover --system ralm``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from freshwiki.benchmarks.growover import TYPES, Dataset
from freshwiki.corpus import iter_revisions
from freshwiki.evaluation import ResultsStore

pytestmark = pytest.mark.e2e

EXE = Path(sys.executable).with_name("freshwiki")
ADDED = "In 2015, a survey counted 48 local varieties of this kind."


def constructed(shared_data: Path, out: Path) -> Path:
    """Pear as of 2015-06-01: the real 2014 text with the first number of the first prose
    paragraph raised by one (a changed fact) and one sentence appended to it (new)."""
    (rev,) = list(iter_revisions(shared_data / "wikipedia/histories/article-pear-0.10.xml"))
    lines = rev.text.split("\n")

    def visible(line: str) -> str:  # the prose before any reference or template
        return line.split("<ref")[0].split("{{")[0]

    k = next(i for i, line in enumerate(lines)
             if len(line) > 200 and line[:1].isalpha() and re.search(r"\d", visible(line)))
    head = visible(lines[k])
    lines[k] = (re.sub(r"\d+", lambda m: str(int(m.group(0)) + 1), head, count=1)
                + lines[k][len(head):] + " " + ADDED)
    path = out / "pear-2015.xml"
    path.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">'
        "<siteinfo><sitename>Wikipedia</sitename><namespaces><namespace key=\"0\" />"
        "</namespaces></siteinfo><page><title>Pear</title><ns>0</ns><id>24278</id>"
        "<revision><id>900000001</id><timestamp>2015-06-01T12:00:00Z</timestamp>"
        "<contributor><username>constructed</username><id>0</id></contributor>"
        f'<text xml:space="preserve">{escape(chr(10).join(lines))}</text></revision>'
        "</page></mediawiki>", encoding="utf-8")
    return path


def test_growover_build_and_eval_with_smollm2(smollm2_path: Path, shared_data: Path,
                                              _isolated_home: Path, tmp_path: Path) -> None:
    histories = shared_data / "wikipedia/histories"
    sources = [histories / "article-pear.xml", histories / "article-pear-0.10.xml",
               histories / "article-pyrus.xml", constructed(shared_data, tmp_path)]
    env = {**os.environ, "FRESHWIKI_N_THREADS": "1"}
    build = [str(EXE), "growover", "build", *map(str, sources), "--name",
             "e2e", "--cuts", "2014-12-31,2015-06-30", "--kinds", "qa", "--model",
             "local:smollm2-135m", "--no-judge", "--json"]  # the fast path, to keep CI short
    proc = subprocess.run(build, capture_output=True, text=True, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [(s["label"], s["complete"]) for s in report["snapshots"]] == [
        ("2014-12-31", True), ("2015-06-30", True)]

    dataset = Dataset.open(_isolated_home / "growover" / "e2e")
    assert dataset.manifest["model"]["spec"] == "local:smollm2-135m"
    for info in dataset.snapshots:
        pages = dataset.pages(info)
        assert set(pages) == {24278}  # Pyrus is a redirect at both cuts: skipped, recorded
        assert any(s.page_id == 9261472 and "redirect" in s.reason for s in dataset.skips(info))
        for inst in dataset.instances(info):
            assert inst.type in TYPES and inst.snapshot == info.label
            # Evidence indices point at exactly the stored texts in this snapshot's article.
            page = pages[inst.page_id]
            assert [page.sentences[i].text for i in inst.evidence.sentences] == list(
                inst.evidence.texts)
    second = dataset.snapshots[1]
    # The appended sentence is new at the second cut: generated from, or skipped with a
    # recorded reason, never silently ignored.
    new_sentence = next(i for i, s in enumerate(dataset.pages(second)[24278].sentences)
                        if s.text == ADDED)
    made = [i for i in dataset.instances(second) if new_sentence in i.evidence.sentences]
    skipped = [s for s in dataset.skips(second) if s.stage == "generate"
               and new_sentence in s.detail.get("sentences", [])]
    assert made or skipped

    evaluate = [str(EXE), "eval", "growover", "--system", "ralm", "--model",
                "local:smollm2-135m", "--judge", "none", "--limit", "3",
                "--benchmark-option", "name=e2e", "--json"]
    run = subprocess.run(evaluate, capture_output=True, text=True, timeout=1800, env=env)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        results = store.load_run(summary["run_id"])
    answered = {i.sample_id for i in results.items}
    hits = {i.sample_id: i for i in results.items if i.scorer == "growover-hit"}
    assert set(hits) == answered and len(answered) == summary["items"]
    assert all(h.label in ("hit", "miss") for h in hits.values())
