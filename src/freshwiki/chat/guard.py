"""The last check before text reaches the user: no number or date that no evidence states.

Verification (stage 5) checks the draft's claims, but the final composer is a model too and
can still write a wrong date under a correct citation: Qwen2.5-1.5B, given a passage saying
the Israel-Hamas war began "since 7 October 2023", replied "began on July 1, 2021 [1]".
Numbers and dates are where such slips happen and where they are cheap to catch, so the
final stage's text passes through :class:`SentenceGuard`: text is released one sentence at
a time, and a sentence stating a number that appears in none of the evidence the composer
was given (passages, facts, supported claims), nor in the conversation, nor in today's date,
is withheld. Withheld sentences are kept for the trace (``TurnTrace.removed``).

Streaming is therefore sentence by sentence rather than token by token: the price of never
showing a sentence that then has to be taken back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from freshwiki.chat._evidence import content_words
from freshwiki.chat.verify import stated
from freshwiki.corpus import numbers_in

_MARKERS = re.compile(r"\[[\d\s,;]+\]")
# A piece ends after . ! ? (and any citation markers) and the whitespace after them, or
# after a line break, when more text follows. A digit or a lower-case letter next ("U. S.
# government", "No. 5") does not start a new sentence, nor does "[" (a citation marker
# belongs to the sentence before it); an abbreviation split anyway only makes the checked
# pieces smaller.
_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(?:[A-Z]|Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr|No|Nos|vs|Inc|Ltd|Co|Corp|Gen|Col|"
    r"Lt|Sgt|Capt|Gov|Sen|Rep|Rev|Fr|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)$"
)
_END = re.compile(r"(?:[.!?](?:\s*\[[\d\s,;]+\])*\s+|\n\s*)(?=[^\s\da-z\[])")


def _plain(sentence: str) -> str:
    """A sentence's words, lower-cased, without citation markers (to spot repeats)."""
    return " ".join(re.findall(r"\w+", _MARKERS.sub(" ", sentence).lower()))


# Words no sentence ends with: text ending in one was cut off ("... [1] He was").
_DANGLING = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "with", "by",
    "from", "as", "is", "was", "are", "were", "be", "been", "has", "had", "have", "he", "she",
    "it", "they", "his", "her", "its", "their", "who", "which", "that",
})
_LEADING_MARKERS = re.compile(r"^(\s*)((?:\[[\d\s,;]+\]\s*)+)(?=\S)")


def _markers_last(sentence: str) -> str:
    """Citation markers a sentence begins with, moved to its end, where all others are.

    The real composer once began a reply "[1] Two dozen tornadoes occurred ...".
    """
    match = _LEADING_MARKERS.match(sentence)
    if match is None:
        return sentence
    markers = "".join(_MARKERS.findall(match.group(2)))
    rest = sentence[match.end():]
    body = rest.rstrip()
    stop = body[-1] if body and body[-1] in ".!?" else ""
    body = body[:-1] if stop else body
    return f"{match.group(1)}{body} {markers}{stop}{rest[len(rest.rstrip()):]}"


def pieces(text: str) -> list[str]:
    """``text`` cut where the guard cuts it ("David B. Kennedy" stays one sentence)."""
    out, start = [], 0
    for match in _END.finditer(text):
        if _ABBREVIATION.search(text[start:match.start()]):
            continue
        out.append(text[start:match.end()])
        start = match.end()
    out.append(text[start:])
    return out


class SentenceGuard:
    """Releases text sentence by sentence, withholding those with unsupported numbers.

    It also cites what the model forgot to: an accepted sentence without any ``[n]`` gets
    the marker of the citable source sharing the most of its content words, if that is at
    least half of them (a 1.5B composer drops markers now and then, mostly on its shortest
    and most literal sentences).

    And it withholds a sentence that restates a refuted claim: one stating a value the
    verifier found wrong ("India") in the words of that claim, unless it also states what
    the evidence gives instead ("Australia beat India in the final" stays).

    Args:
        sources: Texts whose numbers may be stated (evidence, conversation, today's date).
        citable: ``(passage number, text)`` of the evidence the composer was shown.
        refuted: ``(claim, wrong values, right values)`` of each refuted claim.
        said: Earlier assistant replies: a sentence repeating one of theirs word for word
            is withheld (a follow-up was sometimes answered with the previous reply).
    """

    def __init__(self, sources: Iterable[str],
                 citable: Iterable[tuple[int, str]] = (),
                 refuted: Iterable[tuple[str, Sequence[str], Sequence[str]]] = (),
                 said: Iterable[str] = ()) -> None:
        self._said = {_plain(piece) for text in said for piece in pieces(text)} - {""}
        self._refuted = [(set(content_words(claim)), list(wrong), list(right))
                         for claim, wrong, right in refuted]
        self.allowed: set[str] = set()
        for text in sources:
            self.allowed |= numbers_in(_MARKERS.sub(" ", text))
        self._citable = [(n, set(content_words(text))) for n, text in citable]
        self._numbers = {n for n, _ in self._citable}
        self._buffer = ""
        self.removed: list[str] = []

    def _check(self, sentence: str) -> str:
        sentence = _markers_last(sentence)
        numbers = numbers_in(_MARKERS.sub(" ", sentence))
        if (not numbers <= self.allowed or self._restates_refuted(sentence)
                or _plain(sentence) in self._said):
            self.removed.append(sentence.strip())
            return ""
        if _plain(sentence):  # said once is enough (a reply repeated a sentence word for word)
            self._said.add(_plain(sentence))
        cited = {int(n) for m in _MARKERS.findall(sentence) for n in re.findall(r"\d+", m)}
        if cited & self._numbers or not self._citable:
            return sentence  # (markers pointing nowhere are removed later, by the rewriter)
        words = set(content_words(sentence))
        if len(words) < 3:
            return sentence
        best, number = max((len(words & source), n) for n, source in reversed(self._citable))
        if best / len(words) < 0.5:
            return sentence
        body = sentence.rstrip()
        return f"{body} [{number}]{sentence[len(body):]}"

    def _restates_refuted(self, sentence: str) -> bool:
        words = set(content_words(sentence))
        for claim_words, wrong, right in self._refuted:
            said = [w for w in wrong if stated(w, sentence)]
            if not said or any(stated(r, sentence) for r in right):
                continue
            context = claim_words - {w for v in said for w in content_words(v)}
            if not context or len(context & words) / len(context) >= 0.5:
                return True
        return False

    def feed(self, delta: str) -> str:
        """The complete, accepted sentences that ``delta`` finishes (often ``""``).

        A sentence is released with the whitespace after it, so a withheld one takes its
        own spacing along.
        """
        self._buffer += delta
        out = []
        start = 0
        while (match := _END.search(self._buffer, start)) is not None:
            if _ABBREVIATION.search(self._buffer, 0, match.start()):
                start = match.end()  # "U. S.", "Dr. Smith": not the end of a sentence
                continue
            piece, self._buffer = self._buffer[:match.end()], self._buffer[match.end():]
            start = 0
            out.append(self._check(piece))
        return "".join(out)

    def finish(self) -> str:
        """The last sentence, if accepted; a short unfinished fragment is withheld.

        The composer once stopped after "... when he retired. [1] He was".
        """
        rest, self._buffer = self._buffer, ""
        words = _MARKERS.sub(" ", rest).split()
        if words and words[-1].lower() in _DANGLING:
            self.removed.append(rest.strip())
            return ""
        return self._check(rest)
