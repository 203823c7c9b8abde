"""WikiContradict's analysis of stored runs: the paper's Tables 2 and 5, as report sections.

Kept out of the benchmark's own import graph (the benchmark never imports it), so changing how
results are analysed does not change the run ids of WikiContradict runs.
"""

from freshwiki.benchmarks.wikicontradict.analysis._tables import (
    SHORT,
    TYPE_HEADINGS,
    TYPES,
    ContradictionTable,
    LabelShares,
    WikiContradictAnalysis,
    contradiction_tables,
)

__all__ = [
    "SHORT",
    "TYPES",
    "TYPE_HEADINGS",
    "ContradictionTable",
    "LabelShares",
    "WikiContradictAnalysis",
    "contradiction_tables",
]
