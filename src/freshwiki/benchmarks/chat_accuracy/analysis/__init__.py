"""Chat accuracy's analysis of stored runs: the per-kind table and paired differences vs rag.

Kept out of the benchmark's own import graph (the benchmark never imports it), so changing how
results are analysed does not change the run ids of chat_accuracy runs. The script
``experiments/chat_accuracy.py`` writes its result file with these same functions.
"""

from freshwiki.benchmarks.chat_accuracy.analysis._tables import (
    KIND_HEADINGS,
    SCORER,
    ChatAccuracyAnalysis,
    ChatAccuracyView,
    PairedRow,
    SystemRow,
    chat_accuracy_view,
    check_effect,
    cited_titles,
    headline,
    paired,
    reply_row,
    run_outcomes,
    share,
    summarise,
)

__all__ = [
    "KIND_HEADINGS",
    "SCORER",
    "ChatAccuracyAnalysis",
    "ChatAccuracyView",
    "PairedRow",
    "SystemRow",
    "chat_accuracy_view",
    "check_effect",
    "cited_titles",
    "headline",
    "paired",
    "reply_row",
    "run_outcomes",
    "share",
    "summarise",
]
