"""Benchmarks and scorers by name: the built-ins as a table, plug-ins by decorator or entry point.

The table maps each built-in name to the ``"module:attr"`` of its factory; the module is
imported only when that name is first looked up (see :class:`freshwiki.plugins.Registry`), so
this module imports none of the benchmark packages and they import nothing from it. A
third-party package adds its own through the ``freshwiki.benchmarks`` / ``freshwiki.scorers``
entry-point groups, or a ``FRESHWIKI_PLUGINS`` module through :func:`register_benchmark` /
:func:`register_scorer`. A benchmark's analysis (its report sections) is found the same way,
by the benchmark's name: :data:`BUILTIN_ANALYSES`, :func:`register_benchmark_analysis` or the
``freshwiki.benchmark_analyses`` group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.plugins import Registry, UnknownNameError
from freshwiki.results import AnalysisFactory
from freshwiki.seams import Benchmark, BenchmarkFactory, Scorer, ScorerFactory

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

_CHAT = "freshwiki.benchmarks.chat_accuracy"
_CLAIMS = "freshwiki.benchmarks.claim_verification"
_LATENCY = "freshwiki.benchmarks.chat_latency"
_GROWOVER = "freshwiki.benchmarks.growover"
_HELLOFRESH = "freshwiki.benchmarks.hellofresh"
_SIMULATED = "freshwiki.benchmarks.simulated_chat"
_CONTRADICT = "freshwiki.benchmarks.wikicontradict"

BUILTIN_BENCHMARKS: Mapping[str, str] = {
    "chat_accuracy": f"{_CHAT}:chat_accuracy_benchmark",
    "chat_latency": f"{_LATENCY}:chat_latency_benchmark",
    "claim_verification": f"{_CLAIMS}:claim_verification_benchmark",
    "growover": f"{_GROWOVER}:growover_benchmark",
    "hellofresh-edits": f"{_HELLOFRESH}:edits_factory",
    "hellofresh-notes": f"{_HELLOFRESH}:notes_factory",
    "simulated-chat": f"{_SIMULATED}:simulated_chat_benchmark",
    "wikicontradict": f"{_CONTRADICT}:wikicontradict_benchmark",
}
"""Built-in benchmark name -> ``"module:attr"`` of its factory."""

BUILTIN_SCORERS: Mapping[str, str] = {
    "chat-accuracy": f"{_CHAT}:labelled_scorer",
    "chat-accuracy-rules": f"{_CHAT}:rule_scorer",
    "chat-factuality": f"{_SIMULATED}:factuality_scorer",
    "chat-informational": f"{_SIMULATED}:informational_scorer",
    "chat-natural": f"{_SIMULATED}:natural_scorer",
    "chat-non-repetitive": f"{_SIMULATED}:non_repetitive_scorer",
    "chat-relevant": f"{_SIMULATED}:relevant_scorer",
    "chat-temporally-correct": f"{_SIMULATED}:temporally_correct_scorer",
    "claim-verdict": f"{_CLAIMS}:verdict_scorer",
    "growover-bleu": f"{_GROWOVER}:bleu_scorer",
    "growover-em": f"{_GROWOVER}:em_scorer",
    "growover-f1": f"{_GROWOVER}:f1_scorer",
    "growover-hit": f"{_GROWOVER}:hit_scorer",
    "hellofresh-correct": f"{_HELLOFRESH}:correct_scorer",
    "wikicontradict-judge": f"{_CONTRADICT}:judge_scorer_factory",
    "wikicontradict-match": f"{_CONTRADICT}:match_scorer",
}
"""Built-in scorer name -> ``"module:attr"`` of its factory."""

BUILTIN_ANALYSES: Mapping[str, str] = {
    "chat_accuracy": f"{_CHAT}.analysis:ChatAccuracyAnalysis",
    "chat_latency": f"{_LATENCY}.analysis:ChatLatencyAnalysis",
    "claim_verification": f"{_CLAIMS}.analysis:ClaimVerificationAnalysis",
    "growover": f"{_GROWOVER}.analysis:GrowOverAnalysis",
    "hellofresh-edits": f"{_HELLOFRESH}.analysis:HelloFreshAnalysis",
    "hellofresh-notes": f"{_HELLOFRESH}.analysis:HelloFreshAnalysis",
    "wikicontradict": f"{_CONTRADICT}.analysis:WikiContradictAnalysis",
}
"""Built-in benchmark name -> ``"module:attr"`` of its analysis (see :mod:`freshwiki.results`):
what its runs add to reports. A benchmark without one gets the generic report only."""


class UnknownBenchmarkError(UnknownNameError):
    """A benchmark name nobody provides."""


class UnknownScorerError(UnknownNameError):
    """A scorer name nobody provides."""


BENCHMARKS: Registry[BenchmarkFactory] = Registry(
    "benchmark", "freshwiki.benchmarks", BUILTIN_BENCHMARKS, UnknownBenchmarkError)
SCORERS: Registry[ScorerFactory] = Registry(
    "scorer", "freshwiki.scorers", BUILTIN_SCORERS, UnknownScorerError)
ANALYSES: Registry[AnalysisFactory] = Registry(
    "benchmark analysis", "freshwiki.benchmark_analyses", BUILTIN_ANALYSES)


def register_benchmark(name: str) -> Callable[[BenchmarkFactory], BenchmarkFactory]:
    """Register a benchmark factory under ``name`` (decorator)."""
    return BENCHMARKS.register(name)


def benchmark_names() -> list[str]:
    """Every benchmark name available, sorted."""
    return BENCHMARKS.names()


def load_benchmark(
    name: str, settings: Settings, options: Mapping[str, Any] | None = None
) -> Benchmark:
    """Build the benchmark named ``name``.

    Raises:
        UnknownBenchmarkError: naming the known benchmarks.
    """
    return BENCHMARKS.get(name)(settings, options or {})


def register_scorer(name: str) -> Callable[[ScorerFactory], ScorerFactory]:
    """Register a scorer factory under ``name`` (decorator), so ``--scorer NAME`` finds it."""
    return SCORERS.register(name)


def scorer_names() -> list[str]:
    """Every scorer name available, sorted."""
    return SCORERS.names()


def load_scorer(name: str, judge: LLM | None) -> Scorer:
    """Build the scorer named ``name``.

    Raises:
        UnknownScorerError: naming the known scorers.
    """
    return SCORERS.get(name)(judge)


def register_benchmark_analysis(name: str) -> Callable[[AnalysisFactory], AnalysisFactory]:
    """Register the analysis of benchmark ``name`` (decorator): its report sections.

    A plug-in benchmark brings its own report this way, from its own folder; the report
    finds it by the run's benchmark name.
    """
    return ANALYSES.register(name)


def benchmark_analysis(name: str) -> AnalysisFactory | None:
    """The analysis registered for benchmark ``name``, or ``None`` when it has none."""
    return ANALYSES.get(name) if name in ANALYSES.names() else None
