"""Gate training data (GrowOVER §4.1): the labelling rule per (question, document) pair, the
training snapshot and the later ones, features of the prompt alone, and training from the rows
of a real results store filled by hand."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.evaluation import ResultsStore, RunInfo
from freshwiki.llm import LLM, FeatureVector, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems.rilm.training import (
    Example,
    GateTrainingError,
    PairRow,
    collect_examples,
    label_for,
    pair_rows,
    train_gate_from_rows,
)

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
]


@pytest.mark.parametrize(("kind", "outcome", "label"), RULE)
def test_labelling_rule(kind: str, outcome: str, label: str | None) -> None:
    assert label_for(kind, outcome) == label
    assert label_for(kind.upper(), outcome.upper()) == label  # case does not matter


def _info(model_spec: str = "scripted:x") -> RunInfo:
    return RunInfo(run_id=RUN, benchmark="growover", system="ralm", model=model_spec,
                   config={"templates": ["qa"], "scorers": ["growover-hit"], "limit": None,
                           "model_spec": model_spec, "benchmark_options": {"kind": "qa"},
                           # Options that only locate data sit outside the run's identity.
                           "data_location": {"options": {"path": "/data/growover"}}},
                   code_version="t", model_hashes={"model": "fake"}, created_at=NOW,
                   updated_at=NOW)


SNAPSHOTS = {"2015-06": 0, "2015-12": 1, "2016-06": 2}
# (sample id, snapshot, type, retrieved documents, evidence passages, kind). Documents whose id
# starts "e-" hold the evidence; the features below cluster by that first letter.
ROWS: list[tuple[str, str, str, list[str] | None, list[str], str]] = [
    ("a0", "2015-06", "initial", ["e-a0", "x0"], ["e-a0"], "qa"),    # before the training month
    ("u1", "2015-12", "unchanged", ["e-u1", "x1"], ["e-u1"], "qa"),  # reliable + unused
    ("u2", "2015-12", "unchanged", ["x2", "e-u2"], ["e-u2"], "qa"),  # unused + reliable
    ("c1", "2015-12", "changed", ["y1", "e-c1"], ["e-c1"], "qa"),    # misleading + unused
    ("c2", "2015-12", "changed", ["y2", "y3"], ["e-c2"], "qa"),      # misleading x 2
    ("n1", "2015-12", "new", ["z1", "z2"], ["e-n1"], "qa"),          # uncertain x 2
    ("g1", "2015-12", "unchanged", ["e-g1"], ["e-g1"], "dialogue"),  # another kind
    ("L1", "2016-06", "unchanged", ["e-L1", "w1"], ["e-L1"], "qa"),  # later: reliable
    ("L2", "2016-06", "changed", ["y4", "y5"], ["e-L2"], "qa"),      # later: misleading x 2
    ("L3", "2016-06", "new", None, ["e-L3"], "qa"),                  # nothing retrieved
]


def _fill(store: ResultsStore, *, model_spec: str = "scripted:x") -> None:
    store.open_run(_info(model_spec))
    for i, (sid, snap, kind, docs, evidence, sample_kind) in enumerate(ROWS):
        sample = Sample(id=sid, input=f"question {sid}?", targets=("x",),
                        metadata={"type": kind, "kind": sample_kind, "snapshot": snap,
                                  "snapshot_number": SNAPSHOTS[snap],
                                  "evidence_passages": evidence})
        trace: dict[str, Any] = {} if docs is None else {"retrieved": [{"id": d} for d in docs]}
        store.commit_output(RUN, sample, "qa", Output("answer", trace=trace), sample_index=i)
        store.commit_score(RUN, sid, "qa", "growover-hit",
                           Score(1.0 if docs and set(evidence) <= set(docs) else 0.0))
        store.commit_score(RUN, sid, "qa", "growover-f1", Score(0.5))


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    s = ResultsStore(tmp_path / "runs.sqlite")
    _fill(s)
    return s


def rows(store: ResultsStore, run_id: str = RUN) -> list[PairRow]:
    """What the train-gate command passes in: the stored run's rows."""
    return pair_rows(store.load_run(run_id))


def test_the_rows_of_a_stored_run_are_its_hit_scored_answers(store: ResultsStore) -> None:
    got = rows(store, RUN[:6])  # a prefix names the run
    assert [r.sample_id for r in got] == [r[0] for r in ROWS]  # sample order, f1 not repeated
    by_id = {r.sample_id: r for r in got}
    assert by_id["u2"].retrieved == ("x2", "e-u2") and by_id["L3"].retrieved is None
    assert by_id["c1"].metadata["type"] == "changed"


def test_plain_rows_need_no_store() -> None:
    # u: unchanged, e holds its evidence (reliable), x does not (unused); c: changed, y lacks
    # its evidence z (misleading).
    plain = [PairRow("u", "qa", {"type": "unchanged", "snapshot": "s1",
                                 "evidence_passages": ["e"]}, ("e", "x")),
             PairRow("c", "qa", {"type": "changed", "snapshot": "s1",
                                 "evidence_passages": ["z"]}, ("y",))]
    data = collect_examples(plain, run_id="r")
    assert (data.run_id, data.snapshot) == ("r", "s1")
    assert [(e.sample_id, e.passage_id, e.label) for e in data.examples] == [
        ("u", "e", "reliable"), ("c", "y", "misleading")]
    assert data.counts == {"unchanged hit": 1, "unchanged miss": 1, "changed miss": 1}


def test_pairs_of_the_first_update_snapshot_train_and_later_ones_test(
    store: ResultsStore,
) -> None:
    data = collect_examples(rows(store), run_id=RUN)
    assert data.run_id == RUN and data.snapshot == "2015-12" and data.kind == "qa"
    assert [(e.sample_id, e.passage_id, e.label) for e in data.examples] == [
        ("u1", "e-u1", "reliable"), ("u2", "e-u2", "reliable"),
        ("c1", "y1", "misleading"), ("c2", "y2", "misleading"), ("c2", "y3", "misleading"),
        ("n1", "z1", "uncertain"), ("n1", "z2", "uncertain")]
    assert [(e.sample_id, e.passage_id, e.label) for e in data.later] == [
        ("L1", "e-L1", "reliable"), ("L2", "y4", "misleading"), ("L2", "y5", "misleading")]
    assert data.later_snapshots == ["2016-06"]
    assert data.counts == {"unchanged hit": 2, "unchanged miss": 2, "changed miss": 3,
                           "changed hit": 1, "new miss": 2}
    assert data.skipped == {"dialogue sample": 1, "sample of an earlier snapshot": 1,
                            "sample without retrieved documents": 1}
    assert data.label_counts == {"reliable": 2, "misleading": 3, "uncertain": 2}


def test_another_snapshot_or_kind_can_be_asked_for(store: ResultsStore) -> None:
    late = collect_examples(rows(store), run_id=RUN, snapshot="2016-06")
    assert [e.sample_id for e in late.examples] == ["L1", "L2", "L2"] and late.later == ()
    with pytest.raises(GateTrainingError, match="no snapshot '2017-01'") as info:
        collect_examples(rows(store), run_id=RUN, snapshot="2017-01")
    assert "2015-06, 2015-12, 2016-06" in (info.value.hint or "")
    with pytest.raises(GateTrainingError, match="no changed or new dialogue"):
        collect_examples(rows(store), run_id=RUN, kind="dialogue")


def test_a_run_without_hit_scores_is_refused(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.sqlite")
    store.open_run(_info())
    sample = Sample(id="s1", input="q", metadata={"type": "new", "kind": "qa"})
    store.commit_output(RUN, sample, "qa", Output("a"), sample_index=0)
    store.commit_score(RUN, "s1", "qa", "growover-f1", Score(1.0))
    with pytest.raises(GateTrainingError, match="no 'growover-hit' scores") as info:
        collect_examples(rows(store), run_id=RUN)
    assert "--system ralm" in str(info.value)


CENTRES = {"e": (2.0, 0.0), "x": (2.0, 0.0), "y": (-2.0, 0.0), "w": (-2.0, 0.0),
           "z": (0.0, 2.0)}


def _prompt(example: Example) -> list[Message]:
    return [Message.user(f"doc {example.passage_id} | question {example.sample_id}?")]


def _features(messages: Sequence[Message], answer: str) -> list[float]:
    assert answer == "", "the gate reads the state after the prompt, before any answer"
    doc = messages[-1].content.split()[1]
    centre = CENTRES[doc[0]]
    offset = len(messages[-1].content) / 1000  # no two vectors equal
    return [centre[0] + offset, centre[1] - offset]


async def test_train_on_one_snapshot_and_report_the_later_ones(store: ResultsStore) -> None:
    backend = ScriptedBackend([], features=_features, model_id="fake")
    progress: list[tuple[int, int]] = []
    training = await train_gate_from_rows(rows(store), LLM(backend), run_id=RUN,
                                          prompt_for=_prompt, seed=0,
                                          progress=lambda d, t: progress.append((d, t)))
    gate = training.gate
    assert (gate.feature_kind, gate.model) == ("scripted", "fake")
    assert gate.training["snapshot"] == "2015-12" and gate.training["kind"] == "qa"
    assert gate.training["label_counts"] == {"reliable": 2, "misleading": 3, "uncertain": 2}
    assert training.report.n_train == 7 and training.report.n_test == 0
    # 7 training pairs, then the 3 later ones: every feature request is a one-document prompt
    assert progress[-1] == (10, 10)
    assert backend.feature_requests[0] == ((Message.user("doc e-u1 | question u1?"),), "")
    # out of sample: the later pairs sit on the training clusters, so all three are right
    assert training.later is not None and training.later.n_test == 3
    assert training.later.accuracy == 1.0
    assert training.later_by_snapshot["2016-06"].n_test == 3
    assert gate.training["later"]["snapshots"] == ["2016-06"]
    for values, label in [((2.0, 0.0), "reliable"), ((-2.0, 0.0), "misleading"),
                          ((0.0, 2.0), "uncertain")]:
        probs = gate.probabilities(FeatureVector(values, kind="scripted", model="fake"))
        assert max(probs, key=lambda c: probs[c]) == label


async def test_a_snapshot_the_rule_cannot_use_is_refused(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "runs.sqlite")
    store.open_run(_info())
    sample = Sample(id="s1", input="q", metadata={
        "type": "changed", "kind": "qa", "snapshot": "2015-12", "snapshot_number": 1,
        "evidence_passages": ["e-s1"]})
    store.commit_output(RUN, sample, "qa", Output("a", trace={"retrieved": [{"id": "e-s1"}]}),
                        sample_index=0)
    store.commit_score(RUN, "s1", "qa", "growover-hit", Score(1.0, label="hit"))
    llm = LLM(ScriptedBackend([], model_id="fake"))
    with pytest.raises(GateTrainingError, match="no qa pair the labelling rule uses") as info:
        await train_gate_from_rows(rows(store), llm, run_id=RUN, prompt_for=_prompt)
    assert "changed hit" in str(info.value)


def test_train_gate_command_prints_counts_and_both_reports(
    _isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    import freshwiki.cli.growover
    from freshwiki import cli
    from freshwiki.config import load_settings
    from freshwiki.evaluation import default_results_path
    from freshwiki.systems.rilm import CertaintyGate

    built_with: list[Any] = []

    class Prompts:
        """Stands in for PairPrompts, which would open the GrowOVER dataset."""

        def __init__(self, *args: Any) -> None:
            built_with.append(args[1:])

        def __call__(self, example: Example) -> list[Message]:
            return _prompt(example)

        def close(self) -> None:
            pass

    monkeypatch.setattr(freshwiki.cli.growover, "PairPrompts", Prompts)
    script = tmp_path / "script.jsonl"
    script.write_text("")  # features only: no chat call is made
    with ResultsStore(default_results_path(load_settings().settings)) as store:
        _fill(store, model_spec=f"scripted:{script}")
    out = tmp_path / "gate.json"
    # Through the real command tree (its callback resets the settings each invocation).
    result = CliRunner().invoke(cli.app, ["growover", "train-gate", RUN[:5], "--out", str(out),
                                          "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "snapshot 2015-12" in result.output and "unchanged hit" in result.output
    assert "changed hit" in result.output and "unused" in result.output
    assert "trained on 7 pairs" in result.output
    # The benchmark is rebuilt from the run's options, the locating ones included.
    assert built_with == [("growover", {"kind": "qa", "path": "/data/growover"})]
    assert "later snapshots 2016-06 (out of sample): 3 pairs" in result.output
    assert "--option gate=" in result.output
    gate = CertaintyGate.load(out)
    assert gate.model == f"script:{script.name}" and gate.training["seed"] == 3
    bad = CliRunner().invoke(cli.app, ["growover", "train-gate", RUN[:5], "--out", str(out),
                                       "--kind", "chat"])
    # cli.main turns a FreshwikiError into "error: ..." and exit 2; the app raises it
    assert bad.exit_code != 0 and "--kind must be qa or dialogue" in str(bad.exception)
