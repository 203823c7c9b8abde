"""The default judge is another model than the one under test whenever one is installed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from freshwiki.config import Settings
from freshwiki.evaluation import ResultsStore, run_evaluation
from freshwiki.evaluation._judge_choice import default_judge, same_model
from freshwiki.llm import models

Q15, Q05, SMOL = "local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b", "local:smollm2-135m"


def _settings(settings: Settings, tmp_path: Path, installed: tuple[str, ...],
              model: str = Q15) -> Settings:
    """Settings whose models folder holds (empty stand-ins for) the ``installed`` models."""
    folder = tmp_path / "models"
    folder.mkdir(exist_ok=True)
    for name in installed:
        (folder / models.MODELS[name].filename).write_bytes(b"")
    return dataclasses.replace(settings, models_dir=folder, model=model)


ALL = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")


@pytest.mark.parametrize(("installed", "under_test", "judge", "same"), [
    (ALL, Q15, Q05, False),  # the 0.5B judges the 1.5B ...
    (ALL, Q05, Q15, False),  # ... and the 1.5B the 0.5B
    (ALL, SMOL, Q15, False),  # the strongest judges the plumbing model
    (("qwen2.5-coder-0.5b", "smollm2-135m"), SMOL, Q05, False),  # 1.5B missing: next one
    (("qwen2.5-coder-1.5b", "smollm2-135m"), Q15, Q15, True),  # never SmolLM2: judges itself
    ((), Q15, Q15, True),
    (ALL, "openai:gpt-x@http://127.0.0.1:9/v1", Q15, False),
])
def test_default_judge_is_another_installed_model(
    settings: Settings, tmp_path: Path, installed: tuple[str, ...], under_test: str, judge: str,
    same: bool,
) -> None:
    choice = default_judge(under_test, _settings(settings, tmp_path, installed))
    assert (choice.spec, choice.same_as_model) == (judge, same)
    assert ("judges its own answers" in choice.reason) is same


def test_a_configured_model_other_than_the_one_under_test_judges_first(
    settings: Settings, tmp_path: Path,
) -> None:
    configured = _settings(settings, tmp_path, ALL, model="openai:big@http://127.0.0.1:9/v1")
    assert default_judge(Q05, configured).spec == "openai:big@http://127.0.0.1:9/v1"
    # a path to a named model's file is that model, so it is not picked to judge itself
    path = f"local:{configured.models_dir / models.MODELS['qwen2.5-coder-0.5b'].filename}"
    assert same_model(path, Q05, configured.models_dir)
    assert not same_model(path, Q15, configured.models_dir)
    assert default_judge(path, _settings(settings, tmp_path, ALL)).spec == Q15


async def test_run_records_the_chosen_judge(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FRESHWIKI_PLUGINS", "tests.systems.testkit")
    script = tmp_path / "answers.jsonl"
    script.write_text("\n".join(json.dumps({"text": "It is 2."}) for _ in range(4)))
    judge = tmp_path / "judge.jsonl"
    judge.write_text("\n".join(json.dumps({"text": "yes"}) for _ in range(4)))
    # the configured model is the scripted judge; the system under test is another script
    configured = dataclasses.replace(settings, model=f"scripted:{judge}")
    summary = await run_evaluation("tiny", model=f"scripted:{script}", limit=2,
                                   settings=configured)
    assert summary.info.config["judge_spec"] == f"scripted:{judge}"
    assert summary.info.model_hashes == {"model": "script:answers.jsonl",
                                         "judge": "script:judge.jsonl"}
    # asked to judge itself (no other model), the run says judge == model in its hashes
    alone = dataclasses.replace(settings, model=f"scripted:{script}",
                                models_dir=tmp_path / "no-models")
    own = await run_evaluation("tiny", model=f"scripted:{script}", limit=2, settings=alone)
    assert own.info.config["judge_spec"] == f"scripted:{script}"
    assert own.info.model_hashes["judge"] == own.info.model_hashes["model"]
    with ResultsStore(settings.home / "runs" / "runs.sqlite") as store:
        assert len(store.list_runs()) == 2
