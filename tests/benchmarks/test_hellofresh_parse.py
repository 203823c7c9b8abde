"""The yes/no/none/blocked parse and the hellofresh-correct scorer, on a table of replies."""

from __future__ import annotations

import pytest

from freshwiki.benchmarks import Output, Sample, Task, load_scorer
from freshwiki.benchmarks.hellofresh import is_blocked, parse_answer
from freshwiki.errors import FreshwikiError
from freshwiki.llm import Message

TABLE = [
    ("Yes", "yes"),
    ("yes", "yes"),
    ("YES", "yes"),
    ("Yes.", "yes"),
    ("  **Yes**", "yes"),
    ('"No"', "no"),
    ("No.", "no"),
    ("no", "no"),
    ("No, because the note has no source.", "no"),
    ("Yes, it cites a source", "yes"),
    ("Answer: No", "no"),
    ("Answer: yes.", "yes"),
    ("The answer is yes.", "yes"),
    ("I think no", "no"),
    ("Maybe", "none"),
    ("", "none"),
    ("It depends on the raters.", "none"),
    ("yes or no", "yes"),           # the first word decides
    ("Either yes, or no.", "none"),  # no first-word answer, both words: ambiguous
    ("Nobody knows", "none"),        # "no" inside a word does not count
    ("Yesterday it was kept", "none"),
    ("I'm sorry, but I can't help with that.", "blocked"),
    ("I cannot answer that.", "blocked"),
    ("As an AI, I cannot predict how users will rate notes.", "blocked"),
    ("I can't predict the future.", "blocked"),
    ("I am unable to determine whether it will be kept.", "blocked"),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_parse_table(text: str, expected: str) -> None:
    assert parse_answer(text) == expected


def test_a_later_cannot_is_not_a_refusal() -> None:
    assert not is_blocked("No. I cannot verify the claim, so raters will not either.")
    assert parse_answer("No. I cannot verify the claim.") == "no"


def task(gold: str | None) -> Task:
    meta = {} if gold is None else {"label": gold}
    return Task(sample=Sample(id="s", input="x", metadata=meta), template="p1",
                messages=(Message.user("q"),), query="x")


@pytest.mark.parametrize(("gold", "reply", "value", "label"), [
    ("yes", "Yes.", 1.0, "yes"),
    ("yes", "No", 0.0, "no"),
    ("no", "No, because", 1.0, "no"),
    ("no", "Maybe", 0.0, "none"),
    ("yes", "I'm sorry, but I can't help with that.", 0.0, "blocked"),
])
async def test_scorer_value_is_parsed_equals_gold_and_label_is_the_parse(
    gold: str, reply: str, value: float, label: str,
) -> None:
    scorer = load_scorer("hellofresh-correct", None)
    score = await scorer.score(task(gold), Output(text=reply))
    assert (score.value, score.label) == (value, label)
    assert score.data == {"parsed": label, "gold": gold}


async def test_scorer_refuses_samples_without_a_yes_no_gold() -> None:
    scorer = load_scorer("hellofresh-correct", None)
    with pytest.raises(FreshwikiError, match="no yes/no gold"):
        await scorer.score(task(None), Output(text="Yes"))
