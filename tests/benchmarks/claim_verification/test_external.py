"""Public sets in the external format: read strictly, filtered, identified, run without a model.

The rows are ``external_claims.jsonl`` beside this file, written for these tests (not taken
from any public set).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import benchmark_analysis
from freshwiki.benchmarks.claim_verification import (
    ClaimsError,
    ExternalClaims,
    claim_verification_benchmark,
    read_external,
)
from freshwiki.benchmarks.claim_verification.analysis import (
    constant_rows,
    majority_label,
    run_rows,
    supports_scores,
)
from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, evaluate
from freshwiki.llm import LLM
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems.claim_verifier import ClaimVerifierSystem

FIXTURE = Path(__file__).with_name("external_claims.jsonl")


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def write(tmp_path: Path, records: list[Any], raw: str | None = None) -> Path:
    path = tmp_path / "claims.jsonl"
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    path.write_text(raw if raw is not None else text, encoding="utf-8")
    return path


def bench(settings: Settings, **options: Any) -> Any:
    return claim_verification_benchmark(settings, {"external_path": str(FIXTURE), **options})


def test_the_rows_are_read_in_file_order() -> None:
    read = read_external(FIXTURE)
    assert [r["id"] for r in read] == [r["id"] for r in rows()]
    assert read[2]["title"] == "" and read[0]["question"] is None


def _without(row: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != field}


@pytest.mark.parametrize(("change", "line", "field", "needle"), [
    (lambda r: r.__setitem__(2, _without(r[2], "evidence")), 3, "evidence", "missing"),
    (lambda r: r[1].__setitem__("claim", 7), 2, "claim", "non-empty string"),
    (lambda r: r[0].__setitem__("claim", "  "), 1, "claim", "non-empty string"),
    (lambda r: r[3].__setitem__("label", "SUPPORTED"), 4, "label", "unknown label"),
    (lambda r: r[4].__setitem__("id", r[0]["id"]), 5, "id", "duplicate id"),
    (lambda r: r.__setitem__(1, _without(r[1], "title")), 2, "title", "missing"),
    (lambda r: r[5].__setitem__("question", 3), 6, "question", "non-empty string or null"),
    (lambda r: r.__setitem__(0, _without(r[0], "question")), 1, "question", "missing"),
    (lambda r: r[2].__setitem__("source", "github"), 3, "source", "an object"),
    (lambda r: r.__setitem__(3, ["not", "an", "object"]), 4, "(row)", "JSON object"),
    (lambda r: r.__setitem__(1, '{"id": "x", "claim": '), 2, "(row)", "not JSON"),
])
def test_a_malformed_row_is_named_by_file_line_and_field(
    tmp_path: Path, change: Any, line: int, field: str, needle: str,
) -> None:
    records: list[Any] = rows()
    change(records)
    path = write(tmp_path, records)
    with pytest.raises(ClaimsError) as caught:
        read_external(path)
    message = str(caught.value)
    assert str(path) in message and f"line {line}," in message
    assert f"field {field!r}" in message and needle in message
    assert "external_sets.py build" in (caught.value.hint or "")


def test_blank_lines_are_skipped_and_an_empty_file_is_refused(tmp_path: Path) -> None:
    records = rows()
    path = write(tmp_path, [], raw=json.dumps(records[0]) + "\n\n" + json.dumps(records[1]))
    assert len(read_external(path)) == 2
    with pytest.raises(ClaimsError, match="no rows"):
        read_external(write(tmp_path, [], raw="\n"))
    with pytest.raises(ClaimsError, match="no external claims file"):
        read_external(tmp_path / "absent.jsonl")


def test_an_unbuilt_set_names_the_rebuild_command(settings: Settings) -> None:
    with pytest.raises(ClaimsError) as caught:
        claim_verification_benchmark(settings, {"external": "no_such_set"})
    assert "no_such_set" in str(caught.value)
    assert ("python experiments/external_sets.py build no_such_set --source DIR"
            in (caught.value.hint or ""))


@pytest.mark.parametrize(("options", "needle"), [
    ({"external": "climate_fever"}, "not both"),
    ({"kinds": "real-draft"}, "kinds choose among the project's claims"),
    ({"data_dir": "/tmp"}, "data_dir choose among"),
    ({"split": "dev"}, "has no split 'dev'"),
])
def test_options_that_do_not_fit_a_public_set_are_refused(
    settings: Settings, options: dict[str, str], needle: str,
) -> None:
    with pytest.raises(ClaimsError, match=needle):
        bench(settings, **options)


def test_split_and_ids_choose_the_rows_and_samples_carry_the_evidence(
    settings: Settings,
) -> None:
    test = bench(settings)
    assert isinstance(test, ExternalClaims)
    assert {s.id for s in test.samples()} == {r["id"] for r in rows() if r["split"] == "test"}
    assert {s.id for s in bench(settings, split="train").samples()} == {
        "fixture:bridge-length", "fixture:bridge-opened"}
    assert len(list(bench(settings, split="all").samples())) == 6
    chosen = bench(settings, split="all", ids="fixture:derny-built,fixture:bridge-opened")
    assert {s.id for s in chosen.samples()} == {"fixture:derny-built", "fixture:bridge-opened"}
    by_id = {s.id: s for s in bench(settings, split="all").samples()}
    derny = by_id["fixture:derny-built"]
    assert derny.input == "The Derny was first built in 1938."
    (document,) = derny.documents
    assert document.title == "Derny" and document.text.endswith("first built in 1938.")
    assert by_id["fixture:liverwort-family"].documents[0].title == ""
    # No question: the claim is the query; a question is the query when there is one.
    assert test.render(derny, "claim").query == derny.input
    family = by_id["fixture:liverwort-family"]
    assert test.render(family, "claim").query == "Which family is Clasmatocolea in?"
    with pytest.raises(ClaimsError, match="no template"):
        test.render(derny, "answer")


def test_describe_counts_labels_and_the_hash_ignores_labels(
    settings: Settings, tmp_path: Path,
) -> None:
    described = bench(settings, split="all").describe()
    assert described["claims"] == 6 and described["set"] == "fixture"
    assert described["labels"] == {"SUPPORTS": 2, "REFUTES": 2, "NOT ENOUGH INFO": 2}
    assert str(FIXTURE.parent) not in json.dumps(described)
    records = rows()
    base = bench(settings, external_path=str(write(tmp_path, records))).dataset_hash
    records[0]["label"] = "REFUTES"
    relabelled = bench(settings, external_path=str(write(tmp_path, records)))
    assert relabelled.dataset_hash == base
    records[0]["evidence"] = records[0]["evidence"].replace("1938", "1939")
    assert bench(settings, external_path=str(write(tmp_path, records))).dataset_hash != base


async def test_the_predicate_verifier_runs_through_the_runner_without_a_model(
    settings: Settings, tmp_path: Path,
) -> None:
    benchmark = bench(settings, split="all")
    llm = LLM(ScriptedBackend([]))  # any model call would fail: the rules call none
    system = ClaimVerifierSystem(llm, verifier="predicate", today=dt.date(2026, 11, 24))
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(benchmark, system, llm=llm, store=store,
                                 scorers=benchmark.scorers(None), model_spec="scripted:test",
                                 concurrency=1)
        again = await evaluate(benchmark, system, llm=llm, store=store,
                               scorers=benchmark.scorers(None), model_spec="scripted:test")
        assert again.new_outputs == 0 and again.info.run_id == summary.info.run_id
        run = store.load_run(summary.info.run_id)
    assert summary.complete == 6 and not summary.failures
    verdicts = {i.sample_id: i.label for i in run.items}
    # The rules state the 1938 claim (value, subject and "first built" in one sentence) and
    # the word-for-word copy; they never refute, so the 1951 claim is NOT ENOUGH INFO.
    assert verdicts == {"fixture:derny-built": "SUPPORTS",
                        "fixture:liverwort-family": "SUPPORTS",
                        "fixture:derny-wrong-year": "NOT ENOUGH INFO",
                        "fixture:liverwort-colour": "NOT ENOUGH INFO",
                        "fixture:bridge-length": "NOT ENOUGH INFO",
                        "fixture:bridge-opened": "NOT ENOUGH INFO"}
    items, verdict_rows = run_rows(run)
    s = supports_scores(items, verdict_rows)
    assert s["n"] == 6 and s["called SUPPORTS"] == 2
    assert s["SUPPORTS precision"][0] == 1.0 and s["SUPPORTS recall"][0] == 1.0
    assert s["REFUTES recall"][0] == 0.0 and s["not supported called SUPPORTS"][0] == 0.0
    assert s["accuracy"][0] == pytest.approx(4 / 6)
    low, high = s["SUPPORTS precision"][1:]
    assert 0 < low < 1.0 and high == pytest.approx(1.0)  # two claims: a wide interval
    factory = benchmark_analysis("claim_verification")
    assert factory is not None
    (section,) = factory().report_sections([run], ["fixture"])
    assert section.context["verifiers"][0].label == "fixture (predicate)"


def test_the_baselines_say_one_verdict_for_every_claim() -> None:
    items = [{"id": r["id"], "label": r["label"]} for r in rows()]
    # A tie for the most frequent label goes away from SUPPORTS.
    assert majority_label(items) == "NOT ENOUGH INFO"
    assert majority_label(items[:3]) == "SUPPORTS"
    always = supports_scores(items, constant_rows(items, "SUPPORTS"))
    assert always["SUPPORTS precision"][0] == pytest.approx(2 / 6)
    assert always["SUPPORTS recall"][0] == 1.0
    assert always["not supported called SUPPORTS"][0] == 1.0
    never = supports_scores(items, constant_rows(items, "NOT ENOUGH INFO"))
    assert never["called SUPPORTS"] == 0 and never["SUPPORTS recall"][0] == 0.0
    assert never["verdicts by gold label"]["REFUTES"] == {
        "SUPPORTS": 0, "REFUTES": 0, "NOT ENOUGH INFO": 2}
