"""The LLM judge: a model reads each response, the paper's rules turn what it read into a label.

Like the paper's WikiContradictEval, the judge is few-shot and sees the question, the two gold
answers and the response (not the passages: the gold answers already say what each passage
supports, and leaving the passages out keeps the prompt short enough for a small local judge).

Unlike it, the model is not asked for the label. It fills in a short form under a JSON schema:
which of the two gold answers the response states, whether it makes clear that the sources
contradict each other, whether it prefers one side, whether it says there is no contradiction.
The label then follows from the paper's rules for the template
(:func:`freshwiki.benchmarks.wikicontradict._match.classify`, the same function the
deterministic scorer uses; the rules are in ``_templates``). Why: on the validation set a 1.5B
judge asked for ``{"rationale", "label"}`` often wrote a right rationale and then the wrong
label (F1 on "correct" 0.42); reading is what a model is needed for, while applying a fixed rule
is not. It also makes one prompt serve every template, including the detection templates 5.2
and 5.4, whose labels rest on the same facts.

Why "which answer" is one choice among the answers' own words: an earlier form asked two yes/no
questions, "answer 1 given?" then "answer 2 given?", and every one of its examples with a single
answer gave answer 1. On a real run the 1.5B then reported bare answer-2 replies ("1933") as
answer 1, which made template 3 and 5.3 (where answer 2, or the kept answer, is the right one)
look far worse than they were. Now the schema's enum holds the two answers' texts plus "both
answers" and "neither answer", so the model picks by copying the words it read rather than by
position, and the examples give answer 1 alone, answer 2 alone, both and neither.

Why the prompt is laid out as it is: the instructions and the (invented, not from the dataset)
examples form a system message identical for every item, and the item comes last in the user
message, so a local model reuses the shared prefix from its KV cache. The prompt does not tie
answer 1 to "passage 1": in template 5.1 the passages are shown the other way round, and for
5.3 / 5.4 answer 1 is the one the revised passages keep and answer 2 the one they dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks.wikicontradict._labels import VALUES
from freshwiki.benchmarks.wikicontradict._match import Facts, classify
from freshwiki.benchmarks.wikicontradict._templates import gold_answers, template_spec
from freshwiki.errors import FreshwikiError
from freshwiki.llm import Message
from freshwiki.prompting import render_prompt
from freshwiki.seams import Output, Score, Task

if TYPE_CHECKING:
    from freshwiki.llm import LLM

BOTH = "both answers"
NEITHER = "neither answer"

CHECKLIST = (
    "answer_given",
    "conflict_acknowledged",
    "one_preferred",
    "no_conflict_stated",
)
"""What the judge reports about a response, in the order it reports it."""

JUDGE_MAX_TOKENS = 60
"""The reply without the answer's words is about 30 tokens; :func:`judge_schema`'s choice adds
the longer answer's length on top (see :func:`judge_max_tokens`)."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def answer_choices(answer1: str, answer2: str) -> tuple[str, str, str, str]:
    """The four values ``answer_given`` may take: answer 1, answer 2, both, neither.

    The answers are given in their own words (whitespace collapsed, as the prompt shows them).
    When the two read the same, or one reads as "both answers" / "neither answer", they are
    told apart by a number in front ("1: ...", "2: ...") so that every choice maps back to one
    meaning.
    """
    first, second = _one_line(answer1), _one_line(answer2)
    taken = {BOTH, NEITHER}
    if (first.casefold() == second.casefold() or first.casefold() in taken
            or second.casefold() in taken):
        first, second = f"1: {first}", f"2: {second}"
    return first, second, BOTH, NEITHER


def judge_schema(answer1: str, answer2: str) -> dict[str, Any]:
    """The judge's reply for one item: the answer given, as a choice, and three booleans."""
    return {
        "type": "object",
        "properties": {
            "answer_given": {"type": "string", "enum": list(answer_choices(answer1, answer2))},
            **{name: {"type": "boolean"} for name in CHECKLIST[1:]},
        },
        "required": list(CHECKLIST),
        "additionalProperties": False,
    }


def judge_max_tokens(answer1: str, answer2: str) -> int:
    """Room for the reply: the fixed part plus the longer answer copied.

    About 2 tokens a word, generous for numbers and names.
    """
    longest = max(len(_one_line(answer1).split()), len(_one_line(answer2).split()))
    return JUDGE_MAX_TOKENS + 2 * longest


_PROMPTS = "benchmarks/wikicontradict/prompts"


def judge_messages(question: str, answer1: str, answer2: str, response: str) -> list[Message]:
    """The judge's prompt: the fixed instructions and examples first, the item last.

    The prompt is the same for every template: only the rules applied to the reply differ.
    """
    first, second, _, _ = answer_choices(answer1, answer2)
    return [
        Message.system(render_prompt(f"{_PROMPTS}/judge_system.j2", both=BOTH,
                                     neither=NEITHER)),
        Message.user(
            render_prompt(
                f"{_PROMPTS}/judge_item.j2",
                question=_one_line(question),
                answer1=first,
                answer2=second,
                response=_one_line(response) or "(empty response)",
            )
        ),
    ]


def read_choice(choice: str, answer1: str, answer2: str) -> tuple[bool, bool]:
    """Which gold answers a reply's ``answer_given`` names: (answer 1 given, answer 2 given).

    Raises:
        FreshwikiError: the value is none of the four choices (the schema check before this
            makes that a bug, not a model slip).
    """
    first, second, both, neither = answer_choices(answer1, answer2)
    readings = {first: (True, False), second: (False, True), both: (True, True),
                neither: (False, False)}
    if choice not in readings:
        raise FreshwikiError(
            f"judge reply answer_given={choice!r} is none of {list(readings)}",
            hint="this is a bug in the judge's schema; please report it.",
        )
    return readings[choice]


class JudgeScorer:
    """Scorer ``wikicontradict-judge``: an LLM reads each response (see the module docstring).

    Args:
        judge: The judge model's client; share it between scorers to share its cache.
    """

    name = "wikicontradict-judge"

    def __init__(self, judge: LLM) -> None:
        self.judge = judge

    async def score(self, task: Task, output: Output) -> Score:
        """Ask the judge for a label.

        Raises:
            LLMOutputError: the judge's reply did not fit the schema even after a repair.
            FreshwikiError: the sample does not carry two gold answers.
        """
        answer1, answer2 = gold_answers(task)
        spec = template_spec(task.template)
        result = await self.judge.chat(
            judge_messages(task.sample.input, answer1, answer2, output.text),
            max_tokens=judge_max_tokens(answer1, answer2),
            temperature=0.0,
            json_schema=judge_schema(answer1, answer2),
            schema_name="wikicontradict_judgement",
            tag=self.name,
        )
        given1, given2 = read_choice(str(result.parsed["answer_given"]), answer1, answer2)
        verdict = {
            "answer1_given": given1,
            "answer2_given": given2,
            **{name: bool(result.parsed[name]) for name in CHECKLIST[1:]},
        }
        label = classify(spec, Facts(
            answer1=given1,
            answer2=given2,
            conflict=verdict["conflict_acknowledged"],
            preference=verdict["one_preferred"],
            no_conflict=verdict["no_conflict_stated"],
        ))
        return Score(
            value=VALUES[label],
            label=label,
            explanation="; ".join(f"{k}={str(v).lower()}" for k, v in verdict.items()),
            data={
                "rule": spec.rule,
                "answer_given": result.parsed["answer_given"],
                **verdict,
                "judge_model": result.model,
                "judge_cache_hit": result.cache_hit,
                "judge_repaired": result.repaired,
            },
        )


def judge_scorer_factory(judge: LLM | None) -> JudgeScorer:
    """Build the judge scorer for the registry.

    Raises:
        FreshwikiError: no judge model was configured.
    """
    if judge is None:
        raise FreshwikiError(
            "scorer wikicontradict-judge needs a judge model, and none was given",
            hint="name a judge model (e.g. local:qwen2.5-coder-1.5b), or use the "
            "model-free scorer wikicontradict-match.",
        )
    return JudgeScorer(judge)
