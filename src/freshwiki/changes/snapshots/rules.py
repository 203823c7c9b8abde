"""The word-level rules the aligner's lexical step decides with, by public name.

``experiments/snapshot_diff.py`` counts how often each fires on real sentence pairs.

No other module imports this one, so naming them here changes nothing that runs.
"""

from freshwiki.changes.snapshots._text import negation_flipped, numbers_replaced

__all__ = ["negation_flipped", "numbers_replaced"]
