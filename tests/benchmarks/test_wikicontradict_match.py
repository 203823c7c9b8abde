"""The deterministic scorer on real gold answers and hand-written responses."""

from __future__ import annotations

import pytest

from freshwiki.benchmarks import Output, Sample, Task, load_scorer
from freshwiki.benchmarks.wikicontradict import (
    MatchScorer,
    WikiContradict,
    match_response,
    normalize,
)
from freshwiki.benchmarks.wikicontradict._match import (
    answer_key,
    classify,
    conflict_cue,
    key_present,
    preference_cue,
)
from freshwiki.errors import FreshwikiError


def test_normalize_folds_numbers_dates_and_accents() -> None:
    assert normalize("On 21st August, 1968 the twelfth of 1,195 Ships") == [
        "on", "21", "august", "1968", "the", "12", "of", "1195", "ship",
    ]
    assert normalize("forty-two gliders at Ében-Émael, Sept. 1.50, the 1890s") == [
        "42", "glider", "at", "eben", "emael", "september", "1.5", "the", "1890s",
    ]


def _found(answer: str, other: str, question: str, response: str) -> bool:
    return key_present(answer_key(answer, other, question), response)


# (answer, other answer, question, response, found?) -- gold answers are real dataset values.
CASES = [
    ("6 ft 8 in", "6 ft 9 in", "How tall is Tyler Mane?", "He is 6 feet 8 inches tall.", True),
    ("6 ft 9 in", "6 ft 8 in", "How tall is Tyler Mane?", "He is 6 feet 8 inches tall.", False),
    ("August 21st 1968", "27 August 1968", "What date was Julian Lewis Jones born?",
     "He was born on 21 August 1968.", True),
    ("27 August 1968", "August 21st 1968", "What date was Julian Lewis Jones born?",
     "He was born on 21 August 1968.", False),
    ("May 1993", "April 1993", "In what year and month did mass production of the Fourth "
     "Generation (A80) Toyota Supra begin?", "Mass production began in May 1993.", True),
    ("April 1993", "May 1993", "In what year and month did mass production of the Fourth "
     "Generation (A80) Toyota Supra begin?", "Mass production began in May 1993.", False),
    # both answers are in the question: the key falls back to what tells them apart
    ("Cashel King Cormacs ", "Knockavilla–Donaskeigh Kickhams", "Did Ger Browne joined the "
     "Knockavilla–Donaskeigh Kickhams club or the Cashel King Cormacs club?",
     "He joined the Cashel King Cormacs club.", True),
    ("Knockavilla–Donaskeigh Kickhams", "Cashel King Cormacs ", "Did Ger Browne joined the "
     "Knockavilla–Donaskeigh Kickhams club or the Cashel King Cormacs club?",
     "He joined the Cashel King Cormacs club.", False),
    ("Herschel Levi", "Herschel HaLevi", "What is Heinrich Mark birth name?",
     "His birth name was Herschel Levi.", True),
    ("Herschel HaLevi", "Herschel Levi", "What is Heinrich Mark birth name?",
     "His birth name was Herschel Levi.", False),
    ("Three", "Two", "How many monks know the secret recipe of Chartreuse?",
     "Only 3 monks know it.", True),
    ("Two", "Three", "How many monks know the secret recipe of Chartreuse?",
     "Only 3 monks know it.", False),
    # a parenthetical conversion is an alternative form of the same answer
    ("43 miles (69 km)", "80 km", "How far is Angermünde from Berlin?",
     "It lies about 69 km from Berlin.", True),
    ("80 km", "43 miles (69 km)", "How far is Angermünde from Berlin?",
     "It lies about 69 km from Berlin.", False),
    ("42", "41", "During the Battle of Fort Ében-Émael, how many gliders were used by the German "
     "army in the attack?", "Forty-two gliders took off from Cologne.", True),
    ("It is held together by wooden pegs, with no glue.",
     "It is held together by overlapping segments joined by wood glue.",
     "How is the Loretto Chapel staircase held together?",
     "The stair is held together by wooden pegs and no glue at all.", True),
    ("It is held together by overlapping segments joined by wood glue.",
     "It is held together by wooden pegs, with no glue.",
     "How is the Loretto Chapel staircase held together?",
     "The stair is held together by wooden pegs and no glue at all.", False),
    ("Yes", "No", "Is the Baltic Sea considered a type of mediterranean sea?",
     "Yes, it is listed among the mediterranean seas.", True),
    ("No", "Yes", "Is the Baltic Sea considered a type of mediterranean sea?",
     "Yes, it is listed among the mediterranean seas.", False),
]


@pytest.mark.parametrize(("answer", "other", "question", "response", "found"), CASES)
def test_answer_found_in_response(
    answer: str, other: str, question: str, response: str, found: bool
) -> None:
    assert _found(answer, other, question, response) is found


def test_conflict_and_preference_cues() -> None:
    assert conflict_cue("The passages contradict each other.") == "contradict"
    assert conflict_cue("Sources disagree on the date.") == "disagree"
    assert conflict_cue("There is no contradiction between the passages.") is None
    assert conflict_cue("Passage 1 says 1934, while passage 2 says 1933.") == (
        "Passage 1 ... passage 2"
    )
    assert conflict_cue("It opened in 1934.") is None
    assert preference_cue("Passage 2 is more reliable.") == "more reliable"
    assert preference_cue("The 1933 date is likely a typo.") == "likely a typo"
    assert preference_cue("It is unclear which is correct.") is None


@pytest.mark.parametrize(
    ("mode", "found1", "found2", "conflict", "preference", "label"),
    [
        ("both", True, True, True, False, "correct"),
        ("both", True, True, True, True, "partially_correct"),
        ("both", True, True, False, False, "incorrect"),  # merged as if both were true
        ("both", True, False, True, False, "partially_correct"),
        ("both", False, True, False, False, "partially_correct"),
        ("both", False, False, True, False, "incorrect"),
        ("passage1", True, False, False, False, "correct"),
        ("passage1", True, True, False, False, "partially_correct"),
        ("passage1", False, True, False, False, "incorrect"),
        ("passage2", False, True, False, False, "correct"),
        ("passage2", True, False, False, False, "incorrect"),
        ("closed_book", False, True, False, False, "correct"),
        ("closed_book", True, True, False, False, "partially_correct"),
        ("closed_book", True, True, True, False, "correct"),
        ("closed_book", False, False, False, False, "incorrect"),
    ],
)
def test_label_rules(
    mode: str, found1: bool, found2: bool, conflict: bool, preference: bool, label: str
) -> None:
    assert classify(mode, found1, found2, conflict, preference) == label  # type: ignore[arg-type]


def test_yes_no_question_answered_by_attribution() -> None:
    q, a1, a2 = "Can Aedes albopictus breed in running water?", "No", "Yes"
    prose = (
        "Passage 1 says flowing water will not be a breeding spot, while passage 2 says it "
        "can also breed in running water."
    )
    assert match_response("both", q, a1, a2, prose).label == "correct"
    # "no" inside a phrase is not the answer No; stating a conflict alone names neither side
    vague = "The passages conflict, so no definite answer can be given."
    assert match_response("both", q, a1, a2, vague).label == "incorrect"
    assert match_response("both", q, a1, a2, "No, it cannot.").label == "partially_correct"
    both = "One passage says yes, the other says no."
    assert match_response("both", q, a1, a2, both).label == "correct"


def _task(bench: WikiContradict, sample_id: str, template: str) -> Task:
    sample = next(s for s in bench.samples() if s.id == sample_id)
    return bench.render(sample, template)


async def test_scorer_on_real_tasks(wikicontradict: WikiContradict) -> None:
    scorer = load_scorer("wikicontradict-match", None)
    assert isinstance(scorer, MatchScorer)
    both = _task(wikicontradict, "wc-015-q1", "5")
    score = await scorer.score(
        both, Output(text="Sources differ: one passage gives 6 ft 8 in, the other 6 ft 9 in.")
    )
    assert (score.label, score.value) == ("correct", 1.0)
    assert score.data["answer1"] is True and score.data["answer2"] is True
    assert score.data["conflict"] == "differ"
    score = await scorer.score(both, Output(text="He is 6 ft 9 in (2.06 m) tall."))
    assert (score.label, score.value) == ("partially_correct", 0.5)
    assert "answer 1 missing" in score.explanation
    only_a = _task(wikicontradict, "wc-015-q1", "2")
    score = await scorer.score(only_a, Output(text="He is 6 ft 9 in (2.06 m) tall."))
    assert (score.label, score.value) == ("incorrect", 0.0)
    only_b = _task(wikicontradict, "wc-015-q1", "3")
    score = await scorer.score(only_b, Output(text="He is 6 ft 9 in (2.06 m) tall."))
    assert score.label == "correct"
    score = await scorer.score(
        _task(wikicontradict, "wc-015-q1", "1"), Output(text="")
    )
    assert score.label == "incorrect"


async def test_scorer_refuses_a_sample_without_two_answers() -> None:
    task = Task(sample=Sample(id="x", input="q?", targets=("a",)), template="4", messages=(),
                query="q?")
    with pytest.raises(FreshwikiError, match="sample x has 1 gold answers"):
        await MatchScorer().score(task, Output(text="a"))
