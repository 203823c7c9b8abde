"""Claims as samples, their identity, and verdicts through the runner with a scripted model."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import benchmark_analysis, load_benchmark
from freshwiki.benchmarks.claim_verification import (
    ClaimsError,
    claim_verification_benchmark,
)
from freshwiki.benchmarks.claim_verification.analysis import run_rows, scores
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, evaluate, export_runs, read_runs_file
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems.claim_verifier import ClaimVerifierSystem
from tests.benchmarks.claim_verification.conftest import verifier


def bench(settings: Settings, data: tuple[Path, Path], **options: Any) -> Any:
    path, data_dir = data
    return claim_verification_benchmark(
        settings, {"path": str(path), "data_dir": str(data_dir), **options})


def test_the_split_kinds_and_ids_choose_the_claims(settings: Settings,
                                                   claims_data: tuple[Path, Path]) -> None:
    assert [s.id for s in bench(settings, claims_data).samples()] == [
        "real-draft:aaa", "constructed-statement:bbb"]
    assert [s.id for s in bench(settings, claims_data, split="all",
                                kinds="constructed-swap").samples()] == ["constructed-swap:ccc"]
    assert [s.id for s in bench(settings, claims_data, split="all",
                                ids="constructed-swap:ccc,real-draft:aaa").samples()] == [
        "real-draft:aaa", "constructed-swap:ccc"]
    sample = next(bench(settings, claims_data).samples())
    assert sample.input == "The Derny was first built in 1951."
    assert sample.documents[0].text.endswith("first built in 1938.")
    task = bench(settings, claims_data).render(sample, "claim")
    assert task.query == "When was the Derny first built?"


def test_labels_are_not_part_of_the_dataset_identity_but_text_is(
    settings: Settings, claims_data: tuple[Path, Path],
) -> None:
    path, data_dir = claims_data
    base = bench(settings, claims_data).dataset_hash
    rows = path.read_text(encoding="utf-8")
    path.write_text(rows.replace('"label": "REFUTES"', '"label": "NOT ENOUGH INFO"'),
                    encoding="utf-8")
    assert bench(settings, claims_data).dataset_hash == base
    lead = data_dir / "wikipedia" / "topics" / "head_articles_en.json"
    lead.write_text(lead.read_text(encoding="utf-8").replace("1938", "1939"), encoding="utf-8")
    assert bench(settings, claims_data).dataset_hash != base
    assert str(path.parent) not in json.dumps(bench(settings, claims_data).describe())


@pytest.mark.parametrize(("options", "needle"), [
    ({"split": "train"}, "unknown split"),
    ({"kinds": "real-draft,guess"}, "unknown kinds"),
    ({"spilt": "test"}, "no option spilt"),
])
def test_bad_options_are_named(settings: Settings, claims_data: tuple[Path, Path],
                               options: dict[str, str], needle: str) -> None:
    with pytest.raises(ClaimsError, match=needle):
        bench(settings, claims_data, **options)


def test_a_claim_whose_paragraph_is_missing_is_refused(
    settings: Settings, claims_data: tuple[Path, Path],
) -> None:
    _path, data_dir = claims_data
    (data_dir / "wikipedia" / "topics" / "tail_articles_en.json").write_text("{}")
    with pytest.raises(ClaimsError, match="constructed-statement:bbb"):
        bench(settings, claims_data)


def test_the_repository_claims_load_by_name(settings: Settings, shared_data: Path) -> None:
    loaded = load_benchmark("claim_verification", settings, {"data_dir": str(shared_data)})
    # experiments/results/claim_verification.json: 256 test claims, 113 of them real drafts.
    kinds = [s.metadata["kind"] for s in loaded.samples()]
    assert (len(kinds), kinds.count("real-draft")) == (256, 113)


async def test_verdicts_are_stored_scored_resumed_and_exported(
    settings: Settings, claims_data: tuple[Path, Path], tmp_path: Path,
) -> None:
    benchmark = bench(settings, claims_data, split="all")
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        llm = LLM(ScriptedBackend([verifier] * 10))
        system = ClaimVerifierSystem(llm, verifier="legacy-full", today=dt.date(2026, 11, 24))
        summary = await evaluate(benchmark, system, llm=llm, store=store,
                                 scorers=benchmark.scorers(None), model_spec="scripted:test",
                                 concurrency=1)
        again = await evaluate(benchmark, system, llm=llm, store=store,
                               scorers=benchmark.scorers(None), model_spec="scripted:test")
        assert again.new_outputs == 0 and again.info.run_id == summary.info.run_id
        run = store.load_run(summary.info.run_id)
        export_runs(store, tmp_path / "claims.jsonl.gz", [summary.info.run_id])
    assert read_runs_file(tmp_path / "claims.jsonl.gz")[1]["outputs"] == 3
    assert summary.info.config["system_config"] == {"verifier": "legacy-full",
                                                    "today": "2026-11-24"}
    verdicts = {i.sample_id: (i.label, i.value) for i in run.items}
    # The scripted model REFUTES the 1951 claim and SUPPORTS the others; both SUPPORTS are
    # right (the numbers guard passes: 1938 is in the lead, the other claim has none).
    assert verdicts == {"real-draft:aaa": ("REFUTES", 1.0),
                        "constructed-statement:bbb": ("SUPPORTS", 1.0),
                        "constructed-swap:ccc": ("SUPPORTS", 1.0)}
    items, rows = run_rows(run)
    s = scores(items, rows)
    # 2 SUPPORTS predicted, both gold SUPPORTS; 1 REFUTES, gold REFUTES; no NEI at all.
    assert (s["SUPPORTS"]["predicted"], s["SUPPORTS"]["gold"]) == (2, 2)
    assert s["SUPPORTS"]["precision"][0] == 1.0 and s["REFUTES"]["recall"][0] == 1.0
    assert s["NOT ENOUGH INFO"]["gold"] == 0
    assert s["real wrong drafts not SUPPORTS"][0] == 1.0  # the one wrong draft was caught
    assert s["verdicts by kind"]["real-draft"] == {"SUPPORTS": 0, "REFUTES": 1,
                                                   "NOT ENOUGH INFO": 0, "n": 1}
    factory = benchmark_analysis("claim_verification")
    assert factory is not None
    (section,) = factory().report_sections([run], ["scripted"])
    (row,) = section.context["verifiers"]
    assert row.label == "scripted (legacy-full)" and row.n == 3 and row.accuracy[0] == 1.0


async def test_the_number_guard_turns_an_unfounded_supports_into_not_enough_info(
    settings: Settings, claims_data: tuple[Path, Path], tmp_path: Path,
) -> None:
    benchmark = bench(settings, claims_data, ids="real-draft:aaa")
    llm = LLM(ScriptedBackend([lambda m: '{"verdict": "SUPPORTS", "passages": [1], '
                               '"reason": "yes"}']))
    system = ClaimVerifierSystem(llm, verifier="legacy-full", today=dt.date(2026, 11, 24))
    output = await system.respond(benchmark.render(next(benchmark.samples()), "claim"))
    # 1951 is not in the lead, so the legacy guard withholds the SUPPORTS.
    assert output.text == "NOT ENOUGH INFO" and "1951" in output.trace["rationale"]
    assert output.trace["calls"] == 1
