"""The deterministic scorer: find each gold answer in the response, and a stated conflict.

No model is involved, so it is free, instant and reproducible, and it gives a floor to compare
the LLM judge with. It is deliberately simple and its limits are known: paraphrased long
answers and yes/no answers given only as prose ("it was not a single event") are missed.

How an answer is found. Text is normalised (Unicode accents folded, lower case, punctuation
dropped, thousands separators and ordinal suffixes removed, number words and ordinals turned
into digits, month abbreviations and units spelled one way, light suffix stemming). A gold
answer's parenthetical conversion ("65 km/h (40 mph)") and ``/`` or ``or`` split it into
alternatives, any of which may match. Each alternative's *key* is its content words minus
the question's words and minus the other answer's words (what tells the two answers apart),
falling back to less distinctive sets when that leaves nothing. A key with numbers matches when
every number, and any month name, is in the response; a key without numbers matches when at
least half of its words are there (exactly, or by a 0.85 string similarity for words of five
letters or more). A yes/no pair matches on the words "yes" and "no" standing alone ("No, it
was not", "... says no."; not "no definite answer"); a response that attributes
claims to two different passages on a yes/no question is taken to give both answers, since
there are only two (merely saying "the passages conflict" gives neither), unless the second
passage is said to repeat the first ("passage 2 also says", "the second passage confirms"):
that is one side told twice.

How a conflict is found: words such as conflict/contradict/inconsistent/discrepancy/disagree,
"differ", "vary", or claims attributed to two different passages ("passage 1 ... passage 2",
"one source ... another"); a cue preceded by a negation ("no contradiction") does not count.
A preference is a cue such as "more reliable", "likely correct", "is a typo", "the correct
figure is"; a cue after "unclear", "whether", "which", "cannot" ... does not count. A closing
conclusion that settles on one side ("... while passage 2 says Y. Therefore, the answer is X")
is a preference too, unless it hedges or restates both answers (:func:`conclusion_cue`). A statement
that there is no conflict is a negated conflict word ("do not contradict", "no discrepancy") or
an agreement word ("consistent", "agree") that is not itself negated. Such a statement, with
no conflict word beside it, also cancels a conflict read from attribution alone: "passage 1
says X, passage 2 says Y, and they agree" sets the two side by side without seeing the clash.

Labels follow the paper's rules per template (``_templates``: ``both_answers``, ``one_answer``,
``detect``, ``no_conflict``), applied by :func:`classify` to what was found; the LLM judge
applies the same function to what it read.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from dataclasses import dataclass

from freshwiki.benchmarks.wikicontradict._labels import VALUES, Label
from freshwiki.benchmarks.wikicontradict._templates import (
    TemplateSpec,
    gold_answers,
    template_spec,
)
from freshwiki.seams import Output, Score, Task

_STOP = frozenset(
    [
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or",
        "but", "is", "are", "was", "were", "be", "been", "being", "it", "its", "as", "that", "this",
        "these", "those", "which", "who", "whom", "whose", "what", "when", "where", "why", "how",
        "did", "does", "do", "has", "have", "had", "about", "than", "there", "their", "his", "her",
        "he", "she", "they", "them", "we", "you", "i", "into", "onto", "per", "also", "only", "any",
        "all", "some", "such", "so", "if", "then", "very", "will", "would", "can", "could",
        "should", "might",
    ]
)
_CARDINALS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    "twenty",
)
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(_CARDINALS)}
_NUMBER_WORDS.update(
    {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
     "eighty": "80", "ninety": "90", "hundred": "100", "dozen": "12"}
)
_ORDINAL_WORDS = (
    "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth",
)
_ORDINALS = {w: str(i) for i, w in enumerate(_ORDINAL_WORDS)}
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
_MONTH_ABBREVIATIONS = {m[:3]: m for m in _MONTHS} | {"sept": "september"}
_UNITS = {
    "feet": "ft", "foot": "ft", "inches": "inch", "metres": "m", "meters": "m", "metre": "m",
    "meter": "m", "kilometres": "km", "kilometers": "km", "kilometre": "km", "kilometer": "km",
    "miles": "mi", "mile": "mi", "kilograms": "kg", "kilogram": "kg", "lbs": "lb",
}
_COMPOUND = re.compile(
    r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ]"
    r"(one|two|three|four|five|six|seven|eight|nine)\b"
)
_TOKEN = re.compile(r"\d+(?:\.\d+)?s?|[^\W\d_]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?s?")

_CONFLICT = re.compile(
    r"\b(?:conflict\w*|contradict\w*|inconsisten\w*|discrepan\w*|disagree\w*|at odds|"
    r"(?:do|does) not (?:agree|match)|differ(?:s|ing)?|vary|varies|"
    r"different (?:answers?|information|accounts?|figures?|numbers?|dates?|values?|years?|"
    r"versions?|claims?))\b",
    re.IGNORECASE,
)
_FIRST_SOURCE = re.compile(
    r"\b(?:(?:passage|source|article|context|text)\s*(?:1|one|a)\b|first (?:passage|source|"
    r"article|text)|one (?:passage|source|article|text)|some sources)",
    re.IGNORECASE,
)
_SECOND_SOURCE = re.compile(
    r"\b(?:(?:passage|source|article|context|text)\s*(?:2|two|b)\b|second (?:passage|source|"
    r"article|text)|(?:the )?(?:other|another) (?:passage|source|article|text)|other sources|"
    r"the other\b|others)",
    re.IGNORECASE,
)
_SAME_SIDE = re.compile(
    _SECOND_SOURCE.pattern
    + r",?\s+(?:also|likewise|similarly|too|as well|confirms?|corroborates?|echoes|repeats|"
    r"agrees?|supports? (?:this|that|it)|(?:says|states|mentions) the same)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:more (?:reliable|accurate|likely|credible|trustworthy|plausible|authoritative)|"
    r"most likely|(?:likely|probably) (?:correct|accurate|right|wrong|an error|a typo|"
    r"a mistake|outdated)|(?:is|was|seems|appears to be) (?:correct|accurate|right|wrong|"
    r"incorrect|mistaken|an error|a typo|a mistake|outdated)|should be trusted|"
    r"(?:i|we) (?:would )?(?:trust|go with|prefer)|prefer(?:red|able)?|the (?:correct|actual|"
    r"true|right) (?:answer|figure|date|number|year|value|one))\b",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"(?:(?:^|(?<=[.!?:;\n]))\s*(?:therefore|thus|hence|so|in conclusion|in summary|overall|to "
    r"conclude)\b|,\s*so\b)[,:]?\s*(?P<rest>[^.!?\n]*(?:(?<=:)\s*[^.!?\n]*)?)",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:both|either|neither|conflict\w*|contradict\w*|inconsisten\w*|discrepan\w*|"
    r"disagree\w*|differ\w*|unclear|uncertain\w*|unknown|depend\w*|cannot|can't|not (?:possible|"
    r"clear|certain|enough)|insufficient|(?:no|enough) information|whether|passages?|sources?|"
    r"however|while|whereas)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:no|not|without|never|nor|neither|none)\b|n't\b", re.IGNORECASE)
_UNDECIDED = re.compile(
    r"\b(?:no|not|without|never|neither|cannot|unclear|whether|which|unsure|impossible|hard|"
    r"difficult)\b|n't\b",
    re.IGNORECASE,
)
_NEGATED_CONFLICT = re.compile(
    r"(?:\b(?:no|not|never|without|neither|nor|none)\b|n't\b)[^.;:!?]{0,20}?"
    r"\b(?:conflict\w*|contradict\w*|inconsisten\w*|discrepan\w*|disagree\w*|differ\w*)",
    re.IGNORECASE,
)
_AGREEMENT = re.compile(
    r"\b(?:consistent|agree|agrees|in agreement|compatible|align|aligns|corroborate\w*)\b",
    re.IGNORECASE,
)
_PARENTHETICAL = re.compile(r"\([^()]*\)")
_ALTERNATIVES = re.compile(r"\s*/\s*|\s+or\s+", re.IGNORECASE)


def normalize(text: str) -> list[str]:
    """``text`` as comparable tokens (see the module docstring)."""
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    folded = re.sub(r"(?<=\d),(?=\d{3}\b)", "", folded)  # 1,195 -> 1195
    folded = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", folded)  # 21st -> 21
    folded = _COMPOUND.sub(_compound_number, folded)  # forty-two -> 42
    out: list[str] = []
    for tok in _TOKEN.findall(folded):
        if _NUMBER.fullmatch(tok):
            out.append(_canonical_number(tok))
            continue
        tok = _NUMBER_WORDS.get(tok) or _ORDINALS.get(tok) or tok
        tok = _MONTH_ABBREVIATIONS.get(tok, tok)
        tok = _UNITS.get(tok, tok)
        out.append(_stem(tok))
    return out


def _compound_number(m: re.Match[str]) -> str:
    return str(int(_NUMBER_WORDS[m.group(1)]) + int(_NUMBER_WORDS[m.group(2)]))


def _canonical_number(tok: str) -> str:
    decade = tok.endswith("s")
    digits = tok[:-1] if decade else tok
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    digits = digits.lstrip("0") or "0"
    return digits + ("s" if decade else "")


def _stem(tok: str) -> str:
    if tok.isdigit() or tok in _MONTHS:
        return tok
    if tok.endswith("ing") and len(tok) > 5:
        return tok[:-3]
    if tok.endswith("ed") and len(tok) > 4:
        return tok[:-2]
    if tok.endswith("s") and not tok.endswith("ss") and len(tok) > 3:
        return tok[:-1]
    return tok


def _is_number(tok: str) -> bool:
    return bool(_NUMBER.fullmatch(tok))


def _content(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in _STOP]


def _yes_no(answer: str) -> str | None:
    word = re.sub(r"[^a-z]", "", answer.lower())
    return word if word in ("yes", "no") else None


@dataclass(frozen=True)
class AnswerKey:
    """What must appear in a response for one gold answer to count as given.

    Attributes:
        alternatives: Token sets, any one of which suffices.
        polarity: ``"yes"``/``"no"`` for a yes/no answer (matched by those words instead).
    """

    alternatives: tuple[tuple[str, ...], ...]
    polarity: str | None = None


def answer_key(answer: str, other: str, question: str) -> AnswerKey:
    """The key for ``answer``, made distinct from ``other`` and from what ``question`` says."""
    if _yes_no(answer) and _yes_no(other):
        return AnswerKey((), polarity=_yes_no(answer))
    q_words = set(normalize(question))
    other_words = set(normalize(other))
    keys: list[tuple[str, ...]] = []
    for alt in _alternatives(answer):
        words = normalize(alt)
        content = _content(words)
        for candidate in (
            [t for t in content if t not in q_words and t not in other_words],
            [t for t in content if t not in other_words],
            [t for t in content if t not in q_words],
            content,
            words,
        ):
            if candidate:
                keys.append(tuple(dict.fromkeys(candidate)))
                break
    return AnswerKey(tuple(keys))


def _alternatives(answer: str) -> list[str]:
    """``answer`` split into the forms any of which counts: "43 miles (69 km)" -> both."""
    parts = [_PARENTHETICAL.sub(" ", answer), *(p[1:-1] for p in _PARENTHETICAL.findall(answer))]
    found = [alt.strip() for part in parts for alt in _ALTERNATIVES.split(part)]
    return [alt for alt in found if normalize(alt)] or [answer]


def _word_present(word: str, response: set[str]) -> bool:
    if word in response:
        return True
    if len(word) < 5 or _is_number(word):
        return False
    return any(
        len(r) >= 4 and difflib.SequenceMatcher(None, word, r).ratio() >= 0.85 for r in response
    )


def key_present(key: AnswerKey, response: str) -> bool:
    """Whether ``response`` gives the answer ``key`` describes."""
    if key.polarity is not None:
        return _says(key.polarity, response)
    words = set(normalize(response))
    for alt in key.alternatives:
        numbers = [t for t in alt if _is_number(t)]
        if numbers:
            months = [t for t in alt if t in _MONTHS]
            if all(n in words for n in numbers) and all(m in words for m in months):
                return True
            continue
        found = sum(_word_present(t, words) for t in alt)
        if found >= math.ceil(len(alt) / 2):
            return True
    return False


def _says(word: str, text: str) -> bool:
    """Whether ``text`` answers ``word`` ("yes"/"no") as a reply, not as in "no definite answer".

    The word counts where it stands alone: at the start of a sentence or clause, or before
    punctuation ("No, it was not", "one says yes, the other says no.").
    """
    pattern = (
        rf"(?:^|[.!?;:\"'(]\s*){word}\b|\b{word}\s*(?:[,.;:!?\"')]|$)"
    )
    return re.search(pattern, text.strip(), re.IGNORECASE) is not None


def _cue(pattern: re.Pattern[str], text: str, negation: re.Pattern[str]) -> str | None:
    """The first match of ``pattern`` in ``text`` without ``negation`` just before it."""
    for m in pattern.finditer(text):
        before = text[max(0, m.start() - 30) : m.start()]
        if not negation.search(before):
            return m.group(0)
    return None


def conflict_cue(text: str) -> str | None:
    """The words by which ``text`` states that its sources conflict, if it does."""
    cue = _cue(_CONFLICT, text, _NEGATION)
    return cue if cue is not None else attribution_cue(text)


def attribution_cue(text: str) -> str | None:
    """The words by which ``text`` attributes claims to two different sources, if it does."""
    first, second = _FIRST_SOURCE.search(text), _SECOND_SOURCE.search(text)
    if first and second:
        return f"{first.group(0)} ... {second.group(0)}"
    return None


def preference_cue(text: str) -> str | None:
    """The words by which ``text`` favours one side, if it does."""
    return _cue(_PREFERENCE, text, _UNDECIDED)


def conclusion_cue(text: str, keys: tuple[AnswerKey, AnswerKey] | None = None) -> str | None:
    """A closing "therefore ..." that settles the question without a hedge, if there is one.

    "Passage 1 says X, while passage 2 says Y. Therefore, the answer is X." gives both answers
    and then picks one, which the paper's rules call partially correct; the explicit cues of
    :func:`preference_cue` ("more reliable") miss it. The cue is "therefore", "thus", "hence",
    "so", "in conclusion", "overall" at the start of a sentence, or ", so" inside one; what
    follows up to the end of the sentence (and past a colon: "the answer is: X") is the
    conclusion. A conclusion that keeps both sides open (it names the passages or sources,
    says both, either, depends, conflict, unclear, no information ...) is no preference, and
    neither is one that restates both gold answers (``keys``: "so it was laid down in 1746 and
    on 8 January 1747" picks no side).
    """
    for m in _CONCLUSION.finditer(text):
        rest = m.group("rest").strip()
        if not rest or _HEDGE.search(rest):
            continue
        if keys is not None and all(key_present(key, rest) for key in keys):
            continue
        return m.group(0).strip()
    return None


def no_conflict_cue(text: str) -> str | None:
    """The words by which ``text`` says its sources do not conflict, if it does."""
    negated = _NEGATED_CONFLICT.search(text)
    if negated is not None:
        return negated.group(0)
    return _cue(_AGREEMENT, text, _NEGATION)


@dataclass(frozen=True)
class Facts:
    """What a response says, as far as the paper's rules care.

    Attributes:
        answer1: It gives the first gold answer.
        answer2: It gives the second gold answer.
        conflict: It says the sources contradict each other (or attributes different answers
            to different passages).
        preference: It favours one answer over the other.
        no_conflict: It says the sources agree, or do not contradict each other.
    """

    answer1: bool
    answer2: bool
    conflict: bool
    preference: bool
    no_conflict: bool = False


@dataclass(frozen=True)
class MatchResult:
    """What the matcher found in one response."""

    answer1: bool
    answer2: bool
    conflict: str | None
    preference: str | None
    no_conflict: str | None
    label: Label


def classify(spec: TemplateSpec, facts: Facts) -> Label:
    """The paper's label for a response to ``spec`` saying ``facts`` (rules in ``_templates``)."""
    found = (facts.answer1, facts.answer2)
    if spec.rule == "both_answers":
        if all(found):
            if facts.preference:
                return "partially_correct"
            return "correct" if facts.conflict else "incorrect"
        return "partially_correct" if any(found) else "incorrect"
    if spec.rule == "one_answer":
        given, other = found[spec.expected], found[1 - spec.expected]
        return "correct" if given and not other else "incorrect"
    if spec.rule == "detect":
        detected = facts.conflict and not facts.no_conflict
        return "correct" if detected and all(found) else "incorrect"
    return "correct" if facts.no_conflict and not facts.conflict else "incorrect"


def match_response(
    spec: TemplateSpec, question: str, answer1: str, answer2: str, response: str
) -> MatchResult:
    """Label ``response`` to ``question`` whose gold answers are ``answer1``/``answer2``."""
    keys = (answer_key(answer1, answer2, question), answer_key(answer2, answer1, question))
    found1, found2 = (key_present(key, response) for key in keys)
    if spec.rule == "no_conflict":
        # Saying what each passage states is expected here, and is no claim of a conflict.
        conflict = _cue(_CONFLICT, response, _NEGATION)
    else:
        conflict = conflict_cue(response)
    if _yes_no(answer1) and _yes_no(answer2) and attribution_cue(response) is not None:
        if _SAME_SIDE.search(response) is None:
            found1 = found2 = True  # "passage 1 says X, passage 2 says not X": both sides
        elif spec.rule == "both_answers" and not (found1 or found2):
            # "Passage 1 says X. Passage 2 also says X.": one side, in prose; which one the
            # words do not tell, and the rule needs only how many.
            found1 = True
    preference = preference_cue(response) or conclusion_cue(response, keys)
    agreement = no_conflict_cue(response)
    if agreement is not None and _cue(_CONFLICT, response, _NEGATION) is None:
        # "Passage 1 says X, passage 2 says Y; the passages agree." names two sources but calls
        # them consistent: no conflict is acknowledged (both answers so given are merged as if
        # both were true, the paper's incorrect).
        conflict = None
    facts = Facts(found1, found2, conflict is not None, preference is not None,
                  agreement is not None)
    return MatchResult(found1, found2, conflict, preference, agreement, classify(spec, facts))


class MatchScorer:
    """Scorer ``wikicontradict-match``: the deterministic matcher as a :class:`Scorer`."""

    name = "wikicontradict-match"

    async def score(self, task: Task, output: Output) -> Score:
        """Label ``output`` by the rules of ``task``'s template.

        Raises:
            FreshwikiError: the sample does not carry two gold answers, or the template is
                not one of WikiContradict's.
        """
        answer1, answer2 = gold_answers(task)
        spec = template_spec(task.template)
        result = match_response(spec, task.sample.input, answer1, answer2, output.text)
        parts = [
            f"answer 1 {'found' if result.answer1 else 'missing'}",
            f"answer 2 {'found' if result.answer2 else 'missing'}",
            f"conflict: {result.conflict!r}" if result.conflict else "no conflict stated",
        ]
        if result.preference:
            parts.append(f"preference: {result.preference!r}")
        if result.no_conflict:
            parts.append(f"says no conflict: {result.no_conflict!r}")
        return Score(
            value=VALUES[result.label],
            label=result.label,
            explanation="; ".join(parts),
            data={
                "rule": spec.rule,
                "answer1": result.answer1,
                "answer2": result.answer2,
                "conflict": result.conflict,
                "preference": result.preference,
                "no_conflict": result.no_conflict,
            },
        )

