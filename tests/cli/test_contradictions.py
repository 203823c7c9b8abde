"""``freshwiki contradictions mine``, end to end through the installed executable.

The real sample dump (no contradiction tag in it: every count is 0), then the same dump with
pages appended from WikiContradict's real tagged paragraphs (one of them with a short history
constructed from its own text), whose export must load as WikiContradict once filled in.
Text from Wikipedia, CC BY-SA 4.0.
"""

from __future__ import annotations

import bz2
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks.wikicontradict import load_wikicontradict
from tests.corpus.contradiction_pages import write_dump

pytestmark = pytest.mark.e2e


def run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("freshwiki")
    return subprocess.run([str(exe), "contradictions", "mine", *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))


@pytest.fixture(scope="module")
def sample(shared_data: Path) -> Path:
    return shared_data / "wikipedia" / "dumps" / "enwiki-pages-articles-sample.xml.bz2"


def test_the_real_sample_dump_has_no_tag_and_says_so(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "candidates.jsonl"
    proc = run(str(sample), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == ""
    lines = proc.stdout.splitlines()
    assert lines[0].endswith(f"{sample}: 0 candidate(s) → {out}")
    # 8 articles hold {{inconsistent citations}} (a citation-format note): cleaned, no tag.
    assert "8 revision(s) mention a contradiction template and were cleaned; 8 of them" \
        in proc.stdout
    for kind in ("Inconsistent", "Self-contradictory", "Contradict-other"):
        assert f"  {kind:<20} 0" in lines
    assert "mining" in proc.stderr  # the progress bar is on stderr


def test_tagged_pages_become_records_ready_for_annotation(
        sample: Path, shared_data: Path, tmp_path: Path) -> None:
    release: list[dict[str, Any]] = json.loads(
        (shared_data / "wikicontradict" / "wikicontradict.json").read_text(encoding="utf-8"))
    two_penny = release[26]  # {{inconsistent|date=May 2020}} after "...second ... stamp,"
    storm, tornadoes = release[98], release[98]["annotationResult"]["paragraphB_information"]
    dump = write_dump(tmp_path / "tagged.xml.bz2", [
        ("Two penny blue", [("2019-01-01T00:00:00Z", two_penny["paragraph_A_clean"]),
                            ("2020-05-02T00:00:00Z", two_penny["paragraph_A"]),
                            ("2020-09-01T00:00:00Z", two_penny["paragraph_A"] + " More.")]),
        (storm["title"], [("2021-07-15T00:00:00Z", storm["paragraph_A"])]),
        ("Tornadoes of 2010", [("2021-01-01T00:00:00Z", tornadoes)]),
        (release[70]["title"], [("2023-12-01T00:00:00Z", release[70]["paragraph_A"])]),
    ], before=bz2.decompress(sample.read_bytes()).decode("utf-8"))
    proc = run(str(dump))  # JSONL on stdout, summary on stderr
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["title"], r["candidate"]["tag_type"]) for r in records] == [
        ("Two penny blue", "Inconsistent"),
        ("October 2010 North American storm complex", "Contradict-other"),
        ("Acne", "Self-contradictory")]
    for kind, count in (("Inconsistent", 1), ("Self-contradictory", 1), ("Contradict-other", 1)):
        assert f"  {kind:<20} {count}" in proc.stderr.splitlines()
    assert "other articles: 1 found" in proc.stderr

    penny, other, acne = records
    assert (penny["tag"], penny["tagDate"], penny["tagReason"]) == (
        "inconsistent|date=May 2020", "May 2020", "")
    history = penny["candidate"]["history"]
    assert penny["candidate"]["revision"]["timestamp"] == "2020-09-01T00:00:00+00:00"
    assert history["first_seen"]["timestamp"] == "2020-05-02T00:00:00+00:00"
    assert (history["revisions_of_page"], history["removed_in"]) == (3, None)
    (found,) = other["candidate"]["others"]
    assert (found["title"], found["status"]) == ("Tornadoes of 2010", "found")
    assert found["passages"][0]["text"] == tornadoes
    assert acne["candidate"]["section_path"] == ["Azelaic acid"]

    # Filled in by an annotator, the records load as WikiContradict items.
    for record in records:
        record.pop("candidate")
        ann = record["annotationResult"]
        ann.update(paragraphA_article=record["title"], paragraphA_information="A says one.",
                   paragraphB_article=record["title"], paragraphB_information="B says two.",
                   question1="How many?", question1_answer1="one", question1_answer2="two",
                   taxonomy=[["Contradict type IV", "Explicit"]])
    filled = tmp_path / "annotated.json"
    filled.write_text(json.dumps(records), encoding="utf-8")
    samples = load_wikicontradict(filled, expected=3)
    assert [s.metadata["tag"] for s in samples] == ["inconsistent", "contradict",
                                                    "Self-contradictory"]


def test_errors_name_the_input(sample: Path, tmp_path: Path) -> None:
    proc = run(str(tmp_path / "missing.xml.bz2"))
    assert proc.returncode == 2 and "missing.xml.bz2" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run(str(sample), "-o", str(tmp_path / "no" / "such" / "out.jsonl"))
    assert proc.returncode == 2 and f"{tmp_path / 'no' / 'such'}" in proc.stderr
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(sample.read_bytes()[:200_000])
    out = tmp_path / "partial.jsonl"
    proc = run(str(cut), "-o", str(out))
    assert proc.returncode == 2 and "cut.xml.bz2" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".*.part"))
