"""Runs for the leaderboard and transfer tests, committed through the real store API.

Scores are chosen so every mean, rank and τ is easy to check by hand (the tests spell the
arithmetic out). Sample metadata is shaped like the real benchmarks': GrowOVER samples carry
``snapshot`` (and ``type``, ``title``), HelloFresh samples ``period`` (a month) and ``label``,
WikiContradict samples neither.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.evaluation import ResultsStore, RunInfo
from freshwiki.llm import Usage

T0 = dt.datetime(2024, 4, 1, 12, 0, tzinfo=dt.UTC)
SNAPSHOTS = ("2024-01-01", "2024-02-01", "2024-03-01")
MODEL = "local:qwen2.5-coder-1.5b"
GROWOVER_DATASET = {"path": "/data/growover/demo", "kind": "qa", "samples": 12,
                    "snapshots": list(SNAPSHOTS), "templates": "t1",
                    "dataset_hash": "9f2c" + "0" * 60}
GROWOVER_SCORERS = ["growover-f1", "growover-em", "growover-hit"]

# F1 per snapshot and question q1..q4 (None: not answered; "fail": generation failed).
RALM = {SNAPSHOTS[0]: [1, 1, 0.5, 0], SNAPSHOTS[1]: [1, 0.5, 0.5, 0],
        SNAPSHOTS[2]: [1, 1, 1, 0]}
VANILLA = {SNAPSHOTS[0]: [0.5, 0.5, 0, 0], SNAPSHOTS[1]: [1, 1, 0.5, 0.5],
           SNAPSHOTS[2]: [0.5, 0, 0, 0]}
RILM: dict[str, list[float | str | None]] = {
    SNAPSHOTS[0]: [1, 1, 1, 0.5], SNAPSHOTS[1]: [1, 0, "fail", "fail"],
    SNAPSHOTS[2]: [None, None, None, None]}


@dataclass
class Run:
    """A run to commit: its identity and its answers per (sample, template)."""

    run_id: str
    benchmark: str
    system: str
    config: dict[str, Any]
    answers: list[tuple[Sample, str, dict[str, float]]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    model: str = MODEL
    label: str = ""

    def info(self) -> RunInfo:
        return RunInfo(run_id=self.run_id, benchmark=self.benchmark, system=self.system,
                       model=self.model, config=self.config, code_version="0.1.0 (git abc1234)",
                       model_hashes={"model": "cc324af0"}, created_at=T0, updated_at=T0,
                       label=self.label or f"{self.system}/{self.model}")


def growover_sample(snapshot: str, k: int) -> Sample:
    kinds = ("unchanged", "changed", "new", "unchanged")
    return Sample(id=f"{snapshot}:q{k}", input=f"question {k} as of {snapshot}?",
                  targets=(f"answer {k}",),
                  metadata={"kind": "qa", "type": kinds[k - 1], "snapshot": snapshot,
                            "snapshot_number": SNAPSHOTS.index(snapshot),
                            "title": f"Article {k}", "instance": f"i{k}",
                            "snapshot_type": f"{snapshot} {kinds[k - 1]}"})


def growover_run(run_id: str, system: str, f1: Mapping[str, Sequence[float | str | None]],
                 *, snapshots: Sequence[str] = SNAPSHOTS) -> Run:
    """A GrowOVER QA run: F1 as given, EM = 1 where F1 is 1, hit = 1 where F1 > 0."""
    run = Run(run_id, "growover", system, {
        "benchmark": "growover", "dataset": GROWOVER_DATASET, "system": system,
        "templates": ["qa"], "scorers": GROWOVER_SCORERS, "limit": None,
        "breakdowns": ["type", "snapshot", "snapshot_type"], "model_spec": MODEL})
    for snapshot in snapshots:
        for k, value in enumerate(f1[snapshot], start=1):
            sample = growover_sample(snapshot, k)
            if value == "fail":
                run.failures.append((sample.id, "qa"))
            elif value is not None:
                v = float(value)
                run.answers.append((sample, "qa", {"growover-f1": v,
                                                   "growover-em": float(v == 1.0),
                                                   "growover-hit": float(v > 0)}))
    return run


def hellofresh_run(run_id: str, system: str, correct: Mapping[str, Sequence[int]]) -> Run:
    """A HelloFresh notes run on months: per month, p1 correct (1) or not (0) per note."""
    run = Run(run_id, "hellofresh-notes", system, {
        "benchmark": "hellofresh-notes",
        "dataset": {"path": "/home/u/notes/balanced-month-seed0.jsonl",
                    "sha256": "5e11" + "0" * 60, "samples": 6, "control_seed": 0,
                    "period": "month"},
        "templates": ["p1"], "scorers": ["hellofresh-correct"], "limit": None})
    for month, values in correct.items():
        for k, value in enumerate(values, start=1):
            gold = "yes" if k % 2 else "no"
            sample = Sample(id=f"note-{month}-{k}", input="Is this note helpful?",
                            targets=(gold,), metadata={"period": month, "label": gold,
                                                       "vote_quartile": "q1"})
            run.answers.append((sample, "p1", {"hellofresh-correct": float(value)}))
    return run


def wikicontradict_run(run_id: str, system: str, sha: str, judge: Sequence[float],
                       match: Sequence[float]) -> Run:
    """A WikiContradict run on the dataset with content hash ``sha`` (no periods)."""
    run = Run(run_id, "wikicontradict", system, {
        "benchmark": "wikicontradict",
        "dataset": {"path": "/data/wikicontradict/WikiContradict.json", "sha256": sha,
                    "samples": len(judge)},
        "templates": ["1"], "scorers": ["wikicontradict-judge", "wikicontradict-match"],
        "limit": None})
    for k, (j, m) in enumerate(zip(judge, match, strict=True), start=1):
        sample = Sample(id=f"wc{k}", input="Which is right?", targets=("both",),
                        metadata={"contradiction": "explicit" if k % 2 else "implicit"})
        run.answers.append((sample, "1", {"wikicontradict-judge": j,
                                          "wikicontradict-match": m}))
    return run


def commit(store: ResultsStore, run: Run, *, only: Sequence[str] | None = None,
           text: str = "answer") -> None:
    """Commit ``run`` as the runner would: the run row, each output, then its scores.

    Args:
        store: Where to commit.
        run: The run.
        only: Commit only answers whose sample id starts with one of these (a partial run).
        text: Output text prefix (a different one makes the same answers differ).
    """
    store.open_run(run.info())
    for index, (sample, template, scores) in enumerate(run.answers):
        if only is not None and not sample.id.startswith(tuple(only)):
            continue
        store.commit_output(run.run_id, sample, template,
                            Output(f"{text} to {sample.id}", usage=Usage(40, 5),
                                   latency_s=0.25, model=run.model,
                                   trace={"retrieved": [f"p{index}"]}),
                            sample_index=index)
        for scorer, value in scores.items():
            store.commit_score(run.run_id, sample.id, template, scorer,
                               Score(value, label="right" if value == 1 else None,
                                     explanation=f"{scorer} {value}"))
    for sample_id, template in run.failures:
        if only is not None and not sample_id.startswith(tuple(only)):
            continue
        store.record_failure(run.run_id, sample_id, template, "respond",
                             TimeoutError("model server timed out"))


def growover_runs() -> tuple[Run, Run, Run]:
    """ralm, vanilla and rilm on the three snapshots (rilm fails twice, then stops)."""
    return (growover_run("a1b2c3d4e5f6", "ralm", RALM),
            growover_run("b2c3d4e5f6a1", "vanilla", VANILLA),
            growover_run("c3d4e5f6a1b2", "rilm", RILM))
