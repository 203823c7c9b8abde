"""GrowOVER's analysis of stored runs: RiLM's Tables 7 and 3, as report sections.

Kept out of the benchmark's own import graph (the benchmark never imports it), so changing how
results are analysed does not change the run ids of GrowOVER runs, which fingerprint the code
the benchmark runs.
"""

from freshwiki.benchmarks.growover.analysis._rilm import (
    DIALOGUE_SCORERS,
    GROWOVER,
    HIT,
    MODE_ROWS,
    QA_SCORERS,
    RILM_SCORERS,
    GrowOverAnalysis,
    RiLMSample,
    RiLMSection,
    StageTable,
    rilm_samples,
    rilm_sections,
)

__all__ = [
    "DIALOGUE_SCORERS",
    "GROWOVER",
    "HIT",
    "MODE_ROWS",
    "QA_SCORERS",
    "RILM_SCORERS",
    "GrowOverAnalysis",
    "RiLMSample",
    "RiLMSection",
    "StageTable",
    "rilm_samples",
    "rilm_sections",
]
