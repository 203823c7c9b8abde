"""The prompt templates of the paper and what each one expects of an answer.

Template ids follow Hou et al. (2024): 1 is closed-book, 2 and 3 show one passage each, 4 shows
both, 5 shows both and warns that they may contradict each other; 5.1 is 5 with the passages in
the opposite order (does the model just echo whichever comes first?) and 5.2 asks outright for
the contradiction. The wording of the Jinja2 files beside this module is ours.

Each template also fixes how an answer is judged (:attr:`TemplateSpec.mode`), so scorers read it
from here instead of hard-coding template ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.seams import Task

Mode = Literal["closed_book", "passage1", "passage2", "both"]
"""What a good answer contains: either gold answer (closed book), the shown passage's answer, or
both answers with the conflict acknowledged."""


@dataclass(frozen=True)
class TemplateSpec:
    """One prompt template.

    Attributes:
        file: Jinja2 file under ``benchmarks/wikicontradict/templates/``.
        passages: Indexes into ``sample.documents`` in the order the prompt shows them.
        mode: How an answer to it is judged.
    """

    file: str
    passages: tuple[int, ...]
    mode: Mode


TEMPLATES: dict[str, TemplateSpec] = {
    "1": TemplateSpec("question_only.j2", (), "closed_book"),
    "2": TemplateSpec("one_passage.j2", (0,), "passage1"),
    "3": TemplateSpec("one_passage.j2", (1,), "passage2"),
    "4": TemplateSpec("two_passages.j2", (0, 1), "both"),
    "5": TemplateSpec("two_passages_aware.j2", (0, 1), "both"),
    "5.1": TemplateSpec("two_passages_aware.j2", (1, 0), "both"),
    "5.2": TemplateSpec("find_contradiction.j2", (0, 1), "both"),
}


class UnknownTemplateError(FreshwikiError):
    """A template id WikiContradict does not define."""


def template_spec(template: str) -> TemplateSpec:
    """The spec of ``template``.

    Raises:
        UnknownTemplateError: naming the known ids.
    """
    try:
        return TEMPLATES[template]
    except KeyError:
        raise UnknownTemplateError(
            f"WikiContradict has no template {template!r}",
            hint=f"choose among: {', '.join(TEMPLATES)}.",
        ) from None


def gold_answers(task: Task) -> tuple[str, str]:
    """The (passage 1, passage 2) answers of ``task``'s sample.

    Raises:
        FreshwikiError: the sample does not carry exactly two gold answers.
    """
    targets = task.sample.targets
    if len(targets) != 2:
        raise FreshwikiError(
            f"sample {task.sample.id} has {len(targets)} gold answers; WikiContradict scorers "
            "need two (one per passage)",
            hint="use the wikicontradict scorers only with the wikicontradict benchmark.",
        )
    return targets[0], targets[1]
