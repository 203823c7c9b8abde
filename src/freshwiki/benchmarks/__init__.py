"""Benchmarks as data: a loader of typed samples, prompt templates, and scorers.

The runner (``freshwiki.evaluation``) finds benchmarks and scorers by name in the registries
here; systems (``freshwiki.systems``) turn the rendered :class:`Task` into an :class:`Output`.
"""

from freshwiki.benchmarks._base import (
    Benchmark,
    BenchmarkFactory,
    Dialogue,
    Document,
    Output,
    Respond,
    Sample,
    Score,
    Scorer,
    ScorerFactory,
    Task,
    UnknownBenchmarkError,
    UnknownScorerError,
    benchmark_names,
    load_benchmark,
    load_scorer,
    register_benchmark,
    register_scorer,
    scorer_names,
)

__all__ = [
    "Benchmark",
    "BenchmarkFactory",
    "Dialogue",
    "Document",
    "Output",
    "Respond",
    "Sample",
    "Score",
    "Scorer",
    "ScorerFactory",
    "Task",
    "UnknownBenchmarkError",
    "UnknownScorerError",
    "benchmark_names",
    "load_benchmark",
    "load_scorer",
    "register_benchmark",
    "register_scorer",
    "scorer_names",
]
