"""Eval sets: parsing, expansion, errors that name file + line + field, and resuming.

Runs use the ``tiny`` benchmark of ``tests.systems.testkit`` and scripted models (JSONL files
of replies), so expected means are read off the scripts and the benchmark's rules.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from freshwiki.config import Settings
from freshwiki.evaluation import (
    EvalSetError,
    ResultsStore,
    load_eval_set,
    read_eval_set,
    run_eval_set,
    summary_rows,
)


@pytest.fixture(autouse=True)
def _testkit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRESHWIKI_PLUGINS", "tests.systems.testkit")


def write(path: Path, text: str) -> Path:
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def script(path: Path, text: str, n: int) -> Path:
    """A scripted model that can answer exactly ``n`` calls (a further call fails the test)."""
    path.write_text("\n".join(json.dumps({"text": text}) for _ in range(n)) + "\n")
    return path


def test_entries_expand_to_the_product_of_benchmarks_systems_and_models(
        tmp_path: Path, settings: Settings) -> None:
    sub = tmp_path / "sets"
    sub.mkdir()
    path = write(sub / "set.toml", """
description = "two models x two systems"

[defaults]
judge = "none"
limit = 2

[[runs]]
benchmark = "tiny"
systems = ["vanilla", "slow"]
models = ["scripted:a.jsonl", "scripted:b.jsonl"]
templates = ["plain", "terse"]

[[runs]]
benchmark = "tiny"
model = "scripted:a.jsonl"
limit = 3
benchmark_options = { n = 4, data = "./data/x.jsonl", home = "{home}/notes/n.jsonl" }
meta = { dataset = "small" }
""")
    eval_set = load_eval_set(path, settings=settings)
    assert eval_set.description == "two models x two systems"
    plan = [(r.system, r.model, r.limit, r.line) for r in eval_set.runs]
    assert plan == [("vanilla", "scripted:a.jsonl", 2, 7), ("vanilla", "scripted:b.jsonl", 2, 7),
                    ("slow", "scripted:a.jsonl", 2, 7), ("slow", "scripted:b.jsonl", 2, 7),
                    ("vanilla", "scripted:a.jsonl", 3, 13)]
    assert all(r.judge is None for r in eval_set.runs)
    assert eval_set.runs[0].templates == ("plain", "terse")
    last = eval_set.runs[-1]
    assert last.templates is None and last.meta == {"dataset": "small"}
    # ./ is relative to the file's folder, not to the working directory (tmp_path).
    assert last.benchmark_options == {
        "n": 4, "data": str(sub / "data" / "x.jsonl"),
        "home": str(settings.home / "notes" / "n.jsonl")}


@pytest.mark.parametrize(("text", "where"), [
    # (file, the line and field the message must name)
    ('[[runs]]\nbenchmark = "tiny"\nsystem = "vanila"\n', ":3: runs[0].system: no system "
     "'vanila'"),
    ('[[runs]]\nbenchmark = "tiny"\n\n[[runs]]\nbenchmark = "tinny"\n',
     ":5: runs[1].benchmark: no benchmark 'tinny'"),
    ('[[runs]]\nbenchmark = "tiny"\noptions = { k = 3 }\n',
     ":3: runs[0].options.k: system 'vanilla' has no option 'k'"),
    ('[[runs]]\nbenchmark = "tiny"\n\n[runs.options]\nk = 3\n',
     ":5: runs[0].options.k: system 'vanilla' has no option 'k'"),
    ('[[runs]]\nbenchmark = "hellofresh-notes"\nbenchmark_options = { bogus = 1 }\n',
     ":3: runs[0].benchmark_options.bogus: benchmark 'hellofresh-notes' has no option "
     "'bogus'"),
    ('[[runs]]\nbenchmark = "tiny"\nlimit = "20"\n', ":3: runs[0].limit: is a string"),
    ('[[runs]]\nbenchmark = "tiny"\ntemplates = "plain"\n', ":3: runs[0].templates: is a "
     "string"),
    ('[[runs]]\nbenchmark = "tiny"\nlimt = 2\n', ":3: runs[0].limt: is not a run field"),
    ('[[runs]]\nbenchmark = "tiny"\ntemplates = ["plain", "loud"]\n',
     ":3: runs[0].templates: benchmark 'tiny' has no template 'loud'"),
    ('[[runs]]\nbenchmark = "tiny"\nscorers = ["tiny-exact", "nope"]\n',
     ":3: runs[0].scorers: no scorer 'nope'"),
    ('[[runs]]\nbenchmark = "tiny"\nmodel = "lokal:qwen"\n',
     ":3: runs[0].model: 'lokal:qwen' names no model backend"),
    ('[defaults]\nsystem = "nope"\n\n[[runs]]\nbenchmark = "tiny"\n',
     ":2: defaults.system: no system 'nope'"),
    ('title = "x"\n[[runs]]\nbenchmark = "tiny"\n', ":1: title: is not an eval-set field"),
    ('[[runs]]\nsystem = "vanilla"\n', ":1: runs[0].benchmark: is missing"),
    ('[[runs]]\nbenchmark = "tiny"\n[[runs]]\nbenchmark = "tiny"\n',
     ":3: runs[1]: repeats the run of the entry at line 1"),
])
def test_bad_input_names_file_line_and_field_before_anything_runs(
        tmp_path: Path, settings: Settings, text: str, where: str) -> None:
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(EvalSetError) as exc:
        read_eval_set(path, settings=settings)
    assert exc.value.message.startswith(str(path) + where), exc.value.message
    assert not (settings.home / "runs" / "runs.sqlite").exists()  # no run was started


def test_a_syntax_error_is_reported_with_the_file(tmp_path: Path, settings: Settings) -> None:
    path = write(tmp_path / "broken.toml", '[[runs]\nbenchmark = "tiny"\n')
    with pytest.raises(EvalSetError, match=r"broken\.toml: not valid TOML.*line 1"):
        load_eval_set(path, settings=settings)


def test_a_set_runs_resumes_and_summarises(tmp_path: Path, settings: Settings) -> None:
    # 2 runs x 2 samples x 1 template = 4 answers: the scripts hold exactly that many replies,
    # so a second pass that asked the models again would fail with ScriptExhaustedError.
    script(tmp_path / "a.jsonl", "It is 2.", 2)
    script(tmp_path / "b.jsonl", "It is 4.", 2)
    path = write(tmp_path / "set.toml", f"""
[defaults]
benchmark = "tiny"
judge = "none"
limit = 2

[[runs]]
models = ["scripted:{tmp_path / 'a.jsonl'}", "scripted:{tmp_path / 'b.jsonl'}"]
label = "{{system}} on {{benchmark}}"
""")
    store = tmp_path / "runs.sqlite"
    first = asyncio.run(run_eval_set(read_eval_set(path, settings=settings), settings=settings,
                                     store_path=store))
    assert [r.summary.new_outputs for r in first] == [2, 2]
    assert first[0].summary.info.label == "vanilla on tiny"
    # tiny's t01 asks 1+1 (target 2), t02 asks 2+2 (target 4): "It is 2." is right on t01
    # only, "It is 4." on t02 only, so each run's exact-match mean is 1/2.
    rows = summary_rows(first)
    assert [(r["scorer"], r["template"], r["n"], r["mean"]) for r in rows] == [
        ("tiny-exact", "plain", 2, 0.5), ("tiny-exact", "plain", 2, 0.5)]
    assert all(r["ci"] is not None and r["ci"][0] <= 0.5 <= r["ci"][1] for r in rows)

    again = asyncio.run(run_eval_set(read_eval_set(path, settings=settings), settings=settings,
                                     store_path=store))
    assert [r.summary.info.run_id for r in again] == [r.summary.info.run_id for r in first]
    assert [(r.summary.new_outputs, r.summary.new_scores, r.summary.already_done)
            for r in again] == [(0, 0, 2), (0, 0, 2)]
    with ResultsStore(store) as s:
        assert len(s.list_runs()) == 2
