"""Gate training data: the labelling rule table, counting, prompts, features, and training from
a real results store filled by hand."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.evaluation import ResultsStore, RunInfo
from freshwiki.evaluation._gate_training import (
    Example,
    GateTrainingError,
    collect_examples,
    example_features,
    label_for,
    outcome_of,
    train_gate_from_run,
)
from freshwiki.llm import LLM, FeatureVector, Message
from freshwiki.llm.backends.scripted import ScriptedBackend

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
RUN = "run000000001"

# The rule, written out: every (type, outcome) pair and what it must give.
RULE = [
    ("unchanged", "hit", "reliable"),
    ("unchanged", "miss", None),
    ("changed", "miss", "misleading"),
    ("changed", "hit", None),
    ("new", "miss", "uncertain"),
    ("new", "hit", None),
    ("initial", "hit", None),
    ("initial", "miss", None),
    ("unchanged", "no-retrieval", None),
    ("changed", "no-retrieval", None),
    ("new", "no-retrieval", None),
]


@pytest.mark.parametrize(("kind", "outcome", "label"), RULE)
def test_labelling_rule(kind: str, outcome: str, label: str | None) -> None:
    assert label_for(kind, outcome) == label
    assert label_for(kind.upper(), outcome.upper()) == label  # case does not matter


def test_outcome_comes_from_the_label_else_the_value() -> None:
    assert outcome_of(0.0, "no-retrieval") == "no-retrieval"
    assert outcome_of(1.0, "hit") == "hit" and outcome_of(0.0, "miss") == "miss"
    assert outcome_of(1.0, None) == "hit" and outcome_of(0.0, None) == "miss"


def _info(model_spec: str = "scripted:x") -> RunInfo:
    return RunInfo(run_id=RUN, benchmark="growover", system="ralm", model=model_spec,
                   config={"templates": ["qa"], "scorers": ["growover-hit"], "limit": None,
                           "model_spec": model_spec},
                   code_version="t", model_hashes={"model": "fake"}, created_at=NOW,
                   updated_at=NOW)


# (sample id, type, hit label, answer, kind)
ROWS = [
    ("s01", "unchanged", "hit", "good", "qa"),
    ("s02", "unchanged", "hit", "good", "qa"),
    ("s03", "unchanged", "hit", "good", "qa"),
    ("s04", "unchanged", "miss", "good", "qa"),  # unused
    ("s05", "changed", "miss", "stale", "qa"),
    ("s06", "changed", "miss", "stale", "qa"),
    ("s07", "changed", "miss", "stale", "qa"),
    ("s08", "changed", "hit", "good", "qa"),  # unused
    ("s09", "new", "miss", "unknown", "qa"),
    ("s10", "new", "miss", "unknown", "qa"),
    ("s11", "new", "miss", "unknown", "qa"),
    ("s12", "initial", "hit", "good", "qa"),  # unused
    ("s13", "new", "no-retrieval", "unknown", "qa"),  # unused
    ("s14", "unchanged", "hit", "good", "dialogue"),  # skipped: not QA
]


def _fill(store: ResultsStore, *, record_messages: bool = True,
          model_spec: str = "scripted:x") -> None:
    store.open_run(_info(model_spec))
    for i, (sid, kind, hit, answer, sample_kind) in enumerate(ROWS):
        sample = Sample(id=sid, input=f"question {sid}?", targets=("x",),
                        metadata={"type": kind, "kind": sample_kind})
        trace: dict[str, Any] = {"retrieved": [{"id": f"p-{sid}"}]}
        if record_messages:
            trace["messages"] = [{"role": "user", "content": f"context {sid}\nquestion {sid}?"}]
        store.commit_output(RUN, sample, "qa", Output(answer, trace=trace), sample_index=i)
        store.commit_score(RUN, sid, "qa", "growover-hit",
                           Score(1.0 if hit == "hit" else 0.0, label=hit))
        store.commit_score(RUN, sid, "qa", "growover-f1", Score(0.5))


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = ResultsStore(tmp_path / "runs.sqlite")
    _fill(s)
    return s


def test_collect_labels_qa_samples_and_counts_everything(store: ResultsStore) -> None:
    data = collect_examples(store, RUN[:6])  # a prefix names the run
    assert data.run_id == RUN
    assert [(e.sample_id, e.label) for e in data.examples] == [
        ("s01", "reliable"), ("s02", "reliable"), ("s03", "reliable"),
        ("s05", "misleading"), ("s06", "misleading"), ("s07", "misleading"),
        ("s09", "uncertain"), ("s10", "uncertain"), ("s11", "uncertain")]
    assert data.counts == {"unchanged hit": 3, "unchanged miss": 1, "changed miss": 3,
                           "changed hit": 1, "new miss": 3, "initial hit": 1,
                           "new no-retrieval": 1}
    assert data.skipped == {"dialogue sample": 1}
    assert data.label_counts == {"reliable": 3, "misleading": 3, "uncertain": 3}


def test_a_run_without_hit_scores_is_refused(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.sqlite")
    store.open_run(_info())
    sample = Sample(id="s1", input="q", metadata={"type": "new", "kind": "qa"})
    store.commit_output(RUN, sample, "qa", Output("a"), sample_index=0)
    store.commit_score(RUN, "s1", "qa", "growover-f1", Score(1.0))
    with pytest.raises(GateTrainingError, match="no 'growover-hit' scores") as info:
        collect_examples(store, RUN)
    assert "--system ralm" in str(info.value)


def _scripted_features(messages: Sequence[Message], answer: str) -> list[float]:
    # One cluster per label, a small offset per sample so no two vectors are equal.
    base = {"good": (2.0, 0.0), "stale": (-2.0, 0.0), "unknown": (0.0, 2.0)}[answer]
    offset = int(messages[-1].content.split()[1][1:]) / 100  # "context sNN" -> NN / 100
    return [base[0] + offset, base[1] - offset]


async def test_features_use_the_recorded_prompt_and_the_stored_answer(
    store: ResultsStore,
) -> None:
    backend = ScriptedBackend([], features=_scripted_features, model_id="fake")
    data = collect_examples(store, RUN)
    vectors = await example_features(LLM(backend), store, data)
    assert len(vectors) == 9
    assert backend.feature_requests[0] == (
        (Message.user("context s01\nquestion s01?"),), "good")
    assert [answer for _, answer in backend.feature_requests] == (
        ["good"] * 3 + ["stale"] * 3 + ["unknown"] * 3)
    assert vectors[0].values == (2.01, -0.01)


async def test_without_a_recorded_prompt_the_rebuilder_is_asked(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.sqlite")
    _fill(store, record_messages=False)
    data = collect_examples(store, RUN)
    llm = LLM(ScriptedBackend([], features=_scripted_features, model_id="fake"))
    with pytest.raises(GateTrainingError, match="does not record its prompt"):
        await example_features(llm, store, data)
    asked: list[tuple[str, str]] = []

    def rebuild(example: Example, output: Output) -> list[Message]:
        asked.append((example.sample_id, output.trace["retrieved"][0]["id"]))
        return [Message.user(f"context {example.sample_id}")]

    vectors = await example_features(llm, store, data, rebuild)
    assert len(vectors) == 9 and asked[0] == ("s01", "p-s01")


async def test_train_gate_from_run_end_to_end(store: ResultsStore, tmp_path: Path) -> None:
    llm = LLM(ScriptedBackend([], features=_scripted_features, model_id="fake"))
    progress: list[tuple[int, int]] = []
    training = await train_gate_from_run(store, RUN, llm, holdout=0.0, seed=0,
                                         progress=lambda d, t: progress.append((d, t)))
    gate = training.gate
    assert (gate.feature_kind, gate.model) == ("scripted", "fake")
    assert gate.training["run_id"] == RUN
    assert gate.training["label_counts"] == {"reliable": 3, "misleading": 3, "uncertain": 3}
    assert training.report.n_train == 9 and training.report.n_test == 0
    assert progress[-1] == (9, 9)
    # The clusters are far apart: each cluster centre is classified as its label.
    for values, label in [((2.0, 0.0), "reliable"), ((-2.0, 0.0), "misleading"),
                          ((0.0, 2.0), "uncertain")]:
        probs = gate.probabilities(FeatureVector(values, kind="scripted", model="fake"))
        assert max(probs, key=lambda c: probs[c]) == label


async def test_a_run_the_rule_cannot_use_is_refused(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.sqlite")
    store.open_run(_info())
    sample = Sample(id="s1", input="q", metadata={"type": "initial", "kind": "qa"})
    store.commit_output(RUN, sample, "qa", Output("a"), sample_index=0)
    store.commit_score(RUN, "s1", "qa", "growover-hit", Score(1.0, label="hit"))
    llm = LLM(ScriptedBackend([], model_id="fake"))
    with pytest.raises(GateTrainingError, match="no sample the labelling rule uses") as info:
        await train_gate_from_run(store, RUN, llm)
    assert "initial hit" in str(info.value)


def test_train_gate_command_prints_counts_and_confusion(
    _isolated_home: Path, tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from freshwiki import cli
    from freshwiki.config import load_settings
    from freshwiki.evaluation import default_results_path
    from freshwiki.systems.rilm import CertaintyGate

    script = tmp_path / "script.jsonl"
    script.write_text("")  # features only: no chat call is made
    with ResultsStore(default_results_path(load_settings().settings)) as store:
        _fill(store, model_spec=f"scripted:{script}")
    out = tmp_path / "gate.json"
    # Through the real command tree (its callback resets the settings each invocation).
    result = CliRunner().invoke(cli.app, ["growover", "train-gate", RUN[:5], "--out", str(out),
                                          "--holdout", "0.34", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "unchanged hit" in result.output and "reliable" in result.output
    assert "initial hit" in result.output and "unused" in result.output
    assert "trained on 6, held out 3" in result.output
    assert "confusion" in result.output
    gate = CertaintyGate.load(out)
    assert gate.model == f"script:{script.name}" and gate.training["seed"] == 3
