from __future__ import annotations

import pytest

from freshwiki.prompting import PromptError, list_prompts, render_prompt


def test_templates_ship_with_the_package() -> None:
    names = list_prompts()
    assert "llm/prompts/json_repair.j2" in names
    assert "systems/prompts/vanilla_system.j2" in names


def test_render_fills_variables() -> None:
    text = render_prompt(
        "llm/prompts/json_repair.j2", error="not JSON", schema='{"type": "object"}'
    )
    assert "not JSON" in text and '{"type": "object"}' in text


def test_missing_variable_is_an_error_not_a_hole() -> None:
    with pytest.raises(PromptError, match="schema"):
        render_prompt("llm/prompts/json_repair.j2", error="x")


def test_unknown_template() -> None:
    with pytest.raises(PromptError, match="not found"):
        render_prompt("nope/missing.j2")
