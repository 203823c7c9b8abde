"""Stage 2: keep only the parts of the retrieved passages that bear on the question.

``wikichat``'s stage 2, in two ways (``facts=``):

- **Extractive** (``extractive``, no LLM call): each passage is split into sentences, each
  sentence (prefixed with its article title, so "It was founded in 2008" stays about its
  subject) is scored against the query, and the few best are kept (see
  :func:`select_sentences`), in their original order. Extracted facts are
  verbatim, so they cannot be hallucinated, and their citations are exact. With
  all-MiniLM-L6-v2 (:class:`EmbeddingScorer`) sentences of the article a question is about
  score 0.5-0.85 and sentences of unrelated articles under 0.2, hence the 0.35 threshold;
  an off-corpus question therefore keeps nothing and ends in "I don't know".
- **LLM** (``llm``, the paper's way and the default; ``facts`` calls): one call per
  passage, concurrently (bounded by the LLM client), asks for at most four short
  self-contained facts relevant to the question.
  A small model can paraphrase wrongly or copy injected text, so a fact is kept only if
  every number it states is in its passage, most of its words are, and it does not read
  like an instruction (:func:`faithful`), and if it is relevant to the question by the
  same scorer as the extractive way's.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from freshwiki.chat._calls import TurnCalls, messages_for, prompt
from freshwiki.chat._evidence import (
    PassageBook,
    content_words,
    looks_like_instruction,
    neutralise,
    quote_data,
    unique,
)
from freshwiki.chat._types import Evidence, Fact
from freshwiki.corpus import numbers_in, split_sentences
from freshwiki.retrieval import Embedder

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "items": {"type": "string", "maxLength": 300},
                  "maxItems": 4},
    },
    "required": ["facts"],
    "additionalProperties": False,
}


class SentenceScorer(Protocol):
    """Scores sentences against a query; scores at or above ``threshold`` are relevant."""

    threshold: float

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text."""
        ...


class LexicalScorer:
    """The share of the query's content words a sentence contains.

    For indexes without an embedder, and for deterministic tests.
    """

    threshold = 0.25

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        """Share of query words found, in [0, 1]."""
        wanted = set(content_words(query))
        if not wanted:
            return [0.0 for _ in texts]
        return [len(wanted & set(content_words(t))) / len(wanted) for t in texts]


class EmbeddingScorer:
    """Cosine similarity under the index's own sentence embedder.

    Sentences go through :meth:`Embedder.embed_query` one at a time: under CPU contention
    (the LLM generating on the other core) single encodes measured ~22 ms each against
    ~100 ms per sentence for a batched ``encode``, and repeated sentences hit its LRU.
    """

    threshold = 0.35

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine of each text with the query."""
        q = self.embedder.embed_query(query)
        return [float(self.embedder.embed_query(t) @ q) for t in texts]


@dataclass(frozen=True)
class Selection:
    """The sentences kept from one passage (extractive facts)."""

    evidence: Evidence
    sentences: tuple[str, ...]


def select_sentences(
    query: str,
    passages: Sequence[Evidence],
    scorer: SentenceScorer,
    *,
    total: int = 4,
    per_passage: int = 3,
    margin: float = 0.15,
    opener: bool = False,
) -> list[Selection]:
    """The sentences of ``passages`` most relevant to ``query``, grouped by passage.

    A sentence is kept if it clears the scorer's threshold, scores within ``margin`` of the
    best sentence, and is among the ``total`` best (at most ``per_passage`` from one
    passage). Few sentences on purpose: a 1.5B composer given a neighbouring article's
    sentences ("Kamal Haasan hosted season 7") was measured to answer from them. The
    margin is not tighter because the best sentence is not always the answer: for "When
    did the Israel-Hamas war begin?" "It began when Hamas militants launched..." scores
    0.83 and the one with the date 0.71. Passages keep their order, sentences their order
    within the passage.

    With ``opener``, the best passage, when it opens its article (a lead passage whose first
    sentence names the title), also keeps that first sentence, beyond ``total``. That
    sentence says what the subject is, and who made, founded or directed it; asked who
    directed a film, the scorer ranked the lead's "produced by" sentence over its "written
    and directed by" opener, and the verifier then read the only name it was shown.
    """
    pieces: list[tuple[int, str]] = []
    for i, evidence in enumerate(passages):
        for sentence in split_sentences(evidence.text):
            if not looks_like_instruction(sentence.text):  # not a fact, whatever its score
                pieces.append((i, sentence.text))
    if not pieces:
        return []
    scores = scorer(query, [f"{passages[i].title}: {text}" for i, text in pieces])
    floor = max(scorer.threshold, max(scores) - margin)
    ranked = sorted((n for n in range(len(pieces)) if scores[n] >= floor),
                    key=lambda n: (-scores[n], n))
    chosen: list[int] = []
    taken: dict[int, int] = {}
    for n in ranked:
        i = pieces[n][0]
        if len(chosen) < total and taken.get(i, 0) < per_passage:
            chosen.append(n)
            taken[i] = taken.get(i, 0) + 1
    if opener and chosen:
        best = pieces[chosen[0]][0]
        first = next(n for n, (i, _) in enumerate(pieces) if i == best)
        if first not in chosen and _opens_article(passages[best], pieces[first][1]):
            chosen.append(first)
    kept = []
    for i, evidence in enumerate(passages):
        mine = sorted(n for n in chosen if pieces[n][0] == i)
        if mine:
            kept.append(Selection(evidence, tuple(pieces[n][1] for n in mine)))
    return kept


def _opens_article(evidence: Evidence, sentence: str) -> bool:
    """Whether ``sentence``, the first of ``evidence``, is its article's defining sentence.

    It names the article's subject: most of the title's words (qualifier dropped), not the
    title verbatim. Leads name their subject in full or in another form: "Joseph Robinette
    Biden Jr. ..." opens "Joe Biden", "The 2023 ICC Men's Cricket World Cup ..." opens "2023
    Cricket World Cup"; the exact title was required, and such openers were passed over.
    """
    if evidence.section:
        return False
    title = re.sub(r"\s*\(.*\)$", "", evidence.title)  # "Mercury (planet)"
    wanted = set(content_words(title))
    if not wanted:
        return title.casefold() in sentence.casefold() if title else False
    have = set(content_words(sentence))
    return len(wanted & have) * 2 >= len(wanted) and bool(set(numbers_in(title)) <= set(
        numbers_in(sentence)))


def facts_of(selections: Sequence[Selection]) -> list[Fact]:
    """One fact per kept sentence."""
    return [Fact(text=s, source=sel.evidence) for sel in selections for s in sel.sentences]


def passage_entry(number: int, evidence: Evidence, text: str | None = None) -> dict[str, str]:
    """A passage as the ``_passages.j2`` block renders it (text quoted as data)."""
    date = (evidence.timestamp or "")[:10]
    return {
        "number": str(number),
        "title": quote_data(evidence.title).replace('"', "'"),
        "section": quote_data(" > ".join(evidence.section)).replace('"', "'"),
        "date": date,
        "text": neutralise(quote_data(evidence.text if text is None else text)),
    }


@dataclass(frozen=True)
class Block:
    """A shared evidence block for the batch verifiers, as data-block entries.

    ``answer`` holds the question's sentences; ``extra`` the sentences retrieved for claims
    that are not among them (a passage can appear in both, with different sentences). The
    claim benchmark (``experiments/claim_verification.py``) verifies its drafts against it.
    """

    answer: list[dict[str, str]]
    extra: list[dict[str, str]]
    shown: list[Evidence]
    """Every passage in the block, for the verifier's evidence choices."""


def evidence_block(selections: Sequence[Selection], claims: Sequence[str],
                   claim_passages: Sequence[Sequence[Evidence]], book: PassageBook,
                   scorer: SentenceScorer) -> Block:
    """The evidence block: the question's sentences, then each claim's two best.

    Args:
        selections: The sentences kept for the question (:func:`select_sentences`).
        claims: The draft's claims.
        claim_passages: Passages retrieved for each claim.
        book: The turn's passage numbers (every passage already in it).
        scorer: The sentence scorer.
    """
    answer = [passage_entry(book.number(s.evidence), s.evidence, " ".join(s.sentences))
              for s in selections]
    shown = [s.evidence for s in selections]
    seen = {sentence for s in selections for sentence in s.sentences}
    extra_sentences: dict[str, list[str]] = {}
    extra_passages: list[Evidence] = []
    for claim, passages in zip(claims, claim_passages, strict=True):
        for selection in select_sentences(claim, passages, scorer, total=2):
            new = [x for x in selection.sentences if x not in seen]
            if not new:
                continue
            seen.update(new)
            if selection.evidence.passage_id not in extra_sentences:
                extra_passages.append(selection.evidence)
            extra_sentences.setdefault(selection.evidence.passage_id, []).extend(new)
    extra_passages.sort(key=book.number)
    extra = []
    for evidence in extra_passages:
        ordered = sorted(extra_sentences[evidence.passage_id], key=evidence.text.find)
        extra.append(passage_entry(book.number(evidence), evidence, " ".join(ordered)))
    for evidence in extra_passages:
        if evidence not in shown:
            shown.append(evidence)
    return Block(answer, extra, shown)


def faithful(fact: str, evidence: Evidence) -> bool:
    """Whether an LLM-written fact stays within its passage (see the module docstring)."""
    source = f"{evidence.title} {evidence.text}"
    if looks_like_instruction(fact):
        return False
    if not numbers_in(fact) <= numbers_in(source):
        return False
    words = set(content_words(fact))
    if not words:
        return False
    return len(words & set(content_words(source))) / len(words) >= 0.5


async def extract_facts(
    calls: TurnCalls,
    question: str,
    book: PassageBook,
    passages: Sequence[Evidence],
    today: dt.date,
    scorer: SentenceScorer | None = None,
) -> list[Fact]:
    """One ``facts`` call per passage, concurrently; facts in passage order.

    With a ``scorer``, facts that score under its threshold against the question are
    dropped too: a small model asked for relevant facts still returns something from an
    off-topic passage ("Clasmatocolea fasciculata is a liverwort" for a TV-show question).
    """

    async def one(evidence: Evidence) -> list[Fact]:
        entry = passage_entry(book.number(evidence), evidence)
        parsed = await calls.json(
            "facts",
            messages_for(
                prompt("facts_system"),
                prompt("facts_user", today=today.isoformat(), question=question,
                       passages=[entry]),
            ),
            SCHEMA,
            max_tokens=300,
        )
        if not isinstance(parsed, dict):
            return []
        texts = unique(str(t) for t in parsed["facts"])
        return [Fact(t, evidence) for t in texts if faithful(t, evidence)]

    per_passage = await asyncio.gather(*(one(e) for e in passages))
    facts = [fact for facts in per_passage for fact in facts]
    if scorer is None or not facts:
        return facts
    scores = await asyncio.to_thread(
        scorer, question, [f"{f.source.title}: {f.text}" for f in facts])
    return [f for f, score in zip(facts, scores, strict=True) if score >= scorer.threshold]
