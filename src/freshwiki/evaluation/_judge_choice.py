"""Which model judges a run when the user names none.

A model grading its own answers shares its own blind spots: WikiContradict's judge, for one,
is asked whether a response states the contradiction, which is exactly what the model under
test fails to see when it answers. So by default the judge is another model: the configured
default model if it is not the one under test, else the strongest other named model that is
installed (Qwen2.5-Coder 1.5B judges the 0.5B and the 0.5B judges the 1.5B). Only installed
models are considered, so a default never starts a download. SmolLM2-135M is never chosen: it
is there for plumbing tests, not for answers. When no other model is available the judge is
the model under test, and reports say so in their header.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from freshwiki.llm import models

if TYPE_CHECKING:
    from freshwiki.config import Settings

JUDGE_PREFERENCE: Final[tuple[str, ...]] = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")
"""Named models that may judge by default, strongest first."""


@dataclass(frozen=True)
class JudgeChoice:
    """The default judge for one run.

    Attributes:
        spec: The judge's model spec.
        same_as_model: It is the model under test (no other model was available).
        reason: Why it was chosen, in words, for the progress display.
    """

    spec: str
    same_as_model: bool
    reason: str


def _local_target(spec: str, models_dir: Path) -> str | None:
    """What a ``local:`` spec loads: a named model's name, or a GGUF file's resolved path.

    A named model and a path to its assembled file are the same model, so both resolve to the
    name.
    """
    kind, _, rest = spec.partition(":")
    if kind != "local" or not rest:
        return None
    if rest in models.MODELS:
        return rest
    path = Path(rest).expanduser()
    for name in models.MODELS:
        if path.resolve() == models.model_path(name, models_dir).resolve():
            return name
    return str(path.resolve())


def same_model(a: str, b: str, models_dir: Path) -> bool:
    """Whether specs ``a`` and ``b`` name the same model (without loading either)."""
    if a.strip() == b.strip():
        return True
    target_a, target_b = _local_target(a, models_dir), _local_target(b, models_dir)
    return target_a is not None and target_a == target_b


def _available(spec: str, models_dir: Path) -> bool:
    """A local model only when its weights are on disk; any other backend as configured."""
    target = _local_target(spec, models_dir)
    if target is None:
        return not spec.startswith("local:")
    if target in models.MODELS:
        return models.status(target, models_dir) != "missing"
    return Path(target).is_file()


def default_judge(model_spec: str, settings: Settings) -> JudgeChoice:
    """The judge of a run of ``model_spec`` when the user names none (see the module doc)."""
    candidates = [settings.model, *(f"local:{name}" for name in JUDGE_PREFERENCE)]
    for spec in dict.fromkeys(candidates):
        if same_model(spec, model_spec, settings.models_dir):
            continue
        if _available(spec, settings.models_dir):
            why = ("the configured model" if spec == settings.model
                   else "the strongest other installed model")
            return JudgeChoice(spec=spec, same_as_model=False,
                               reason=f"{why}, not the model under test")
    return JudgeChoice(spec=model_spec, same_as_model=True,
                       reason="no other model is installed, so the model under test judges "
                       "its own answers")
