"""A seeded slice of the wikitext cleaner's fuzzing (experiments/reliability.py runs 10^5).

Real page windows with markup spliced in, markup soup and deep nesting: the cleaner falls
back to its regex strip on anything its parser cannot take, so nothing may raise at all.
"""

from __future__ import annotations

from tests.fuzzing import fuzz, wikitext_target


def test_cleaner_never_raises_on_a_seeded_slice() -> None:
    outcome = fuzz(wikitext_target(), 300, seed=16)
    assert outcome.inputs == 300
    assert outcome.unhandled == [], outcome.as_dict()
    assert not outcome.handled  # the fallback, not an error, handles what the parser cannot
