"""Response-cache files: an answer made on one machine is served, not generated, on another."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from freshwiki.llm import (
    LLM,
    CacheFileError,
    Message,
    ResponseCache,
    ScriptExhaustedError,
    export_responses,
    import_responses,
    read_responses,
)
from freshwiki.llm.backends.scripted import ScriptedBackend
from tests.cli.invoke import run_main

Q = [Message.user("In which year did the Ashford bridge open?")]


async def _answered_cache(path: Path, answer: str = "1901") -> ResponseCache:
    cache = ResponseCache(path)
    llm = LLM(ScriptedBackend([answer]), cache=cache)
    assert (await llm.chat(Q)).text == answer
    return cache


async def test_an_imported_answer_is_served_without_calling_the_model(tmp_path: Path) -> None:
    made = await _answered_cache(tmp_path / "a.sqlite")
    assert export_responses(made, tmp_path / "c.jsonl.gz") == 1
    fresh = ResponseCache(tmp_path / "b.sqlite")
    done = import_responses(fresh, tmp_path / "c.jsonl.gz")
    assert (done.rows, done.added, done.present) == (1, 1, 0)
    # A backend with nothing scripted fails if it is called at all.
    result = await LLM(ScriptedBackend([]), cache=fresh).chat(Q)
    assert (result.text, result.cache_hit) == ("1901", True)
    # Importing again adds nothing; an answer already here is kept.
    assert import_responses(fresh, tmp_path / "c.jsonl.gz").present == 1
    with pytest.raises(ScriptExhaustedError):
        await LLM(ScriptedBackend([]), cache=fresh).chat([Message.user("Another question?")])


async def test_export_keeps_only_the_models_asked_for(tmp_path: Path) -> None:
    cache = await _answered_cache(tmp_path / "a.sqlite")
    (model,) = {row["model"] for row in cache.rows()}
    assert export_responses(cache, tmp_path / "all.jsonl.gz") == 1
    assert export_responses(cache, tmp_path / "one.jsonl.gz", model=model[:4]) == 1
    assert export_responses(cache, tmp_path / "none.jsonl.gz", model="no-such-model") == 0
    assert read_responses(tmp_path / "none.jsonl.gz") == []
    assert not list(tmp_path.glob("*.part"))


def _lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _write(path: Path, lines: list[str]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _edit_row(lines: list[str], **changes: object) -> list[str]:
    record = json.loads(lines[1])
    record["row"].update(changes)
    return [lines[0], json.dumps(record), *lines[2:]]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda ls: ls[:-1], "no end line: the file is cut off"),
        (lambda ls: [ls[0], *ls[2:]], "its end line says 1 rows, the file holds 0"),
        (lambda ls: [ls[0].replace("freshwiki-llm-responses", "freshwiki-runs"), *ls[1:]],
         "line 1: field 'format' is 'freshwiki-runs'"),
        (lambda ls: _edit_row(ls, text=7), "line 2: field 'row.text' is int, expected str"),
        (lambda ls: _edit_row(ls, request="{}"),
         "line 2: field 'row.key' is not the SHA-256 of 'row.request'"),
        (lambda ls: [ls[0], ls[1][:-5], *ls[2:]], "line 2: not JSON"),
    ],
)
async def test_a_damaged_file_names_the_line_and_field_and_imports_nothing(
    tmp_path: Path, damage: object, message: str
) -> None:
    made = await _answered_cache(tmp_path / "a.sqlite")
    export_responses(made, tmp_path / "c.jsonl.gz")
    bad = _write(tmp_path / "bad.jsonl.gz", damage(_lines(tmp_path / "c.jsonl.gz")))  # type: ignore[operator]
    target = ResponseCache(tmp_path / "b.sqlite")
    with pytest.raises(CacheFileError) as info:
        import_responses(target, bad)
    assert message in str(info.value) and str(bad) in str(info.value)
    assert len(target) == 0


async def test_the_cli_exports_and_imports_between_two_homes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "home1", tmp_path / "home2"
    cache = await _answered_cache(first / "cache" / "llm-responses.sqlite")
    cache.close()
    monkeypatch.setenv("FRESHWIKI_HOME", str(first))
    code, out, _ = run_main(["llm", "cache", "export", "--out", str(tmp_path / "c.jsonl.gz")],
                            monkeypatch, capsys)
    assert code == 0 and "exported 1 response(s)" in out
    monkeypatch.setenv("FRESHWIKI_HOME", str(second))
    code, out, _ = run_main(["llm", "cache", "import", str(tmp_path / "c.jsonl.gz")],
                            monkeypatch, capsys)
    assert code == 0 and "imported 1 of 1 response(s)" in " ".join(out.split())
    code, _, err = run_main(["llm", "cache", "import", str(tmp_path / "missing.jsonl.gz")],
                            monkeypatch, capsys)
    assert code != 0 and "no response-cache file at" in " ".join(err.split())


async def test_an_edited_answer_is_not_caught_since_the_key_covers_only_the_request(
    tmp_path: Path,
) -> None:
    # The documented limit of the check: the key proves which request a row answers, not
    # that the answer is the one the model gave.
    made = await _answered_cache(tmp_path / "a.sqlite")
    export_responses(made, tmp_path / "c.jsonl.gz")
    edited = _write(tmp_path / "e.jsonl.gz", _edit_row(_lines(tmp_path / "c.jsonl.gz"),
                                                       text="1903"))
    target = ResponseCache(tmp_path / "b.sqlite")
    assert import_responses(target, edited).added == 1
    assert (await LLM(ScriptedBackend([]), cache=target).chat(Q)).text == "1903"
