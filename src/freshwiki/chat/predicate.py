"""The predicate check: a sentence's value, subject and relation, stated together in one sentence.

The checked mode answers first and checks after (:mod:`freshwiki.chat.checked`). Its first
check is this one, made of rules and no model call: a sentence of the answer is *stated* by
an evidence sentence when that one sentence (read with its article's title, which names the
subject of a lead's "It was founded in 2008") states

- every name, date and number of the answer sentence (:func:`~freshwiki.chat.verify.key_spans`):
  the value and what it is about; and
- the relation: most words of the answer sentence that are neither part of those spans nor of
  the title, nor function words. "Anita Brown was born on 8 September 2006" has every span in
  "Anita Brown ... died on September 8, 2006" (a closed-book answer the cloze reading
  SUPPORTED by reading the date back), but not its relation, "born".

Words match by stem (a shared prefix of five letters, or the whole shorter word of four) and
through a short table of forms that share no prefix ("began" / "begin", "won" / "win"). Two
ways of writing a relation that leads use all the time count as words too: a life span in
parentheses after a name, "Alexei Navalny (4 June 1976 - 16 February 2024)", states "born" and
"died" with those dates.

The rules never read a value the sentence does not have, so they cannot *refute*; that is
the cloze reading's job (:mod:`freshwiki.chat.verify`). They find the evidence sentence a
claim rests on, and they withhold a claim whose value no evidence states with its subject.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from freshwiki.chat._evidence import STOPWORDS, content_words
from freshwiki.chat._types import Evidence
from freshwiki.chat.verify import focus_of, key_spans, same_value, span_positions, stated
from freshwiki.corpus import split_sentences

# "According to the Wikipedia passage, ..." and the like: about the answer, not in it. A model
# answering from passages opens a sentence with them; every word of it would be a "relation"
# no evidence states.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:according to|based on|as (?:stated|mentioned|described) in|as per|from|per)"
    r"(?:\s+the\s+information(?:\s+(?:provided|given))?\s+in)?"
    r"\s+(?:the\s+)?(?:(?:provided|given|retrieved|above|wikipedia|first|second)\s+)*"
    r"(?:passages?|sources?|texts?|articles?|information|context|wikipedia)"
    r"(?:\s*\[[\d,\s]+\])?(?:\s+(?:above|provided|given))?"
    r"(?:\s+(?:on|about|for|of)\s+[^,]{1,60})?\s*,\s*"
    r"|(?:the\s+)?(?:(?:provided|given|wikipedia|first|second)\s+)*(?:passages?|sources?|"
    r"articles?|texts?)(?:\s*\[[\d,\s]+\])?(?:\s+(?:on|about|for|of)\s+[^,]{1,60}?)?"
    r"\s+(?:states?|says?|mentions?|notes?|indicates?|"
    r"shows?|reports?)\s+(?:that\s+)?)",
    re.IGNORECASE,
)

# Forms of one relation that share no five-letter prefix.
_FORMS = {
    "began": "begin", "begun": "begin", "beginning": "begin", "start": "begin",
    "started": "begin", "starting": "begin", "won": "win", "winning": "win", "winner": "win",
    "victory": "win", "born": "birth", "died": "death", "dead": "death", "die": "death",
    "dying": "death", "killed": "death", "wrote": "write", "written": "write",
    "writer": "write", "author": "write", "authored": "write", "founded": "found",
    "founder": "found", "founding": "found", "foundation": "found", "established": "found",
    "built": "build", "construction": "build", "constructed": "build", "led": "lead",
    "leader": "lead", "held": "hold", "hosted": "host", "located": "locat",
    "location": "locat", "situated": "locat", "lies": "locat", "directed": "direct",
    "director": "direct", "produced": "produc", "producer": "produc", "sung": "sing",
    "sang": "sing", "singer": "sing", "made": "make", "released": "releas",
    "release": "releas", "premiered": "premier", "premiere": "premier", "aired": "air",
    "took": "take", "taken": "take", "became": "become", "chose": "choose",
    "chosen": "choose", "fought": "fight", "lost": "lose", "defeated": "defeat",
    "beat": "defeat", "beaten": "defeat", "named": "name", "called": "name",
    "known": "name", "played": "play", "player": "play", "plays": "play",
    "ended": "end", "ending": "end", "ends": "end", "finished": "end", "concluded": "end",
    "opened": "open", "opening": "open", "closed": "clos", "closing": "clos",
    "closure": "clos", "dissolved": "dissolv", "disbanded": "dissolv", "defunct": "dissolv",
    "joined": "join", "joining": "join", "left": "leav", "leaving": "leav",
    "arrived": "arriv", "arrival": "arriv", "departed": "depart", "departure": "depart",
    "losing": "lose", "loser": "lose", "birthplace": "birth", "death": "death",
    "went": "go", "gone": "go", "goes": "go", "going": "go",
}
# Words that carry no relation of their own (beyond STOPWORDS): what an answer adds around
# its facts ("is also", "currently", "approximately").
_FILLER = frozenset({
    "also", "currently", "approximately", "about", "around", "roughly", "nearly", "some",
    "several", "many", "various", "well", "known", "famous", "notable", "both", "each",
    "later", "still", "name", "full", "date", "year", "time", "period", "number", "total",
    "type", "kind", "part", "located", "situated", "found", "taking", "take", "place", "held",
    "hold", "based",
})
_LIFE_SPAN = re.compile(
    r"\(([^()]*?\b\d{3,4})\s*[–—-]\s*([^()]*?\b\d{3,4}|present)\s*\)")
_BORN = re.compile(r"\((?:born|b\.)\s+[^()]*\d{3,4}[^()]*\)", re.IGNORECASE)


_UNIT_ORDINALS = ("", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
                  "eighth", "ninth")
_TEEN_ORDINALS = ("tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
                  "sixteenth", "seventeenth", "eighteenth", "nineteenth")
_TENS_ORDINALS = ("", "tenth", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth",
                  "seventieth", "eightieth", "ninetieth")
ORDINALS = frozenset(_UNIT_ORDINALS[1:] + _TEEN_ORDINALS + _TENS_ORDINALS[1:] + ("hundredth",))
"""Which one of a series a sentence says its value is: never taken on a paraphrase either.
Asked for an album's second, third and fourth singles, the small model named the lead single
each time, and "relation in other words (missing 'second')" released all three (in sample,
WikiChat topic 18)."""

STRONG = frozenset({
    "begin", "end", "win", "lose", "defeat", "birth", "death", "found", "dissolv", "elect",
    "award", "marri", "succeed", "replac", "captain", "coach", "manag", "direct", "write",
    "compos", "design", "invent", "discover", "coin", "host", "open", "clos", "join", "leav",
}) | ORDINALS
"""Relations that a paraphrase must not be trusted to carry: a value stated in the passage
without the relation ("India" near "beat", not "won") is a different fact, and these are where
a small model mixes roles up (who won, who directed, when born or died), and the place in a
series (:data:`ORDINALS`). For the rest ("lived" / "a resident of", "produced" / "created
for"), a cloze reading that gives the value back may stand in."""

# Relations that exclude each other: a value stated with one is no evidence for the other.
_CONTRARY = {
    "birth": "death", "death": "birth", "begin": "end", "end": "begin", "win": "lose",
    "lose": "win", "found": "dissolv", "dissolv": "found", "open": "clos", "clos": "open",
    "join": "leav", "leav": "join", "arriv": "depart", "depart": "arriv",
}


# Directions that exclude each other: "flows eastward" against "flows westward" (a held-out
# false premise the answer restated, released because a direction is no name or number).
DIRECTIONS = {
    "eastward": "westward", "westward": "eastward", "northward": "southward",
    "southward": "northward", "east": "west", "west": "east", "north": "south",
    "south": "north", "upstream": "downstream", "downstream": "upstream",
}


def contrary(statement: Statement, sentence: str) -> bool:
    """Whether the evidence states a relation *opposed* to one the sentence claims.

    "Anita Brown was born on September 8, 2006" against "... she died on September 8, 2006":
    the evidence lacks "born" and has its contrary, "died". A cloze reading of the date agrees
    (it was read back from that sentence), so this rule is what keeps such a sentence out.
    A direction is opposed too ("eastward" / "westward"), but not by a name's word ("South
    Africa").
    """
    return opposed_words(statement) is not None


def opposed_words(statement: Statement) -> tuple[str, str] | None:
    """The first missing relation word whose contrary the evidence states, with that contrary.

    As stems: ``("eastward", "westward")``, ``("birth", "death")``; ``None`` when there is none.
    """
    text = f"{statement.evidence.title}. {statement.sentence}"
    have = _evidence_words(text)
    named = {w for span in key_spans(text) for w in content_words(span)}
    plain = {stem(w) for w in content_words(text) if w not in named}
    for word in statement.missing:
        other = _CONTRARY.get(word) or next(
            (v for k, v in _CONTRARY.items() if _alike(word, k)), None)
        if other and any(_alike(other, h) for h in have):
            return word, other
        other = DIRECTIONS.get(word)
        if other and other in plain:
            return word, other
    return None


def strip_lead_in(sentence: str) -> str:
    """``sentence`` without an opening "According to the passage," (capital restored)."""
    rest = _LEAD_IN.sub("", sentence, count=1)
    if rest is sentence or not rest:
        return sentence
    return rest[:1].upper() + rest[1:]


def stem(word: str) -> str:
    """A word's comparison key: its table form, else the word itself (compared by prefix)."""
    return _FORMS.get(word, word)


def alike(a: str, b: str) -> bool:
    """Whether two stems are one word (a shared five-letter prefix, or a short word whole)."""
    return _alike(a, b)


def _alike(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 5:
        return long_.startswith(short[:5]) and abs(len(a) - len(b)) <= 4
    return len(short) == 4 and long_.startswith(short) and len(long_) - len(short) <= 3


def relation_words(sentence: str, title: str = "") -> list[str]:
    """What the sentence says *about* its spans: its other content words, as stems.

    Words of its names, dates and numbers, of the article title and filler words are left out.
    """
    taken = {w for span in key_spans(sentence) for w in content_words(span)}
    taken |= set(content_words(title))
    out = []
    for word in content_words(sentence):
        if word in taken or word in _FILLER or word in STOPWORDS or len(word) < 3:
            continue
        if stem(word) in _FILLER:  # "named" is "name", "held" is "hold"
            continue
        out.append(stem(word))
    return list(dict.fromkeys(out))


def _evidence_words(text: str) -> set[str]:
    """Stems of an evidence sentence, with the relations a life span in parentheses states."""
    words = {stem(w) for w in content_words(text)}
    if re.search(r"\bsince\b", text, re.IGNORECASE):
        words.add("begin")  # "has been taking place ... since 7 October 2023"
    if _LIFE_SPAN.search(text):
        words |= {"birth", "death"}
    if _BORN.search(text):
        words.add("birth")
    if _FIRST.search(text):
        words.add("first")  # "released ... as the lead single": its first single
    for match in _DIGIT_ORDINAL.finditer(text):  # "the 25th season" states "fifth"
        words.add(_ordinal_word(int(match.group(1))))
    return words


_DIGIT_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)


def _ordinal_word(number: int) -> str:
    """The last word of ``number`` as an ordinal in words: 25 → "fifth", 12 → "twelfth"."""
    if 10 <= number % 100 <= 19:
        return _TEEN_ORDINALS[number % 100 - 10]
    if number % 10:
        return _UNIT_ORDINALS[number % 10]
    return _TENS_ORDINALS[number % 100 // 10] if number % 100 else "hundredth"


_FIRST = re.compile(r"(?i)\b(?:lead single|debut|inaugural|maiden|earliest)\b")
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def stated_phrase(span: str, text: str) -> bool:
    """:func:`~freshwiki.chat.verify.stated`, and a number in a name stays with that name.

    "2023 Cricket World Cup" is not stated by "India at the Cricket World Cup. India ... were
    runners-up in 2003 and 2023": the year must stand within a few words of the name.
    """
    if not stated(span, text):
        return False
    alone = r"(?<!\w)(\d+)(?:st|nd|rd|th)?(?!\w)"  # a number, not inside "M109R"
    numbers = re.findall(alone, span)
    name = re.sub(alone, " ", span).strip()
    if not numbers or not any(c.isalpha() for c in name):
        return True
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        number = token == numbers[0] or (token.startswith(numbers[0]) and not token[
            len(numbers[0]):len(numbers[0]) + 1].isdigit())
        if number and stated(name, " ".join(tokens[max(0, i - 6):i + 8])):
            return True
    return False


_IRREGULAR = frozenset({
    "won", "win", "wins", "beat", "beats", "began", "begin", "begins", "begun", "wrote",
    "write", "writes", "written", "built", "build", "builds", "led", "lead", "leads", "held",
    "hold", "holds", "sang", "sung", "sing", "sings", "made", "make", "makes", "took", "take",
    "takes", "became", "become", "becomes", "chose", "chosen", "fought", "lost", "lose",
    "loses", "left", "leave", "leaves", "founded", "directed", "produced", "released",
    "hosted", "defeated", "opened", "closed", "joined", "married", "went", "gone", "go",
    "goes", "came", "come", "comes", "got", "gave", "given", "put", "ran", "run", "saw",
    "seen", "said", "told", "sold", "bought", "brought", "caught", "taught", "thought", "fell",
    "felt", "found", "kept", "knew", "known", "lay", "laid", "meant", "met", "paid", "rose",
    "sat", "sent", "set", "shot", "shut", "spent", "stood", "struck", "swam", "threw",
    "understood", "woke", "wore",
})
_AUXILIARY = re.compile(
    r"\s*(?:(?:has|have|had|was|were|is|are|did|does|do|also|then|eventually|later|finally|"
    r"first|once|been|be|will|would|jointly|together)\s+)*")


def is_verb(token: str) -> bool:
    """:func:`_verb`, or a form of "be", "have" or "do"."""
    return token.lower() in _BE_HAVE_DO or _verb(token)


_BE_HAVE_DO = frozenset({"is", "are", "was", "were", "be", "been", "has", "have", "had", "do",
                         "does", "did", "will", "would", "can", "could"})


def _verb(token: str) -> bool:
    """A verb form: past tense or participle, or an irregular form ("won", "began")."""
    lower = token.lower()
    return lower in _IRREGULAR or (len(lower) > 4 and lower.endswith(("ed", "ing")))


def agents(text: str, relation: str) -> set[str]:
    """The names doing ``relation`` (a :func:`stem`) in ``text``, where a verb says so.

    The name right before the verb, past auxiliaries only ("Australia won", "India have won",
    "India and Australia beat"); the name after "by" in a passive ("was won by Australia"); for
    "to win" or a participle after a comma ("..., winning their sixth title") the sentence's
    first name. Nouns ("the election", "its founder") and names used as adjectives ("the
    Australian rock group that released") name no doer here.
    """
    names = [(start, end, t) for start, end, t in span_positions(text)
             if not any(c.isdigit() for c in t)]
    found: set[str] = set()
    for match in _TOKEN.finditer(text):
        word = match.group(0)
        if not _verb(word) or not _alike(stem(word.lower()), relation):
            continue
        # "was won by Australia", "was founded in 2008 by Pirate Bay staff"
        passive = re.match(r"(?:\s+[^\s,;.()]+){0,4}?\s+by\s+(?:the\s+)?",
                           text[match.end():match.end() + 60])
        if passive:
            at = match.end() + passive.end()
            after = [t for start, _, t in names if start == at]
            if after:
                found.add(after[0])
                continue
        before = [(start, end, t) for start, end, t in names if end <= match.start()]
        if not before:
            continue
        prefix = text[:match.start()]
        if re.search(r"(?:\bto|,)\s*$", prefix):
            found.add(before[0][2])  # "to win", ", winning": the clause's subject
            continue
        _, end, name = before[-1]
        if not _AUXILIARY.fullmatch(text[end:match.start()]):
            continue
        found.add(name)
        while len(before) > 1 and re.fullmatch(  # "India and Australia beat"
                r"\s*(?:,|and|,\s*and)\s*", text[before[-2][1]:before[-1][0]]):
            before.pop()
            found.add(before[-1][2])
    return found


def _same_agent(ours: set[str], theirs: set[str]) -> bool:
    return any(same_value(a, b) or stated(a, b) or stated(b, a) for a in ours for b in theirs)


def roles_agree(sentence: str, evidence: str) -> bool:
    """Whether the evidence has no other doer for a strong relation of the sentence.

    "Poland won the 2024 United Cup by defeating Germany" against "Germany defeated Poland 2-1
    in the tennis final to win the 2024 United Cup": same names, same words, roles swapped.
    """
    for word in relation_words(sentence):
        if not any(_alike(word, k) for k in STRONG):
            continue
        ours, theirs = agents(sentence, word), agents(evidence, word)
        if ours and theirs and not _same_agent(ours, theirs):
            return False
    return True


@dataclass(frozen=True)
class Statement:
    """How well one evidence passage states an answer sentence.

    Attributes:
        evidence: The passage.
        sentence: The evidence sentence(s) holding the values (one, or two in a row).
        spans: Whether every value of the answer sentence (the names, dates and numbers the
            question did not give) is in ``sentence``, and every other span (what the
            question asked about) in the passage or its title.
        relation: Share of the answer sentence's relation words that ``sentence`` states
            (1.0 when there are none).
        missing: The relation words it does not state.
        roles: Whether it has no other doer for a strong relation (:func:`roles_agree`).
        predicate: The answer sentence's words naming what its subject *is* (after "is a",
            "was the"): "Tania Chernova was a Soviet writer" under a lead calling her a sniper
            has its name and "Soviet" right, its predicate wrong.
    """

    evidence: Evidence
    sentence: str
    spans: bool
    relation: float
    missing: tuple[str, ...]
    roles: bool = True

    @property
    def holds(self) -> bool:
        """Every span and role, and every relation word (one may miss of four or more)."""
        return self.spans and self.roles and not (len(self.missing) > 1 or (
            self.missing and self.relation < 0.75))

    predicate: tuple[str, ...] = ()

    @property
    def strong_missing(self) -> tuple[str, ...]:
        """The missing relation words that must not be paraphrased.

        A :data:`STRONG` relation, or the noun a copula says the subject is ("was a Russian
        *actress*").
        """
        return tuple(w for w in self.missing
                     if w in self.predicate or any(_alike(w, k) for k in STRONG))


_COPULA = re.compile(
    r"(?i)\b(?:is|was|are|were|became|remains?|served as)\s+(?:a|an|the|one of the)\s+"
    r"([^,.;:()\[]+)")


def predicate_words(sentence: str) -> tuple[str, ...]:
    """The stems of what a copula says the subject is: "was a Russian actress" → actress.

    Up to the first preposition or clause break: "is the capital of France" → capital.
    """
    found = _COPULA.search(sentence)
    if found is None:
        return ()
    phrase = re.split(r"(?i)\b(?:of|in|for|from|with|by|at|on|to|who|which|that|and)\b",
                      found.group(1))[0]
    # ... and up to a verb after the noun: "were the reigning champions going into the
    # season" says they are champions; "going" is the question's framing, not what they are.
    tokens = _TOKEN.findall(phrase)
    for i, token in enumerate(tokens):
        if i and _verb(token) and not _verb(tokens[i - 1]):
            phrase = " ".join(tokens[:i])
            break
    names = {w for span in key_spans(phrase) for w in content_words(span)}
    return tuple(stem(w) for w in content_words(phrase) if w not in names
                 and w not in _FILLER)


def values_of(sentence: str, question: str | None) -> list[str]:
    """What the sentence answers with: its new names, dates and numbers, else its new words.

    A value is what the question did not give (:func:`~freshwiki.chat.verify.focus_of`).
    When that leaves no name, date or number ("Syringomas typically first appear during
    adolescence", "the distribution becomes more spread out"), the answer is the sentence's
    last run of words the question does not contain: "adolescence", "more spread out".
    """
    return focus_of(sentence, question) or answer_phrase(sentence, question or "")


_LEADING = frozenset({
    "during", "within", "through", "throughout", "between", "among", "under", "until", "since",
    "becomes", "become", "became", "called", "named", "known", "considered", "usually",
    "typically", "generally", "mainly", "mostly", "often",
})


def answer_phrase(sentence: str, question: str) -> list[str]:
    """The sentence's last run of words the question does not contain, as one phrase.

    Small words may sit inside the run; prepositions and linking verbs that open it are left
    out ("during adolescence" → "adolescence"). ``[]`` when there is none.
    """
    asked = {stem(w) for w in content_words(question)}
    tokens = list(_TOKEN.finditer(sentence))
    run: list[re.Match[str]] = []
    best: list[re.Match[str]] = []
    for token in tokens:
        word = token.group(0).lower()
        new = (word not in STOPWORDS and word not in _FILLER and not word.isdigit()
               and not any(_alike(stem(w), a) for w in content_words(word) for a in asked))
        if new:
            run.append(token)
            best = list(run)
        elif run and word in STOPWORDS and word not in {"and", "or", "but"}:
            run.append(token)
        else:
            run = []
    while best and best[0].group(0).lower() in _LEADING:
        best = best[1:]
    if not best:
        return []
    return [sentence[best[0].start():best[-1].end()]]


def best_statement(sentence: str, question: str | None, passages: Sequence[Evidence],
                   values: Sequence[str] | None = None) -> Statement | None:
    """The passage and sentence(s) that state ``sentence`` best (spans first, then relation).

    The values (:func:`~freshwiki.chat.verify.focus_of` the question) must be in one evidence
    sentence, or, for several values, two in a row that hold one each ("Composed of writers
    ... Andy Samberg, Akiva Schaffer, and Jorma Taccone" after "... comedy troupe The Lonely
    Island"); what the question named may be anywhere in the passage, since a lead names its
    subject once and then says "He" or "It". A single value never borrows its relation from
    the next sentence: "India and Australia beat New Zealand and South Africa ... to advance
    to the final" followed by "Australia won by 6 wickets" does not state that India won.
    ``values`` overrides what counts as the values (:func:`values_of`).
    """
    values = list(values) if values is not None else values_of(sentence, question)
    units = [u for u in _units(sentence) if any(c.isdigit() for c in u)]
    subject = [s for s in key_spans(sentence) if s not in values
               and not any(s in u for u in units)]
    subject += [u for u in units if not any(u == v for v in values)]
    predicate = predicate_words(sentence)
    best: Statement | None = None
    for evidence in passages:
        whole = evidence.titled
        subject_ok = all(stated_phrase(span, whole) or _dated_by_title(span, evidence)
                         for span in subject)
        wanted = relation_words(sentence, evidence.title)
        pieces = [p.text for p in split_sentences(evidence.text)]
        windows = list(pieces)
        if len(values) > 1:  # two values may sit in two sentences in a row, one in each
            windows += [f"{a} {b}" for a, b in itertools.pairwise(pieces)
                        if any(stated(v, a) for v in values)
                        and any(stated(v, b) for v in values)]
        # What the subject *is* ("a liverwort") is a property of the subject: the article may
        # say it in another sentence, or another passage of its lead, than the one with the
        # value ("... is a species of liverwort ... It is known from South Africa").
        described = set().union(*(_evidence_words(e.titled) for e in passages
                                  if e.title == evidence.title))
        for window in windows:
            text = f"{evidence.title}. {window}"
            spans_ok = subject_ok and all(stated_phrase(span, text) for span in values)
            have = _evidence_words(text)
            missing = tuple(w for w in wanted if not any(_alike(w, h) for h in (
                described if w in predicate else have)))
            share = 1.0 - len(missing) / len(wanted) if wanted else 1.0
            found = Statement(evidence, window, spans_ok, share, missing,
                              roles_agree(sentence, window), predicate)
            if best is None or (found.spans, found.holds, found.relation, -len(window)) > (
                    best.spans, best.holds, best.relation, -len(best.sentence)):
                best = found
    return best


def _dated_by_title(span: str, evidence: Evidence) -> bool:
    """A dated name ("2023 SAG-AFTRA") whose name the passage has and whose year its title has.

    "The 2023 SAG-AFTRA strike ... ended on November 9" against the lead of "2023-24 United
    States network television schedule", which says "SAG-AFTRA (which began on July 14 and
    ended on November 9)": the article is about that year, so its SAG-AFTRA is that year's.
    "India at the Cricket World Cup" has no 2023 in its title, so "2023 Cricket World Cup"
    still needs the year beside the name in its text.
    """
    numbers = re.findall(r"(?<!\w)\d{3,4}(?!\w)", span)
    name = re.sub(r"(?<!\w)\d+(?:st|nd|rd|th)?(?!\w)", " ", span).strip()
    if not numbers or not any(c.isalpha() for c in name):
        return False
    return (all(stated(n, evidence.title) for n in numbers)
            and stated(name, evidence.titled))


def _units(sentence: str) -> list[str]:
    from freshwiki.chat.coverage import subject_units

    return subject_units(sentence)


def anchored(sentence: str, question: str | None, statement: Statement,
             passages: Sequence[Evidence]) -> str:
    """The sentence with its value taken from the evidence sentence that states its relation.

    Two cases, both for a strong relation (:data:`STRONG`):

    - the relation is stated, but with another doer: "Poland won the 2024 United Cup by
      defeating Germany" against "Germany defeated Poland 2-1 ... to win the 2024 United
      Cup": the evidence's doer takes the claim's place (the two swap when both are named);
    - the relation is missing from the sentence that states the value: "India won the 2023
      Cricket World Cup" against a passage naming India as host, and "won" only in "Australia
      won by 6 wickets, winning their sixth Cricket World Cup title". When exactly one
      sentence of the article's passages states the relation, and it has exactly one value
      of the kind the claim's is (a name for a name, a date or number for a date or number)
      that the question does not give, that value replaces the claim's.

    The result must pass the predicate check itself. ``""`` otherwise.
    """
    source = statement.evidence
    asked = question or ""
    fixed = ""
    if not statement.roles:
        fixed = _swap_doer(sentence, statement)
    elif statement.strong_missing:
        values = focus_of(sentence, question)
        if len(values) != 1:
            return ""
        [value] = values
        numeric = any(c.isdigit() for c in value)
        carriers = []
        for passage in passages:  # the article's passages: a lead may be cut in two
            if passage.title != source.title:
                continue
            for piece in split_sentences(passage.text):
                have = _evidence_words(f"{passage.title}. {piece.text}")
                if all(any(_alike(w, h) for h in have) for w in statement.strong_missing):
                    carriers.append(piece.text)
        if len(carriers) != 1:
            return ""
        candidates = [s for s in key_spans(carriers[0])
                      if any(c.isdigit() for c in s) == numeric and not stated(s, asked)
                      and not stated(s, source.title) and not stated(s, value)]
        if len(candidates) != 1:
            return ""
        fixed = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", candidates[0], sentence, count=1)
    if not fixed or fixed == sentence:
        return ""
    found = best_statement(fixed, question, passages)
    if found is None or not found.holds or contrary(found, fixed):
        return ""
    return fixed


def _swap_doer(sentence: str, statement: Statement) -> str:
    """The sentence with the evidence's doer of a strong relation in place of its own."""
    for word in relation_words(sentence):
        if not any(_alike(word, k) for k in STRONG):
            continue
        ours, theirs = agents(sentence, word), agents(statement.sentence, word)
        if len(ours) != 1 or len(theirs) != 1 or _same_agent(ours, theirs):
            continue
        [mine], [other] = ours, theirs
        at_mine = re.search(rf"(?<!\w){re.escape(mine)}(?!\w)", sentence)
        at_other = re.search(rf"(?<!\w){re.escape(other)}(?!\w)", sentence)
        if at_mine is None:
            return ""
        if at_other is None:
            return f"{sentence[:at_mine.start()]}{other}{sentence[at_mine.end():]}"
        first, second = sorted((at_mine, at_other), key=lambda m: m.start())
        return (f"{sentence[:first.start()]}{second.group(0)}"
                f"{sentence[first.end():second.start()]}{first.group(0)}"
                f"{sentence[second.end():]}")
    return ""
