"""The prompt templates of the paper and the rule each one's answers are labelled by.

Template ids follow Hou et al. (2024), §3.4 and §4: 1 is closed-book, 2 and 3 show one passage
each, 4 shows both, 5 shows both and warns that they may contradict each other. The variants of
5 come from the paper's additional human study: 5.1 is 5 with the passages in the opposite order
(does the model just echo whichever comes first?), 5.2 asks the model to find the contradiction,
5.3 is 5 on passages revised so that they no longer conflict, and 5.4 is 5.2 on those revised
passages (does the model see that there is nothing to find?). The wording of the Jinja2 files
beside this module is ours.

Each template fixes how its answers are labelled (:attr:`TemplateSpec.rule`), so the matcher and
the judge read it from here instead of hard-coding template ids. The rules, as the paper states
them (§3.4, Table 2) and as we read it for the variants its text only describes (§4):

* ``both_answers`` (1, 4, 5, 5.1; three classes). Correct: both gold answers, the response makes
  clear that they contradict each other, and it does not prefer one. Partially correct: exactly
  one gold answer, or both with a preference for one. Incorrect: neither, or both merged as if
  both were true at once. Template 1 shows no passage, but its gold list is still both answers:
  that is why the paper's correct rate there is near zero and most answers are partial.
* ``one_answer`` (2, 3, 5.3; correct / incorrect only, as Table 2 has no partial row for 2 and
  3). Correct: the answer of the passage(s) shown, and not the other gold answer as well (extra
  material is allowed only when it does not contradict the main answer). Incorrect: otherwise.
* ``detect`` (5.2): correct when the response says the passages contradict each other on the
  question and explains how, by stating what each one says (both gold answers); incorrect when
  it finds no contradiction, or claims one without saying what it is.
* ``no_conflict`` (5.4): correct when the response says the revised passages do not contradict
  each other, and does not go on to claim a contradiction anyway; incorrect otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from freshwiki.benchmarks.wikicontradict._labels import LABELS, Label
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.seams import Task

Rule = Literal["both_answers", "one_answer", "detect", "no_conflict"]
"""How an answer to a template is labelled (see the module docstring)."""

TWO_CLASSES: Final[tuple[Label, ...]] = ("correct", "incorrect")


@dataclass(frozen=True)
class TemplateSpec:
    """One prompt template.

    Attributes:
        file: Jinja2 file under ``benchmarks/wikicontradict/templates/``.
        passages: Indexes into the sample's documents, in the order the prompt shows them.
        rule: How an answer to it is labelled.
        expected: For ``one_answer``: the index of the gold answer a correct response gives
            (the other one is the answer it must not also give).
        revised: Shown the conflict-free revision of the passages (5.3, 5.4); the task's
            sample then carries the revised documents and, as its targets, the answer the
            revision keeps followed by the one it removed.
    """

    file: str
    passages: tuple[int, ...]
    rule: Rule
    expected: int = 0
    revised: bool = False

    @property
    def classes(self) -> tuple[Label, ...]:
        """The labels answers to this template can get, best first."""
        return LABELS if self.rule == "both_answers" else TWO_CLASSES


TEMPLATES: dict[str, TemplateSpec] = {
    "1": TemplateSpec("question_only.j2", (), "both_answers"),
    "2": TemplateSpec("one_passage.j2", (0,), "one_answer", expected=0),
    "3": TemplateSpec("one_passage.j2", (1,), "one_answer", expected=1),
    "4": TemplateSpec("two_passages.j2", (0, 1), "both_answers"),
    "5": TemplateSpec("two_passages_aware.j2", (0, 1), "both_answers"),
    "5.1": TemplateSpec("two_passages_aware.j2", (1, 0), "both_answers"),
    "5.2": TemplateSpec("find_contradiction.j2", (0, 1), "detect"),
    "5.3": TemplateSpec("two_passages_aware.j2", (0, 1), "one_answer", expected=0,
                        revised=True),
    "5.4": TemplateSpec("find_contradiction.j2", (0, 1), "no_conflict", revised=True),
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
    """The two gold answers of ``task``'s sample, in target order.

    For the revised templates (5.3, 5.4) the task's sample is the revised one: the answer the
    revision keeps comes first, the one it removed second.

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
