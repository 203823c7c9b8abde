"""Benchmarks as data: a loader of typed samples, prompt templates, and scorers.

The runner (``freshwiki.evaluation``) finds benchmarks and scorers by name (``_registry``:
built-ins as a lazy table, plug-ins by decorator, ``FRESHWIKI_PLUGINS`` or entry points);
systems (``freshwiki.systems``) turn the rendered :class:`Task` into an :class:`Output`. The
seam types live in :mod:`freshwiki.seams` and are re-exported here.
"""

from freshwiki.benchmarks._files import file_sha256
from freshwiki.benchmarks._registry import (
    BUILTIN_ANALYSES,
    BUILTIN_BENCHMARKS,
    BUILTIN_SCORERS,
    UnknownBenchmarkError,
    UnknownScorerError,
    benchmark_analysis,
    benchmark_names,
    load_benchmark,
    load_scorer,
    register_benchmark,
    register_benchmark_analysis,
    register_scorer,
    scorer_names,
)
from freshwiki.seams import (
    Benchmark,
    BenchmarkFactory,
    Dialogue,
    Document,
    Output,
    Respond,
    Sample,
    ScopedTemplates,
    Score,
    Scorer,
    ScorerFactory,
    Task,
)

__all__ = [
    "BUILTIN_ANALYSES",
    "BUILTIN_BENCHMARKS",
    "BUILTIN_SCORERS",
    "Benchmark",
    "BenchmarkFactory",
    "Dialogue",
    "Document",
    "Output",
    "Respond",
    "Sample",
    "ScopedTemplates",
    "Score",
    "Scorer",
    "ScorerFactory",
    "Task",
    "UnknownBenchmarkError",
    "UnknownScorerError",
    "benchmark_analysis",
    "benchmark_names",
    "file_sha256",
    "load_benchmark",
    "load_scorer",
    "register_benchmark",
    "register_benchmark_analysis",
    "register_scorer",
    "scorer_names",
]
