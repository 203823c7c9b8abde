"""Render the Jinja2 prompt templates that ship inside the package.

Templates live beside the module that uses them (``llm/prompts/json_repair.j2``,
``systems/prompts/...``) and are addressed by their path inside the package. Rendering is
strict: a variable the caller forgot raises instead of silently producing an empty string,
because a prompt with a hole in it still "works" and quietly ruins an evaluation.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2

from freshwiki.errors import FreshwikiError


class PromptError(FreshwikiError):
    """A prompt template is missing or was rendered with missing variables."""


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    root = resources.files("freshwiki")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_prompt(template: str, /, **variables: Any) -> str:
    """Render a packaged template, e.g. ``render_prompt("llm/prompts/json_repair.j2", ...)``.

    Raises:
        PromptError: the template does not exist or references an undefined variable.
    """
    env = _environment()
    try:
        tmpl = env.get_template(template)
    except jinja2.TemplateNotFound as exc:
        raise PromptError(
            f"prompt template {template!r} not found in the freshwiki package",
            hint="templates are addressed relative to src/freshwiki/, e.g. 'llm/prompts/x.j2'.",
        ) from exc
    try:
        return tmpl.render(**variables).strip()
    except jinja2.UndefinedError as exc:
        raise PromptError(
            f"prompt template {template!r}: {exc.message}",
            hint=f"pass every variable the template uses; given: {sorted(variables)}.",
        ) from exc


def list_prompts() -> list[str]:
    """All packaged template paths, so tests can check each one renders."""
    root = resources.files("freshwiki")
    found: list[str] = []

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, f"{name}/")
            elif child.name.endswith(".j2"):
                found.append(name)

    walk(root, "")
    return sorted(found)


def templates_hash(folder: str, /) -> str:
    """A short hash of every ``.j2`` template in a packaged folder (e.g. a benchmark's prompts).

    Benchmarks put it in their identity, so that editing a prompt starts a new run (or refuses
    to extend a dataset) instead of silently mixing outputs of two prompt versions.
    """
    digest = hashlib.sha256()
    root = resources.files("freshwiki").joinpath(folder)
    for item in sorted(root.iterdir(), key=lambda t: t.name):
        if item.name.endswith(".j2"):
            digest.update(item.name.encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()[:16]
