"""Certainty features of an answer: what a classifier can read about how sure the model was.

Backends that can describe an answer implement :class:`FeatureBackend`; the client exposes it
as :meth:`freshwiki.llm.LLM.features`. What a feature vector *means* depends on the backend,
so every vector carries its ``kind`` and the ``model`` it came from, and a classifier trained
on one kind or model refuses vectors of another (the numbers would be meaningless to it):

* ``hidden-state`` (local llama.cpp models): the final hidden state (after the output norm, before
  the LM head) at the last token of the chat-formatted prompt followed by the answer, i.e. the
  model's own representation of "this question, answered like this". One float per embedding
  dimension.
* ``logprob-summary`` (OpenAI-compatible HTTP servers): the chat API cannot score a given text,
  only generate, so the answer is regenerated greedily with ``logprobs`` and summarised into
  :data:`LOGPROB_FEATURES` (see :func:`logprob_summary`).
* ``scripted`` (tests): whatever the test supplies, or a deterministic hash of the text.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from freshwiki.llm._types import Message

LOGPROB_FEATURES = (
    "mean_logprob",
    "min_logprob",
    "std_logprob",
    "mean_top_entropy",
    "n_tokens",
)
"""Names of the ``logprob-summary`` values, in order."""


@dataclass(frozen=True)
class FeatureVector:
    """A fixed-size description of one (prompt, answer) pair.

    Attributes:
        values: The features, always the same length for one ``kind`` and ``model``.
        kind: ``hidden-state``, ``logprob-summary`` or ``scripted``: how they were computed.
        model: The backend's model identity (weights hash, or model and server URL).
        names: Names of the values when they have any (summaries); empty for hidden states.
        detail: JSON-serialisable facts about the extraction (token counts, the regenerated
            text for ``logprob-summary``), for traces; not part of the vector.
    """

    values: tuple[float, ...]
    kind: str
    model: str
    names: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """Number of features."""
        return len(self.values)


@runtime_checkable
class FeatureBackend(Protocol):
    """A backend that can describe an answer with a :class:`FeatureVector` (optional).

    Attributes:
        feature_kind: The ``kind`` of the vectors it returns, known before any call so a
            classifier can be checked against the backend when a system is built.
    """

    feature_kind: str

    async def answer_features(self, messages: Sequence[Message], answer: str) -> FeatureVector:
        """Features of ``answer`` given as the model's reply to ``messages``."""
        ...


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token's log-probability and the top alternatives' log-probabilities."""

    logprob: float
    top: tuple[float, ...] = ()


def logprob_summary(tokens: Sequence[TokenLogprob]) -> tuple[float, ...]:
    """The :data:`LOGPROB_FEATURES` of a generated answer.

    Mean, minimum and (population) standard deviation of the chosen tokens' log-probabilities;
    the mean entropy (nats) of each position's top-k alternatives, renormalised to sum to one
    (servers return only the top k, so this is the entropy of that truncated distribution);
    and the number of tokens. A confident answer has a mean and minimum near 0 and a low
    entropy. An empty answer is all zeros: there is nothing to be (un)certain about, and a
    fixed-size vector is still needed.
    """
    if not tokens:
        return (0.0, 0.0, 0.0, 0.0, 0.0)
    lps = [t.logprob for t in tokens]
    mean = sum(lps) / len(lps)
    std = math.sqrt(sum((x - mean) ** 2 for x in lps) / len(lps))
    entropies = [_entropy(t.top) for t in tokens if t.top]
    mean_entropy = sum(entropies) / len(entropies) if entropies else 0.0
    return (mean, min(lps), std, mean_entropy, float(len(tokens)))


def _entropy(logprobs: Sequence[float]) -> float:
    """Entropy of the distribution ``softmax(logprobs)`` (the renormalised top-k)."""
    top = max(logprobs)
    weights = [math.exp(lp - top) for lp in logprobs]
    total = sum(weights)
    return -sum((w / total) * math.log(w / total) for w in weights if w > 0)


def hashed_features(messages: Sequence[Message], answer: str, dim: int = 8) -> tuple[float, ...]:
    """Deterministic stand-in features in [0, 1) from a hash of the prompt and answer.

    Different texts give different vectors and the same texts always the same one, which is
    all a test of the plumbing needs; they say nothing about certainty.
    """
    text = "\x1e".join(f"{m.role}\x1f{m.content}" for m in messages) + "\x1d" + answer
    digest = b""
    counter = 0
    while len(digest) < 2 * dim:
        digest += hashlib.sha256(f"{counter}\x00{text}".encode()).digest()
        counter += 1
    return tuple(int.from_bytes(digest[2 * i : 2 * i + 2], "big") / 65536 for i in range(dim))
