"""Simulated conversations: how factual and how conversational is a chatbot (WikiChat's eval).

A simulated user (an LLM that knows only a topic's title and first sentence, see
``_simulator``) holds an N-turn conversation with the system under test about a real
Wikipedia topic: the head (most viewed), tail (least viewed) and recent (most edited in early
2023) leads in ``data_dir/wikipedia/topics`` (``_topics``). Each conversation is one sample;
the benchmark is a :class:`~freshwiki.benchmarks.Dialogue`, so the runner lets it drive the
system turn by turn and commits the whole conversation as one output.

Scorers (all use the judge model):

* ``chat-factuality``: the share of the replies' claims the corpus supports (``_factuality``);
* ``chat-relevant``, ``chat-informational``, ``chat-natural``, ``chat-non-repetitive`` (1-5,
  reported as ``(r - 1) / 4``) and ``chat-temporally-correct`` (yes share), from one judge
  call per reply with the whole rubric (the paper's way), or with ``ratings=per-question``
  one call per quality and non-repetition computed (``_conversationality``).

Options (``--benchmark-option key=value``): ``turns`` (user turns, default 3), ``seed``
(topic order, default 0), ``categories`` (default ``head,tail,recent``), ``data_dir``
(default the ``data_dir`` setting), ``index`` (evidence for factuality; default your ``main``
index when built, else the default corpus), ``simulator`` (the simulated user's model spec;
default the system's model), ``today`` (ISO date the conversations are held on; default the
real date, so pin it for a run you will resume on another day), ``ratings`` (``rubric``, the
default, or ``per-question``; see ``_conversationality``).
"""

from __future__ import annotations

from freshwiki.benchmarks.simulated_chat._benchmark import (
    SimulatedChat,
    factuality_scorer,
    informational_scorer,
    natural_scorer,
    non_repetitive_scorer,
    rating_scorer,
    relevant_scorer,
    simulated_chat_benchmark,
    temporally_correct_scorer,
)
from freshwiki.benchmarks.simulated_chat._conversationality import (
    RATINGS,
    STYLES,
    ConversationJudge,
    QuestionJudge,
    Rating,
    RatingScorer,
    Turn,
    conversationality_scorers,
    information_level,
    repeated_share,
    repetition_level,
    specific_facts,
)
from freshwiki.benchmarks.simulated_chat._factuality import FactualityScorer
from freshwiki.benchmarks.simulated_chat._simulator import clean_user_message, next_user_message
from freshwiki.benchmarks.simulated_chat._topics import (
    CATEGORIES,
    TopicsError,
    first_sentence,
    load_topics,
)

__all__ = [
    "CATEGORIES",
    "RATINGS",
    "STYLES",
    "ConversationJudge",
    "FactualityScorer",
    "QuestionJudge",
    "Rating",
    "RatingScorer",
    "SimulatedChat",
    "TopicsError",
    "Turn",
    "clean_user_message",
    "conversationality_scorers",
    "factuality_scorer",
    "first_sentence",
    "information_level",
    "informational_scorer",
    "load_topics",
    "natural_scorer",
    "next_user_message",
    "non_repetitive_scorer",
    "rating_scorer",
    "relevant_scorer",
    "repeated_share",
    "repetition_level",
    "simulated_chat_benchmark",
    "specific_facts",
    "temporally_correct_scorer",
]
