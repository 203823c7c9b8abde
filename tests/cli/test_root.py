"""The `freshwiki` command, in-process for options and as a real subprocess end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freshwiki.cli import app

runner = CliRunner()


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed console script the way a user does."""
    exe = Path(sys.executable).with_name("freshwiki")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=600,
        env={**os.environ, **(env or {})},
    )


def test_config_show_json_reports_sources(_isolated_home: Path) -> None:
    result = runner.invoke(app, ["config", "show", "--json"], env={"FRESHWIKI_N_CTX": "1024"})
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["n_ctx"] == {"value": "1024", "source": "env FRESHWIKI_N_CTX"}
    assert data["home"]["value"] == str(_isolated_home)
    assert data["model"]["value"] == "local:qwen2.5-coder-1.5b"


def test_global_flags_override_environment(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--home", str(tmp_path / "x"), "config", "show", "--json"])
    data = json.loads(result.output)
    assert data["home"] == {"value": str(tmp_path / "x"), "source": "command line"}


def test_empty_question_is_a_usage_error() -> None:
    result = runner.invoke(app, ["ask", "   "])
    assert result.exit_code == 2
    assert "question is empty" in result.output


def test_models_list_shows_every_named_model(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--models-dir", str(tmp_path), "models", "list", "--json"])
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert set(rows) == {"qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"}
    assert all(r["status"] == "missing" for r in rows.values())


@pytest.mark.e2e
def test_unknown_model_is_a_clean_error_not_a_traceback() -> None:
    proc = run_cli("ask", "--model", "local:gpt-17", "hello")
    assert proc.returncode == 2
    assert "unknown model 'gpt-17'" in proc.stderr and "smollm2-135m" in proc.stderr
    assert "freshwiki models install" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.e2e
def test_missing_weights_tell_how_to_install(tmp_path: Path) -> None:
    proc = run_cli("--models-dir", str(tmp_path), "ask", "-m", "local:smollm2-135m", "hi")
    assert proc.returncode == 2
    assert "not installed" in proc.stderr
    assert "freshwiki models install smollm2-135m" in proc.stderr


@pytest.mark.e2e
def test_bad_spec_and_bad_env_are_clean_errors() -> None:
    proc = run_cli("ask", "--model", "gpt4", "hi")
    assert proc.returncode == 2 and "KIND:MODEL" in proc.stderr
    proc = run_cli("config", "show", env={"FRESHWIKI_TIMEOUT": "soon"})
    assert proc.returncode == 2 and "FRESHWIKI_TIMEOUT" in proc.stderr


@pytest.mark.e2e
def test_ask_streams_an_answer_from_a_real_model(smollm2_path: Path) -> None:
    proc = run_cli("ask", "--no-retrieve", "--model", "local:smollm2-135m", "--max-tokens", "24",
                   "What is the capital of France?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    assert "Sources:" not in proc.stdout
    assert "completion tokens" in proc.stderr
    # The second run is answered from the persistent cache in FRESHWIKI_HOME.
    again = run_cli("ask", "--no-retrieve", "--model", "local:smollm2-135m", "--max-tokens",
                    "24", "What is the capital of France?")
    assert again.stdout == proc.stdout and "from cache" in again.stderr
    (row,) = json.loads(run_cli("llm", "calls", "--json").stdout)
    assert row["model"].startswith("smollm2-135m@") and row["calls"] == 2
    assert row["cache_hits"] == 1 and row["completion_tokens"] > 0


@pytest.mark.e2e
def test_unreachable_server_via_cli_is_typed_and_bounded() -> None:
    from tests.e2e.fixtures import free_port

    proc = run_cli("ask", "--no-retrieve", "--model",
                   f"openai:x@http://127.0.0.1:{free_port()}/v1", "hi",
                   env={"FRESHWIKI_TIMEOUT": "3"})
    assert proc.returncode == 2
    assert "gave up" in proc.stderr and "connection" in proc.stderr


@pytest.mark.e2e
def test_ask_answers_from_the_default_corpus_with_sources(
    smollm2_path: Path, small_data_dir: Path
) -> None:
    proc = run_cli("ask", "--model", "local:smollm2-135m", "--max-tokens", "32", "-k", "2",
                   "Which website provided a directory of torrent files and magnet links?")
    assert proc.returncode == 0, proc.stderr
    assert "Building the default corpus once" in proc.stderr
    answer, _, sources = proc.stdout.partition("Sources:")
    assert answer.strip()
    assert sources.splitlines()[1].strip().startswith("[1] KickassTorrents")
    assert "CC BY-SA 4.0" in sources
    again = run_cli("ask", "--model", "local:smollm2-135m", "--max-tokens", "32", "-k", "2",
                    "Which website provided a directory of torrent files and magnet links?")
    assert "Building the default corpus" not in again.stderr  # loaded from disk
    assert again.stdout == proc.stdout and "from cache" in again.stderr
