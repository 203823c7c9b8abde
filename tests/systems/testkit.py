"""A tiny benchmark, scorers and a slow system for runner tests, also loadable as a plugin.

Importing this module registers benchmark ``tiny``, scorers ``tiny-exact`` and ``tiny-judge``
and system ``slow``; a real ``freshwiki eval`` subprocess gets them with
``FRESHWIKI_PLUGINS=tests.systems.testkit`` (and the repository on ``PYTHONPATH``).

``tiny`` sample ``tNN`` asks "What is N plus N?" with target ``2N``; its metadata says whether
N is even. Answers are scored by hand-checkable rules, so expected means are derived by
reading the rules, not by running the code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from freshwiki.benchmarks import (
    Benchmark,
    Output,
    Sample,
    Score,
    Scorer,
    Task,
    register_benchmark,
    register_scorer,
)
from freshwiki.config import Settings
from freshwiki.llm import LLM, Message
from freshwiki.systems import System, read_options, register_system
from freshwiki.systems.vanilla import VanillaSystem


class ExactScorer:
    """1.0 when the target number is a word of the answer, else 0.0."""

    name = "tiny-exact"

    async def score(self, task: Task, output: Output) -> Score:
        target = task.sample.targets[0]
        hit = target in output.text.replace(".", " ").split()
        return Score(1.0 if hit else 0.0, label="correct" if hit else "incorrect",
                     explanation=f"looked for {target}")


class ConstantScorer:
    """Always ``value``; raises on the samples in ``fail_on`` (failure handling)."""

    def __init__(self, name: str, value: float, fail_on: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.value = value
        self.fail_on = fail_on

    async def score(self, task: Task, output: Output) -> Score:
        if task.sample.id in self.fail_on:
            raise RuntimeError(f"scorer broke on {task.sample.id}")
        return Score(self.value)


class YesJudge:
    """Asks the judge model; 1.0 when its reply starts with "yes"."""

    name = "tiny-judge"

    def __init__(self, judge: LLM) -> None:
        self.judge = judge

    async def score(self, task: Task, output: Output) -> Score:
        result = await self.judge.chat(
            [Message.user(f"Question: {task.sample.input}\nAnswer: {output.text}\nCorrect?")],
            max_tokens=5,
        )
        yes = result.text.strip().lower().startswith("yes")
        return Score(1.0 if yes else 0.0, explanation=result.text)


class Tiny:
    """``n`` arithmetic questions, two templates."""

    name = "tiny"
    templates: tuple[str, ...] = ("plain", "terse")
    default_templates: tuple[str, ...] = ("plain",)
    breakdowns: tuple[str, ...] = ("parity",)

    def __init__(self, n: int = 6) -> None:
        self.n = n

    def describe(self) -> Mapping[str, Any]:
        return {"n": self.n}

    def samples(self) -> Iterator[Sample]:
        for i in range(1, self.n + 1):
            yield Sample(id=f"t{i:02d}", input=f"What is {i} plus {i}?", targets=(str(2 * i),),
                         metadata={"parity": "even" if i % 2 == 0 else "odd"})

    def render(self, sample: Sample, template: str) -> Task:
        if template not in self.templates:
            raise KeyError(template)
        prefix = "Answer with a number only. " if template == "terse" else ""
        return Task(sample=sample, template=template,
                    messages=(Message.user(prefix + sample.input),), query=sample.input,
                    max_tokens=20, temperature=0.0)

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        found: list[Scorer] = [ExactScorer()]
        if judge is not None:
            found.append(YesJudge(judge))
        return found


def tiny(n: int = 6) -> Benchmark:
    """A ``tiny`` benchmark object (for tests that bypass the registry)."""
    return Tiny(n)


@register_benchmark("tiny")
def _tiny(settings: Settings, options: Mapping[str, Any]) -> Benchmark:
    return Tiny(int(options.get("n", 6)))


@register_scorer("tiny-exact")
def _exact(judge: LLM | None) -> Scorer:
    return ExactScorer()


@register_scorer("tiny-judge")
def _judge(judge: LLM | None) -> Scorer:
    if judge is None:
        raise ValueError("tiny-judge needs a judge model")
    return YesJudge(judge)


class SlowSystem(VanillaSystem):
    """``vanilla`` after sleeping ``delay`` seconds, so a subprocess can be killed mid-run.

    The delay is left out of :meth:`describe`: it does not change answers, so a run started
    slow can be resumed fast under the same run id.
    """

    name = "slow"

    def __init__(self, llm: LLM, delay: float) -> None:
        super().__init__(llm)
        self.delay = delay

    async def respond(self, task: Task) -> Output:
        await asyncio.sleep(self.delay)
        return await super().respond(task)


@register_system("slow")
def _slow(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    values = read_options("slow", options, {"delay": 0.0})
    return SlowSystem(llm, values["delay"])
