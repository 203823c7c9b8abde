"""Which model judges a run when the user names none.

The rule is the strongest judge available, chosen by measured agreement with people rather
than by distance from the model under test. WikiContradict's paper picks its judge the same way
(its Table 3 ranks four judge models against two authors' labels and keeps the best open one,
Llama-3-70B) and lets that judge grade its own answers too (its Tables 4 and 5). On our 180 real
responses labelled by reading (``experiments/results/wikicontradict_judge_real.json``), the
earlier rule "any model but the one under test" made the 0.5B judge the 1.5B's answers and it
agreed with the labels no better than chance (accuracy .181, Cohen's kappa -0.01 on those 72),
while the 1.5B judging its own answers reached accuracy .792, kappa .46 (recomputed for the
whole set by ``experiments/wikicontradict_judge_rule.py``: .800 / .405 against .556 / .136).

So, in order:

1. the configured model, when it is not the model under test and not a named local model
   known to be weaker than it (a server model the user set up, e.g. a large one, judges as in
   the paper);
2. else the strongest installed named model (Qwen2.5-Coder 1.5B, then 0.5B), even when it is
   the model under test: then ``same_as_model`` is set, the reason says so, and the run's
   report header warns that the model graded its own answers (the run records both weights'
   hashes);
3. else (nothing installed, or only weaker models) the model under test itself.

Only installed models are considered, so a default never starts a download. SmolLM2-135M is
never chosen to judge another model: it is there for plumbing tests, not for answers.
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
        same_as_model: It is the model under test (the strongest model installed, or the
            only one); reports then warn that the model graded its own answers.
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


def _rank(spec: str, models_dir: Path) -> int | None:
    """Strength rank of a named local model (0 strongest); ``None`` when unknown.

    Models outside :data:`JUDGE_PREFERENCE` (SmolLM2) rank below every judge; a server model
    or an unnamed GGUF file has no known rank.
    """
    target = _local_target(spec, models_dir)
    if target is None or target not in models.MODELS:
        return None
    return (JUDGE_PREFERENCE.index(target) if target in JUDGE_PREFERENCE
            else len(JUDGE_PREFERENCE))


def _may_judge_others(spec: str, model_spec: str, models_dir: Path) -> bool:
    """Whether ``spec`` may judge ``model_spec``'s answers: not a plumbing model, not weaker.

    A weaker judge was measured to be worse than the model judging itself (module doc), so a
    known rank below the model under test rules a judge out.
    """
    rank, under_test = _rank(spec, models_dir), _rank(model_spec, models_dir)
    if rank is not None and rank >= len(JUDGE_PREFERENCE):
        return False
    return rank is None or under_test is None or rank <= under_test


SELF_JUDGE_REASON: Final = (
    "the strongest installed model is the model under test, so it judges its own answers "
    "(a weaker judge agreed worse with people on WikiContradict)")
NOTHING_ELSE_REASON: Final = (
    "no other model at least as strong is installed, so the model under test judges its own "
    "answers")


def default_judge(model_spec: str, settings: Settings) -> JudgeChoice:
    """The judge of a run of ``model_spec`` when the user names none (see the module doc)."""
    models_dir = settings.models_dir
    configured = settings.model
    if (not same_model(configured, model_spec, models_dir)
            and _available(configured, models_dir)
            and _may_judge_others(configured, model_spec, models_dir)):
        return JudgeChoice(spec=configured, same_as_model=False,
                           reason="the configured model, not the model under test")
    for name in JUDGE_PREFERENCE:
        spec = f"local:{name}"
        if not _available(spec, models_dir):
            continue
        if same_model(spec, model_spec, models_dir):
            return JudgeChoice(spec=model_spec, same_as_model=True, reason=SELF_JUDGE_REASON)
        if _may_judge_others(spec, model_spec, models_dir):
            return JudgeChoice(spec=spec, same_as_model=False,
                               reason="the strongest installed model, not the model under "
                               "test")
    return JudgeChoice(spec=model_spec, same_as_model=True, reason=NOTHING_ELSE_REASON)
