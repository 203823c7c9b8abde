"""Chat latency's analysis of stored runs: seconds per turn and the ratio to rag's.

Kept out of the benchmark's own import graph, so changing how results are analysed does not
change the run ids. ``experiments/chat_latency.py`` writes its result file with
:func:`latency_row`.
"""

from freshwiki.benchmarks.chat_latency.analysis._tables import (
    ChatLatencyAnalysis,
    LatencyView,
    Tally,
    latency_row,
    latency_view,
    run_tally,
)

__all__ = [
    "ChatLatencyAnalysis",
    "LatencyView",
    "Tally",
    "latency_row",
    "latency_view",
    "run_tally",
]
