"""Analyses of the systems' stored runs, offered to reports.

WikiChat's analysis of the grounded system's turns: where replies come from, stage by stage.

Beside the systems, a layer below evaluation, and out of their import graph (no system imports
it), so changing an analysis does not change the run ids of the systems' runs.
"""

from freshwiki.systems.analysis._grounded import (
    ALL,
    FACTUALITY,
    STAGE_ORDER,
    VERDICTS,
    Cell,
    ChatAnalysis,
    ChatTurn,
    GroundedChatAnalysis,
    Row,
    TurnStats,
    analyse_chat,
    chat_turns,
    grounded_turns,
    run_turns,
    turn_stats,
)

__all__ = [
    "ALL",
    "FACTUALITY",
    "STAGE_ORDER",
    "VERDICTS",
    "Cell",
    "ChatAnalysis",
    "ChatTurn",
    "GroundedChatAnalysis",
    "Row",
    "TurnStats",
    "analyse_chat",
    "chat_turns",
    "grounded_turns",
    "run_turns",
    "turn_stats",
]
