from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.config import DEFAULT_MODEL, describe, load_settings
from freshwiki.errors import ConfigError


def test_defaults_work_with_no_configuration(tmp_path: Path) -> None:
    resolved = load_settings(environ={})
    s = resolved.settings
    assert s.model == DEFAULT_MODEL == "local:qwen2.5-coder-1.5b"
    assert s.cache is True and s.max_retries == 4
    assert resolved.sources["model"] == "default"
    assert resolved.config_file is None
    # Weights live apart from the home so a clean slate keeps them.
    assert not s.models_dir.is_relative_to(s.home)


def test_precedence_default_then_toml_then_env_then_flags(tmp_path: Path) -> None:
    toml = tmp_path / "freshwiki.toml"
    toml.write_text('model = "local:smollm2-135m"\ntimeout = 30\nmax_retries = 2\ncache = false\n')
    env = {"FRESHWIKI_TIMEOUT": "15", "FRESHWIKI_MAX_RETRIES": "1"}
    resolved = load_settings({"max_retries": 7, "home": None}, config_file=toml, environ=env)
    s = resolved.settings
    assert s.model == "local:smollm2-135m" and resolved.sources["model"] == str(toml)
    assert s.timeout == 15.0 and resolved.sources["timeout"] == "env FRESHWIKI_TIMEOUT"
    assert s.max_retries == 7 and resolved.sources["max_retries"] == "command line"
    assert s.cache is False
    assert resolved.sources["home"] != "command line"  # a None flag does not mask lower layers


def test_toml_in_current_folder_and_freshwiki_table(tmp_path: Path) -> None:
    (tmp_path / "freshwiki.toml").write_text('[freshwiki]\nn_ctx = 2048\n')
    resolved = load_settings(environ={})  # cwd is tmp_path (conftest)
    assert resolved.settings.n_ctx == 2048
    assert resolved.config_file == tmp_path / "freshwiki.toml"


def test_home_from_env_gives_all_stores_under_it(tmp_path: Path) -> None:
    s = load_settings(environ={"FRESHWIKI_HOME": str(tmp_path / "h")}).settings
    assert s.response_cache_path.is_relative_to(tmp_path / "h")
    assert s.call_log_path.is_relative_to(tmp_path / "h")


def test_openai_key_falls_back_to_standard_variable() -> None:
    resolved = load_settings(environ={"OPENAI_API_KEY": "sk-test"})
    assert resolved.settings.openai_api_key == "sk-test"
    shown = {row[0]: row[1] for row in describe(resolved)}
    assert shown["openai_api_key"] == "***"  # secrets never printed


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FRESHWIKI_TIMEOUT": "soon"}, "FRESHWIKI_TIMEOUT"),
        ({"FRESHWIKI_CACHE": "maybe"}, "FRESHWIKI_CACHE"),
        ({"FRESHWIKI_MAX_RETRIES": "-1"}, "max_retries"),
    ],
)
def test_bad_values_name_their_source(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(environ=env)


def test_unknown_toml_key_lists_valid_ones(tmp_path: Path) -> None:
    toml = tmp_path / "x.toml"
    toml.write_text("modle = 'typo'\n")
    with pytest.raises(ConfigError) as info:
        load_settings(config_file=toml, environ={})
    assert "modle" in info.value.message and "model" in (info.value.hint or "")


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config_file=tmp_path / "nope.toml", environ={})


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    toml = tmp_path / "broken.toml"
    toml.write_text("model = \n")
    with pytest.raises(ConfigError, match=r"broken\.toml"):
        load_settings(config_file=toml, environ={})
