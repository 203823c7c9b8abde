"""The parts under :class:`~freshwiki.retrieval.HybridIndex`, by public name.

For measuring them one at a time: ``experiments/retrieval.py`` times BM25, the dense index,
fusion and the passage table apart.

Users of the index need none of these, so the package's own ``__init__`` does not list them;
and no other module imports this one, so naming them here changes nothing that runs (run ids
fingerprint the code a benchmark or system imports).
"""

from freshwiki.retrieval._bm25 import Hits
from freshwiki.retrieval._embed import EmbedProgress, Vectors
from freshwiki.retrieval._fusion import FusionMethod
from freshwiki.retrieval._hybrid import TABLE_DB
from freshwiki.retrieval._table import PassageTable

__all__ = ["TABLE_DB", "EmbedProgress", "FusionMethod", "Hits", "PassageTable", "Vectors"]
