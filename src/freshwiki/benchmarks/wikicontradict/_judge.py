"""The LLM judge: a model reads each response, the paper's rules turn what it read into a label.

Like the paper's WikiContradictEval, the judge is few-shot and sees the question, the two gold
answers and the response (not the passages: the gold answers already say what each passage
supports, and leaving the passages out keeps the prompt short enough for a small local judge).

Unlike it, the model is not asked for the label. It fills in a checklist under a JSON schema:
does the response give answer 1, give answer 2, make clear that the sources contradict each
other, prefer one side, say that there is no contradiction? The label then follows from the
paper's rules for the template (:func:`freshwiki.benchmarks.wikicontradict._match.classify`, the
same function the deterministic scorer uses; the rules are in ``_templates``). Why: on the
validation set a 1.5B judge asked for ``{"rationale", "label"}`` often wrote a right rationale
and then the wrong label (F1 on "correct" 0.42); reading is what a model is needed for, while
applying a fixed rule is not. It also makes one prompt serve every template, including the
detection templates 5.2 and 5.4, whose labels rest on the same five facts.

Why the examples are balanced: in an earlier prompt every example with a single answer gave
answer 1, and on a real run the 1.5B then reported bare answer-2 replies ("1933") as answer 1,
which made template 3 (where answer 2 is the right one) look far worse than it was. Now each
answer appears alone equally often, and two examples have answers that differ in one detail
(a day), because the small judge called near-identical answers ("Herschel HaLevi" / "Herschel
Levi") both given, and then, to stay consistent, missed a plain "No contradiction." The
examples were chosen on WikiContradict items 0-20 of a real run and validated on items 21-41
and other labelled sets (see the README); a form that asked for the answer as one choice among
the answers' own words did worse there and was dropped.

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

CHECKLIST = (
    "answer1_given",
    "answer2_given",
    "conflict_acknowledged",
    "one_preferred",
    "no_conflict_stated",
)
"""What the judge reports about a response, in the order it reports it."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {name: {"type": "boolean"} for name in CHECKLIST},
    "required": list(CHECKLIST),
    "additionalProperties": False,
}
"""The judge's reply: five booleans (see the module docstring)."""

JUDGE_MAX_TOKENS = 80
"""The reply is about 40 tokens; the slack only matters for a backend without a grammar."""


_PROMPTS = "benchmarks/wikicontradict/prompts"


def judge_messages(question: str, answer1: str, answer2: str, response: str) -> list[Message]:
    """The judge's prompt: the fixed instructions and examples first, the item last.

    The prompt is the same for every template: only the rules applied to the reply differ.
    """
    return [
        Message.system(render_prompt(f"{_PROMPTS}/judge_system.j2")),
        Message.user(
            render_prompt(
                f"{_PROMPTS}/judge_item.j2",
                question=question,
                answer1=answer1,
                answer2=answer2,
                response=" ".join(response.split()) or "(empty response)",
            )
        ),
    ]


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
            max_tokens=JUDGE_MAX_TOKENS,
            temperature=0.0,
            json_schema=JUDGE_SCHEMA,
            schema_name="wikicontradict_judgement",
            tag=self.name,
        )
        verdict = {name: bool(result.parsed[name]) for name in CHECKLIST}
        label = classify(spec, Facts(
            answer1=verdict["answer1_given"],
            answer2=verdict["answer2_given"],
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
