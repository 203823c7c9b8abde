"""WikiContradict end to end: real data, real templates, a real local model as the judge.

SmolLM2-135M is far too small to judge well; this checks the plumbing (prompt rendering, the
schema-constrained call through llama.cpp, parsing into a Score), not the quality.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from freshwiki.benchmarks import Output, load_benchmark, load_scorer
from freshwiki.benchmarks.wikicontradict import LABELS, VALUES
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore
from freshwiki.llm import open_llm

pytestmark = pytest.mark.e2e


async def test_real_judge_labels_real_tasks(
    smollm2_path: Path, settings: Settings, wikicontradict_path: Path
) -> None:
    bench = load_benchmark("wikicontradict", settings, {"path": str(wikicontradict_path)})
    judge = open_llm("local:smollm2-135m", cache=False)
    scorers = [
        load_scorer("wikicontradict-judge", judge),
        load_scorer("wikicontradict-match", None),
    ]
    sample = next(s for s in bench.samples() if s.id == "wc-044-q1")
    task = bench.render(sample, "5")
    response = "The passages disagree: one says 761 survivors, the other 764."
    try:
        for scorer in scorers:
            score = await scorer.score(task, Output(text=response))
            assert score.label in LABELS
            assert score.value == VALUES[score.label]
            assert score.explanation
    finally:
        await judge.aclose()


def test_revised_templates_through_the_real_cli_and_report(
    smollm2_path: Path, wikicontradict_path: Path, _isolated_home: Path, tmp_path: Path,
) -> None:
    """5.4 on the first two questions runs only on the one with a revision (wc-000-q1; item 1
    has none), answered and judged by the real SmolLM2 weights; then the real report."""
    exe = Path(sys.executable).with_name("freshwiki")
    args = [str(exe), "eval", "wikicontradict", "--system", "vanilla", "--model",
            "local:smollm2-135m", "--judge", "local:smollm2-135m", "--templates", "5.4",
            "--limit", "2", "--benchmark-option", f"path={wikicontradict_path}", "--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["items"], summary["new_outputs"]) == (1, 1)
    assert summary["config"]["dataset"]["revisions"]["questions"] == 40
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        results = store.load_run(summary["run_id"])
    assert {(i.sample_id, i.template, i.scorer) for i in results.items} | {
        (f.sample_id, f.template, f.scorer) for f in results.failures} == {
        ("wc-000-q1", "5.4", "wikicontradict-match"), ("wc-000-q1", "5.4", "wikicontradict-judge")}
    assert all(i.label in ("correct", "incorrect") for i in results.items)
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        output = store.get_output(summary["run_id"], "wc-000-q1", "5.4")
    assert output is not None and output.text.strip()

    out = tmp_path / "report"
    report = subprocess.run([str(exe), "report", summary["run_id"], "--out", str(out)],
                            capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert report.returncode == 0, report.stderr
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "judge local:smollm2-135m: the model under test, grading its own answers" in text
    table = text[text.index("### wikicontradict-match: by template"):]
    table = table[:table.index("### wikicontradict-match: by run")]
    # one answer; item 0 carries no explicit/implicit label, so it counts under "all" only;
    # 5.4 has no partial class
    assert "| **Prompt template 5.4** |" in table and "| n | 1 | — | — |" in table
    assert "| PC |" not in table
