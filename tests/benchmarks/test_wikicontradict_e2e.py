"""WikiContradict end to end: real data, real templates, a real local model as the judge.

SmolLM2-135M is far too small to judge well; this checks the plumbing (prompt rendering, the
schema-constrained call through llama.cpp, parsing into a Score), not the quality.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.benchmarks import Output, load_benchmark, load_scorer
from freshwiki.benchmarks.wikicontradict import LABELS, VALUES
from freshwiki.config import Settings
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
