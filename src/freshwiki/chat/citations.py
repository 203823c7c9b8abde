"""Turn the model's ``[n]`` markers into the reply's citations, while the text streams.

Prompts number passages by their number in the turn's :class:`PassageBook`; the reply
numbers its citations 1..m in order of first use, so a reader sees [1] before [2]. Since
"order of first use" is streaming order, the rewrite can happen on the fly: the text a
client streams is exactly :attr:`Reply.text`. A marker whose number points at nothing the
composer was shown is removed with the space before it; "[2, 5]" becomes "[1][2]" (one
bracket per citation keeps markers trivially parseable for clients).

Only a possible marker start (``[`` followed by digits, commas, spaces) and trailing
whitespace are held back between deltas, so streaming stays token by token.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from freshwiki.chat._types import Citation, Evidence

_COMPLETE = re.compile(r"(\s*)\[([\d\s,;]+)\]")
_HELD = re.compile(r"\s*(?:\[[\d\s,;]*)?$")
_LONGEST_MARKER = 24


class CitationRewriter:
    """Feed it deltas, emit what :meth:`feed` and :meth:`finish` return (see module docs).

    Args:
        lookup: The passage a raw number refers to, or ``None`` when it points nowhere.
    """

    def __init__(self, lookup: Callable[[int], Evidence | None]) -> None:
        self._lookup = lookup
        self._pending = ""
        self._started = False
        self._numbers: dict[str, int] = {}
        self._cited: list[Evidence] = []
        self.raw = ""
        """Everything fed, unchanged (to check the model's own citations)."""

    @property
    def citations(self) -> tuple[Citation, ...]:
        """The citations used so far, in number order."""
        return tuple(Citation(i, e) for i, e in enumerate(self._cited, start=1))

    def _rewrite(self, space: str, inside: str) -> str:
        out = []
        for token in re.findall(r"\d+", inside):
            evidence = self._lookup(int(token))
            if evidence is None:
                continue
            number = self._numbers.get(evidence.passage_id)
            if number is None:
                self._cited.append(evidence)
                number = self._numbers[evidence.passage_id] = len(self._cited)
            marker = f"[{number}]"
            if marker not in out:
                out.append(marker)
        return space + "".join(out) if out else ""

    def _emit(self, text: str) -> str:
        if not self._started:
            text = text.lstrip()
            self._started = bool(text)
        return text

    def feed(self, delta: str) -> str:
        """Text to show for ``delta`` (possibly empty while a marker is incomplete)."""
        self.raw += delta
        buffer = self._pending + delta
        out = []
        pos = 0
        for match in _COMPLETE.finditer(buffer):
            out.append(buffer[pos:match.start()])
            out.append(self._rewrite(match.group(1), match.group(2)))
            pos = match.end()
        rest = buffer[pos:]
        held = _HELD.search(rest)
        cut = held.start() if held is not None else len(rest)
        if len(rest) - cut > _LONGEST_MARKER:
            cut = len(rest)
        out.append(rest[:cut])
        self._pending = rest[cut:]
        return self._emit("".join(out))

    def finish(self) -> str:
        """The end of the text.

        Only trailing whitespace or an unfinished marker can be held back, and both are
        dropped at the end, so this returns ``""``; call it anyway to reset the state.
        """
        self._pending = ""
        return ""

    def rewrite(self, text: str) -> str:
        """Rewrite a whole text at once."""
        return self.feed(text) + self.finish()
