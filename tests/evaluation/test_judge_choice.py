"""The default judge: the strongest installed model, another one when it is at least as strong.

Expectations are worked out by hand from the rule in ``_judge_choice``'s module doc: the
configured model first unless it is the model under test, SmolLM2 or a weaker named model;
then the 1.5B, then the 0.5B, the first installed one judging even when it is the model under
test; a weaker model never judges a stronger one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import freshwiki.evaluation
from freshwiki.config import Settings
from freshwiki.evaluation import (
    JudgeChoice,
    ResultsStore,
    default_judge,
    run_evaluation,
    same_model,
)
from freshwiki.llm import models
from tests.test_layers import imported_names

Q15, Q05, SMOL = "local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b", "local:smollm2-135m"


def _settings(settings: Settings, tmp_path: Path, installed: tuple[str, ...],
              model: str = Q15) -> Settings:
    """Settings whose models folder holds (empty stand-ins for) the ``installed`` models."""
    folder = tmp_path / "models"
    folder.mkdir(parents=True, exist_ok=True)
    for name in installed:
        (folder / models.MODELS[name].filename).write_bytes(b"")
    return dataclasses.replace(settings, models_dir=folder, model=model)


ALL = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")


@pytest.mark.parametrize(("installed", "under_test", "judge", "same"), [
    # the 1.5B judges its own answers: the 0.5B judging it agreed with people at chance level
    (ALL, Q15, Q15, True),
    (ALL, Q05, Q15, False),  # the 1.5B judges the 0.5B ...
    (ALL, SMOL, Q15, False),  # ... and the plumbing model
    (("qwen2.5-coder-0.5b", "smollm2-135m"), SMOL, Q05, False),  # 1.5B missing: next one
    (("qwen2.5-coder-0.5b", "smollm2-135m"), Q05, Q05, True),  # never SmolLM2: judges itself
    (("qwen2.5-coder-1.5b", "smollm2-135m"), Q15, Q15, True),
    (("qwen2.5-coder-0.5b",), Q15, Q15, True),  # the only other model is weaker
    ((), Q15, Q15, True),
    (ALL, "openai:gpt-x@http://127.0.0.1:9/v1", Q15, False),  # unknown strength: another model
])
def test_default_judge_is_the_strongest_installed_model(
    settings: Settings, tmp_path: Path, installed: tuple[str, ...], under_test: str, judge: str,
    same: bool,
) -> None:
    choice = default_judge(under_test, _settings(settings, tmp_path, installed))
    assert (choice.spec, choice.same_as_model) == (judge, same)
    assert ("judges its own answers" in choice.reason) is same


def test_a_model_that_judges_itself_says_why(settings: Settings, tmp_path: Path) -> None:
    # stronger than anything else installed, against nothing else worth asking
    strongest = default_judge(Q15, _settings(settings, tmp_path / "all", ALL))
    assert "strongest installed model is the model under test" in strongest.reason
    alone = default_judge(Q15, _settings(settings, tmp_path / "weak", ("qwen2.5-coder-0.5b",)))
    assert "no other model at least as strong is installed" in alone.reason


@pytest.mark.parametrize(("configured", "under_test", "judge"), [
    # a weaker configured model does not judge a stronger one (the measured failure) ...
    (Q05, Q15, Q15),
    # ... nor does the plumbing model judge anyone
    (SMOL, "openai:gpt-x@http://127.0.0.1:9/v1", Q15),
    (SMOL, Q05, Q15),
    # a configured model at least as strong judges, as does one of unknown strength
    (Q15, Q05, Q15),
    ("openai:big@http://127.0.0.1:9/v1", Q15, "openai:big@http://127.0.0.1:9/v1"),
])
def test_the_configured_model_judges_unless_it_is_weaker(
    settings: Settings, tmp_path: Path, configured: str, under_test: str, judge: str,
) -> None:
    choice = default_judge(under_test, _settings(settings, tmp_path, ALL, model=configured))
    assert (choice.spec, choice.same_as_model) == (judge, judge == under_test)


def test_the_rule_is_public_and_used_by_name_outside_the_package() -> None:
    assert {"JudgeChoice", "default_judge", "same_model"} <= set(freshwiki.evaluation.__all__)
    assert default_judge.__module__ == "freshwiki.evaluation._judge_choice"
    assert isinstance(JudgeChoice("x", False, "y"), JudgeChoice)
    root = Path(__file__).resolve().parents[2]
    package = root / "src" / "freshwiki" / "evaluation"
    private = [f"{path.relative_to(root)}:{line}"
               for folder in ("src", "experiments", "tests")
               for path in sorted((root / folder).rglob("*.py"))
               if not path.is_relative_to(package) and ".mypy_cache" not in path.parts
               for line, name in imported_names(path, "freshwiki.x")
               if name.startswith("freshwiki.evaluation._judge_choice")]
    assert private == []


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
