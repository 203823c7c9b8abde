"""Edit summaries that announce a revert: supporting evidence, never the only signal.

Summaries are free text that editors write, and "rv" or "revert" sometimes describes an edit
that restores nothing (or one that restores only part); so a summary alone never labels an
edit rejected. It lowers the share of the edit that must be undone in the text before the
revision counts as a revert (see :class:`~freshwiki.changes.edits.LabelOptions`).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["REVERT_COMMENT_RE", "is_revert_comment"]

REVERT_COMMENT_RE: Final = re.compile(
    r"\b(?:undid|undo(?:ne|ing)?|revert(?:ed|ing|s)?|rollback|rolled\s+back|rvv?|rvt)\b",
    re.IGNORECASE,
)
"""Tool summaries (Undo: "Undid revision N by", rollback: "Reverted edits by", Twinkle,
ClueBot NG: "Reverting possible vandalism") and the editors' abbreviations "rv", "rvv"."""


def is_revert_comment(comment: str | None) -> bool:
    """Whether an edit summary says the edit reverts or undoes something."""
    return bool(comment) and REVERT_COMMENT_RE.search(comment or "") is not None
