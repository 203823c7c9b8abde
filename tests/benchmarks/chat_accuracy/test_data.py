"""The chat evaluation set as a benchmark: options, FalseQA texts, and a path-free identity."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from freshwiki.benchmarks import load_benchmark
from freshwiki.benchmarks.chat_accuracy import (
    ChatEvalError,
    chat_accuracy_benchmark,
    default_path,
)
from freshwiki.config import Settings
from tests.benchmarks.chat_accuracy.conftest import FALSEQA_TEXT


def ids(settings: Settings, **options: object) -> list[str]:
    return [s.id for s in chat_accuracy_benchmark(settings, options).samples()]


def test_the_default_kinds_leave_out_conflicts_and_falseqa_without_a_clone(
    settings: Settings, chat_eval: Path,
) -> None:
    assert ids(settings, path=str(chat_eval)) == ["a1", "f1", "b1", "p1"]
    assert ids(settings, path=str(chat_eval), kinds="conflict") == ["c1"]
    assert ids(settings, path=str(chat_eval), split="dev") == ["d1"]


def test_a_clone_adds_falseqa_items_with_their_text_kept_out_of_the_metadata(
    settings: Settings, chat_eval: Path, falseqa_clone: Path,
) -> None:
    bench = chat_accuracy_benchmark(settings, {"path": str(chat_eval),
                                               "falseqa": str(falseqa_clone)})
    samples = {s.id: s for s in bench.samples()}
    assert list(samples) == ["a1", "f1", "b1", "p1", "q1"]
    assert samples["q1"].input == FALSEQA_TEXT
    assert "question" not in samples["q1"].metadata  # stored and exported: no licence
    assert bench.describe()["falseqa"] is True


def test_a_clone_at_another_commit_is_refused_by_the_hash(
    settings: Settings, chat_eval: Path, falseqa_clone: Path,
) -> None:
    (falseqa_clone / "dataset" / "test.csv").write_text("question\nA\nB\n", encoding="utf-8")
    with pytest.raises(ChatEvalError, match="sha256 differs"):
        chat_accuracy_benchmark(settings, {"path": str(chat_eval),
                                           "falseqa": str(falseqa_clone)})


def test_stride_counts_every_kind_before_the_kinds_are_chosen(
    settings: Settings, chat_eval: Path,
) -> None:
    # Every second of a1 f1 b1 p1 c1 (d1 is dev, q1 needs a clone): a1 b1 c1.
    assert ids(settings, path=str(chat_eval), stride=2, kinds="answerable,absent_subject,"
               "conflict") == ["a1", "b1", "c1"]
    assert ids(settings, path=str(chat_eval), stride=2) == ["a1", "b1"]
    assert ids(settings, path=str(chat_eval), stride=2, kinds="conflict") == ["c1"]


@pytest.mark.parametrize(("options", "needle"), [
    ({"splitt": "test"}, "no option splitt"),
    ({"split": "test9"}, "unknown split"),
    ({"kinds": "answerable,riddle"}, "unknown kinds"),
    ({"stride": "0"}, "stride must be"),
])
def test_bad_options_name_what_is_wrong(settings: Settings, chat_eval: Path,
                                        options: dict[str, str], needle: str) -> None:
    with pytest.raises(ChatEvalError, match=needle):
        chat_accuracy_benchmark(settings, {"path": str(chat_eval), **options})


def test_a_folder_without_questions_is_named(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ChatEvalError, match=r"no questions\.jsonl"):
        chat_accuracy_benchmark(settings, {"path": str(tmp_path)})


def test_the_dataset_is_identified_by_content_not_path(
    settings: Settings, chat_eval: Path, tmp_path: Path,
) -> None:
    moved = tmp_path / "elsewhere" / "chat_eval"
    shutil.copytree(chat_eval, moved)
    here = chat_accuracy_benchmark(settings, {"path": str(chat_eval)})
    there = chat_accuracy_benchmark(settings, {"path": str(moved)})
    assert here.dataset_hash == there.dataset_hash
    assert here.describe() == there.describe()
    assert str(tmp_path) not in json.dumps(here.describe())
    rows = (moved / "questions.jsonl").read_text(encoding="utf-8").replace(
        "motorized bicycle", "motorised bicycle")
    (moved / "questions.jsonl").write_text(rows, encoding="utf-8")
    assert chat_accuracy_benchmark(settings, {"path": str(moved)}).dataset_hash \
        != here.dataset_hash
    # A dev split item changed: not among the test split's items, so the same hash.
    rows = rows.replace("Who paces riders", "Who leads riders")
    (moved / "questions.jsonl").write_text(rows, encoding="utf-8")
    assert chat_accuracy_benchmark(settings, {"path": str(moved), "split": "dev"}) \
        .dataset_hash != chat_accuracy_benchmark(settings, {"path": str(chat_eval),
                                                            "split": "dev"}).dataset_hash


def test_the_registry_finds_the_repository_set_by_default(settings: Settings) -> None:
    folder = default_path()
    assert folder is not None and folder.name == "chat_eval"
    bench = load_benchmark("chat_accuracy", settings, {"split": "test7"})
    # test7: 30 answerable and 8 two-part questions (experiments/data/chat_eval/README.md).
    kinds = [s.metadata["kind"] for s in bench.samples()]
    assert (len(kinds), kinds.count("answerable"), kinds.count("two_part")) == (38, 30, 8)


def test_the_run_id_keeps_the_set_and_the_falseqa_clone_out_of_it(
    settings: Settings, chat_eval: Path, falseqa_clone: Path, tmp_path: Path,
) -> None:
    from freshwiki.evaluation import make_run_id, run_identity
    from freshwiki.llm import LLM
    from freshwiki.llm.backends.scripted import ScriptedBackend
    from freshwiki.systems.vanilla import VanillaSystem

    def run_id(folder: Path, clone: Path) -> str:
        options = {"path": str(folder), "falseqa": str(clone)}
        bench = chat_accuracy_benchmark(settings, options)
        llm = LLM(ScriptedBackend([], model_id="m"))
        return make_run_id(run_identity(bench, VanillaSystem(llm), llm, None, options))

    first = run_id(chat_eval, falseqa_clone)
    moved_set, moved_clone = tmp_path / "a" / "chat_eval", tmp_path / "b" / "FalseQA"
    shutil.copytree(chat_eval, moved_set)
    shutil.copytree(falseqa_clone, moved_clone)
    assert run_id(moved_set, moved_clone) == first  # both moved: the same set-up
    csv = next(moved_clone.rglob("*.csv"))
    csv.write_text(csv.read_text(encoding="utf-8").replace(FALSEQA_TEXT, FALSEQA_TEXT + " x"),
                   encoding="utf-8")
    # A clone whose question differs from the one the set was written on is refused, by row.
    with pytest.raises(ChatEvalError, match=r"row 1 of dataset/test\.csv"):
        run_id(moved_set, moved_clone)
