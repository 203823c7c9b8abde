"""``chat_accuracy``: end-to-end chat replies on the frozen chat evaluation set, by kind.

The items are ``experiments/data/chat_eval/questions.jsonl`` (its README says how each split
was frozen; ``LABELLING.md`` what each outcome means): answerable and two-part questions over
real leads, two-turn follow-ups, absent subjects and facts, false premises, WikiContradict's
contradicting pairs (``conflict``) and FalseQA's human-written false premises (``falseqa``,
text read from a local clone). Run it with any system; the script
``experiments/chat_accuracy.py`` runs vanilla, rag and the grounded chat's two modes.

Options (``--benchmark-option key=value``): ``path`` (the chat_eval folder; default the
repository's), ``split`` (``test``, ``dev``, ``test2``..``test7``), ``kinds`` (comma-separated;
default every kind but ``conflict``), ``legacy`` (earlier development sets instead),
``falseqa`` (a clone of thunlp/FalseQA; without it those items are left out) and ``stride``
(every K-th item). The ``conflict`` items are asked against their own corpus: build it with
:func:`build_conflict_index` and run ``kinds=conflict`` with ``--option
index=wikicontradict-pairs``.

The run's dataset identity is the content hash of the chosen items, never the folder's path.
"""

from __future__ import annotations

from freshwiki.benchmarks.chat_accuracy._benchmark import (
    DEFAULT_KINDS,
    OPTIONS,
    REPLY_TOKENS,
    TEMPLATE,
    ChatAccuracy,
    LabelledScorer,
    RuleScorer,
    chat_accuracy_benchmark,
    labelled_scorer,
    rule_scorer,
    system_label,
)
from freshwiki.benchmarks.chat_accuracy._data import (
    CONFLICT_INDEX,
    FALSEQA_COMMIT,
    LEGACY,
    SPLITS,
    ChatEvalError,
    build_conflict_index,
    default_path,
    falseqa_questions,
    items_hash,
    load_items,
    resolve_path,
)
from freshwiki.benchmarks.chat_accuracy._rules import (
    ABSENT,
    ANSWERABLE,
    GOOD,
    KINDS,
    abstains,
    outcome,
    parts_stated,
    read_labels,
    reply_key,
    rule_outcome,
    states,
    words,
)

__all__ = [
    "ABSENT",
    "ANSWERABLE",
    "CONFLICT_INDEX",
    "DEFAULT_KINDS",
    "FALSEQA_COMMIT",
    "GOOD",
    "KINDS",
    "LEGACY",
    "OPTIONS",
    "REPLY_TOKENS",
    "SPLITS",
    "TEMPLATE",
    "ChatAccuracy",
    "ChatEvalError",
    "LabelledScorer",
    "RuleScorer",
    "abstains",
    "build_conflict_index",
    "chat_accuracy_benchmark",
    "default_path",
    "falseqa_questions",
    "items_hash",
    "labelled_scorer",
    "load_items",
    "outcome",
    "parts_stated",
    "read_labels",
    "reply_key",
    "resolve_path",
    "rule_outcome",
    "rule_scorer",
    "states",
    "system_label",
    "words",
]
