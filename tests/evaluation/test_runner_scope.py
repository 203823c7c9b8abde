"""A benchmark that asks some templates of only some samples (``ScopedTemplates``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from freshwiki.benchmarks import Sample, ScopedTemplates
from freshwiki.evaluation import ResultsStore, evaluate
from freshwiki.llm import LLM, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems.vanilla import VanillaSystem
from tests.systems.testkit import ExactScorer, Tiny


class EvenTerse(Tiny):
    """Tiny, with the terse template asked of even-numbered samples only."""

    def applies(self, sample: Sample, template: str) -> bool:
        return template != "terse" or int(sample.id[1:]) % 2 == 0


def _double(messages: Sequence[Message]) -> str:
    n = int(re.findall(r"What is (\d+) plus", messages[-1].content)[0])
    return f"It is {2 * n}."


async def test_pairs_a_benchmark_refuses_are_neither_run_nor_counted(tmp_path: Path) -> None:
    bench = EvenTerse(6)
    assert isinstance(bench, ScopedTemplates) and not isinstance(Tiny(6), ScopedTemplates)
    backend = ScriptedBackend([_double] * 20)
    llm = LLM(backend)
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(bench, VanillaSystem(llm), llm=llm, store=store,
                                 scorers=[ExactScorer()], model_spec="scripted:test",
                                 templates=["plain", "terse"])
        results = store.load_run(summary.info.run_id)
        # 6 plain + 3 terse (t02, t04, t06): 9 items, all answered, none failed or missing
        assert (summary.items, summary.complete, summary.new_outputs) == (9, 9, 9)
        assert not summary.failures and len(backend.requests) == 9
        terse = sorted(i.sample_id for i in results.items if i.template == "terse")
        assert terse == ["t02", "t04", "t06"]
        assert [(m.template, m.n, m.n_failed) for m in summary.means] == [
            ("plain", 6, 0), ("terse", 3, 0)]
        again = await evaluate(bench, VanillaSystem(llm), llm=llm, store=store,
                               scorers=[ExactScorer()], model_spec="scripted:test",
                               templates=["plain", "terse"])
        assert (again.already_done, again.new_outputs, again.complete) == (9, 0, 9)
