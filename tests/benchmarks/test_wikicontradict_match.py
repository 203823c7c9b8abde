"""The deterministic scorer on real gold answers and hand-written responses."""

from __future__ import annotations

import itertools

import pytest

from freshwiki.benchmarks import Output, Sample, Task, load_scorer
from freshwiki.benchmarks.wikicontradict import (
    TEMPLATES,
    Facts,
    MatchScorer,
    WikiContradict,
    classify,
    match_response,
    normalize,
)
from freshwiki.benchmarks.wikicontradict._match import (
    answer_key,
    conflict_cue,
    key_present,
    no_conflict_cue,
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


def test_no_conflict_cues() -> None:
    assert no_conflict_cue("No, the passages do not contradict each other.") == (
        "not contradict")
    assert no_conflict_cue("There is no contradiction: both say 1934.") == "no contradiction"
    assert no_conflict_cue("Both passages are consistent with each other.") == "consistent"
    assert no_conflict_cue("The passages agree on the date.") == "agree"
    # negated agreement, "inconsistent" and "disagree" are claims of a conflict, not of none
    assert no_conflict_cue("The passages do not agree on the date.") is None
    assert no_conflict_cue("The passages are inconsistent.") is None
    assert no_conflict_cue("The passages disagree.") is None
    # a negation about something else, too far from the conflict word, does not count
    assert no_conflict_cue("Passage 1 says the grooves did not form in a single event, which "
                           "contradicts passage 2.") is None


# The paper's rules (section 3.4, Table 2), one row per case, written from its text:
# (template, answer 1 given, answer 2 given, conflict, preference, says no conflict, label)
RULES = [
    # templates 1, 4, 5, 5.1: both answers + contradiction, no preference -> correct
    ("4", True, True, True, False, False, "correct"),
    ("4", True, True, True, True, False, "partially_correct"),  # a preference
    ("4", True, True, False, False, False, "incorrect"),  # merged as if both were true
    ("4", True, False, True, False, False, "partially_correct"),  # one answer only
    ("4", False, True, False, False, False, "partially_correct"),
    ("4", False, False, True, False, False, "incorrect"),  # conflict named, no answer
    ("5", True, True, True, False, False, "correct"),
    ("5.1", False, True, False, True, False, "partially_correct"),
    # template 1: the gold list is still both answers, so one answer is only partial
    ("1", False, True, False, False, False, "partially_correct"),
    ("1", True, True, True, False, False, "correct"),
    ("1", True, True, False, False, False, "incorrect"),
    ("1", False, False, False, False, False, "incorrect"),
    # templates 2 and 3: correct or incorrect only; the other passage's answer spoils it
    ("2", True, False, False, False, False, "correct"),
    ("2", True, True, False, False, False, "incorrect"),
    ("2", False, True, False, False, False, "incorrect"),
    ("3", False, True, False, False, False, "correct"),
    ("3", True, False, False, False, False, "incorrect"),
    ("3", True, True, True, False, False, "incorrect"),
    # 5.3 (revised passages): the kept answer (target 1), not the dropped one
    ("5.3", True, False, False, False, False, "correct"),
    ("5.3", True, False, True, False, False, "correct"),  # a wrong hedge adds no answer
    ("5.3", True, True, True, False, False, "incorrect"),
    ("5.3", False, True, False, False, False, "incorrect"),
    # 5.2: the contradiction found and explained by what each passage says
    ("5.2", True, True, True, False, False, "correct"),
    ("5.2", True, True, True, True, False, "correct"),  # a preference does not undo it
    ("5.2", False, False, True, False, False, "incorrect"),  # found, not explained
    ("5.2", True, False, True, False, False, "incorrect"),
    ("5.2", True, True, False, False, True, "incorrect"),  # says there is none
    ("5.2", True, True, True, False, True, "incorrect"),  # says both
    # 5.4 (revised passages): says there is no contradiction, and does not claim one
    ("5.4", True, False, False, False, True, "correct"),
    ("5.4", False, False, False, False, True, "correct"),
    ("5.4", True, False, False, False, False, "incorrect"),  # never says either way
    ("5.4", True, True, True, False, True, "incorrect"),  # makes one up after all
    ("5.4", True, True, True, False, False, "incorrect"),
]


@pytest.mark.parametrize(
    ("template", "found1", "found2", "conflict", "preference", "none", "label"), RULES)
def test_label_rules_per_template(
    template: str, found1: bool, found2: bool, conflict: bool, preference: bool, none: bool,
    label: str,
) -> None:
    facts = Facts(found1, found2, conflict, preference, none)
    assert classify(TEMPLATES[template], facts) == label


def test_two_class_templates_never_give_partial_credit() -> None:
    facts = [Facts(*bits) for bits in itertools.product((False, True), repeat=5)]
    for template, spec in TEMPLATES.items():
        labels = {classify(spec, f) for f in facts}
        expected = 3 if template in ("1", "4", "5", "5.1") else 2
        assert len(labels) == expected and set(spec.classes) == labels, template


def test_yes_no_question_answered_by_attribution() -> None:
    q, a1, a2 = "Can Aedes albopictus breed in running water?", "No", "Yes"
    prose = (
        "Passage 1 says flowing water will not be a breeding spot, while passage 2 says it "
        "can also breed in running water."
    )
    both_rule = TEMPLATES["4"]
    assert match_response(both_rule, q, a1, a2, prose).label == "correct"
    # "no" inside a phrase is not the answer No; stating a conflict alone names neither side
    vague = "The passages conflict, so no definite answer can be given."
    assert match_response(both_rule, q, a1, a2, vague).label == "incorrect"
    assert match_response(both_rule, q, a1, a2, "No, it cannot.").label == "partially_correct"
    both = "One passage says yes, the other says no."
    assert match_response(both_rule, q, a1, a2, both).label == "correct"


def test_a_second_passage_that_repeats_the_first_is_one_side() -> None:
    q, a1, a2 = "Can Aedes albopictus breed in running water?", "No", "Yes"
    both_rule = TEMPLATES["4"]
    same = ("Passage 1 says the mosquito can breed in running water. Passage 2 also says it "
            "breeds in streams.")
    assert match_response(both_rule, q, a1, a2, same).label == "partially_correct"
    confirms = "Yes. Passage 1 says so, and the second passage confirms it."
    assert match_response(both_rule, q, a1, a2, confirms).label == "partially_correct"
    # The word "also" far from the source phrase is not a repetition.
    far = ("Passage 1 says flowing water is no breeding spot; passage 2 says that in some "
           "towns the mosquito was also seen breeding in running water.")
    assert match_response(both_rule, q, a1, a2, far).label == "correct"


def test_both_answers_called_consistent_are_merged_not_contrasted() -> None:
    q, a1, a2 = "When did the Ashford bridge open?", "1901", "1903"
    agree = ("Passage 1 says the bridge opened in 1901 and passage 2 says 1903; the two "
             "passages agree.")
    assert match_response(TEMPLATES["5"], q, a1, a2, agree).label == "incorrect"
    # A conflict word outweighs a stray agreement word.
    stated = ("Passage 1 says 1901, passage 2 says 1903, so they contradict each other and do "
              "not agree.")
    assert match_response(TEMPLATES["5"], q, a1, a2, stated).label == "correct"


@pytest.mark.parametrize(
    ("ending", "label"),
    [
        # Both years, then a closing sentence that settles on one: a preference.
        ("Therefore, the answer is 1901.", "partially_correct"),
        ("These differ, so the bridge opened in 1903.", "partially_correct"),
        ("Therefore, the answer is:\n\n1903.", "partially_correct"),
        # Closings that keep both sides open are no preference.
        ("Therefore, the two passages disagree about the year.", "correct"),
        ("So it depends on which source is right.", "correct"),
        ("Therefore, there is not enough information to say which year is right.", "correct"),
        ("So the bridge opened in 1901 or in 1903.", "correct"),
        # "but" inside a conclusion that still picks one side does not open it up again.
        ("Therefore, the bridge opened in 1903, but later than planned.", "partially_correct"),
        # "so" inside a clause that is not a conclusion of the answer is left alone.
        ("Both say it was so narrow that carts could not cross.", "correct"),
    ],
)
def test_a_closing_conclusion_that_picks_one_answer_is_a_preference(ending: str,
                                                                    label: str) -> None:
    q, a1, a2 = "When did the Ashford bridge open?", "1901", "1903"
    response = ("Passage 1 says the Ashford bridge opened in 1901, while passage 2 says it "
                f"opened in 1903. {ending}")
    assert match_response(TEMPLATES["5"], q, a1, a2, response).label == label


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
    assert (score.label, score.value) == ("partially_correct", 0.0)
    assert "answer 1 missing" in score.explanation
    only_a = _task(wikicontradict, "wc-015-q1", "2")
    score = await scorer.score(only_a, Output(text="He is 6 ft 9 in (2.06 m) tall."))
    assert (score.label, score.value) == ("incorrect", 0.0)
    only_b = _task(wikicontradict, "wc-015-q1", "3")
    score = await scorer.score(only_b, Output(text="He is 6 ft 9 in (2.06 m) tall."))
    assert score.label == "correct"
    # template 2 with the other passage's figure added: the paper has no partial class here
    score = await scorer.score(only_a, Output(text="He is 6 ft 8 in, or 6 ft 9 in by some "
                                                   "accounts."))
    assert (score.label, score.value) == ("incorrect", 0.0)
    closed = _task(wikicontradict, "wc-015-q1", "1")
    score = await scorer.score(closed, Output(text=""))
    assert score.label == "incorrect"
    # closed book, one of the two gold answers: partially correct (was "correct" before)
    score = await scorer.score(closed, Output(text="Tyler Mane is 6 ft 9 in tall."))
    assert (score.label, score.data["rule"]) == ("partially_correct", "both_answers")


async def test_scorer_refuses_a_sample_without_two_answers() -> None:
    task = Task(sample=Sample(id="x", input="q?", targets=("a",)), template="4", messages=(),
                query="q?")
    with pytest.raises(FreshwikiError, match="sample x has 1 gold answers"):
        await MatchScorer().score(task, Output(text="a"))


async def test_detection_templates_on_real_and_revised_tasks(
    wikicontradict: WikiContradict,
) -> None:
    # wc-034-q1: "What day did Karl Weyprecht die?" -- 2 March 1881 vs 3 March 1881; the
    # shipped revision changes passage 2 to 2 March, so 5.3 / 5.4 keep answer 1.
    scorer = MatchScorer()
    find = _task(wikicontradict, "wc-034-q1", "5.2")
    cases_52 = [
        ("Yes, they contradict each other: passage 1 gives 2 March 1881 as the day he died, "
         "passage 2 gives 3 March 1881.", "correct"),
        ("Yes, the passages contradict each other.", "incorrect"),  # not explained
        ("No, they do not contradict each other; he died on 2 March 1881.", "incorrect"),
    ]
    for text, label in cases_52:
        assert (await scorer.score(find, Output(text=text))).label == label, text
    revised = _task(wikicontradict, "wc-034-q1", "5.4")
    assert revised.sample.targets == ("2 March 1881", "3 March 1881")
    cases_54 = [
        ("No. Both passages say he died on 2 March 1881, so there is no contradiction.",
         "correct"),
        ("The passages are consistent: he died on 2 March 1881.", "correct"),
        ("Yes: passage 1 says 2 March while passage 2 contradicts it.", "incorrect"),
        ("He died on 2 March 1881.", "incorrect"),  # never says whether they conflict
    ]
    for text, label in cases_54:
        assert (await scorer.score(revised, Output(text=text))).label == label, text
    answer = _task(wikicontradict, "wc-034-q1", "5.3")
    assert (await scorer.score(answer, Output(text="He died on 2 March 1881."))).label == (
        "correct")
    assert (await scorer.score(answer, Output(text="He died on 3 March 1881."))).label == (
        "incorrect")
    # the yes/no twin keeps "Yes" (he did die on 2 March) after the revision
    yes_no = _task(wikicontradict, "wc-034-q2", "5.3")
    assert yes_no.sample.targets == ("Yes", "No")
    assert (await scorer.score(yes_no, Output(text="Yes, he died on 2 March 1881."))).label == (
        "correct")
