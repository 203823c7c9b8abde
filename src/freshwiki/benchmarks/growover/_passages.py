"""A snapshot's retrieval passages, each knowing which sentences it holds.

Retrieval for GrowOVER is scored against the evidence sentences, so a passage must map back
to sentence indices: one passage per paragraph, a long paragraph cut between sentences into
pieces of at most :data:`MAX_WORDS` words (the corpus' own passage size). The sentence
indices go into ``Passage.meta["sentences"]``, which the index stores with the passage.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from freshwiki.changes.snapshots import Snapshot
from freshwiki.records import Passage

MAX_WORDS = 120


def passage_id(snapshot: Snapshot, paragraph: int, piece: int) -> str:
    """``growover:{page}:{revision}:p{paragraph}.{piece}``: unique per article version.

    The revision is in the id, so an article unchanged between two snapshots has the same
    passage ids in both (and the embedding cache serves them without re-embedding).
    """
    return f"growover:{snapshot.page_id}:{snapshot.revision_id}:p{paragraph}.{piece}"


def snapshot_passages(snapshot: Snapshot, *, max_words: int = MAX_WORDS) -> list[Passage]:
    """The passages of one article version, in page order."""
    by_paragraph: dict[int, list[int]] = {}
    for i, sentence in enumerate(snapshot.sentences):
        by_paragraph.setdefault(sentence.paragraph, []).append(i)
    out: list[Passage] = []
    for paragraph, indices in sorted(by_paragraph.items()):
        pieces: list[list[int]] = [[]]
        words = 0
        for i in indices:
            n = len(snapshot.sentences[i].text.split())
            if pieces[-1] and words + n > max_words:
                pieces.append([])
                words = 0
            pieces[-1].append(i)
            words += n
        section = snapshot.sentences[indices[0]].section_path
        for piece, members in enumerate(pieces):
            texts = tuple(snapshot.sentences[i].text for i in members)
            out.append(Passage(
                id=passage_id(snapshot, paragraph, piece), page_id=snapshot.page_id,
                revision_id=snapshot.revision_id, title=snapshot.title, section_path=section,
                text=" ".join(texts), timestamp=snapshot.timestamp, sentences=texts,
                meta={"sentences": members, "paragraph": paragraph},
            ))
    return out


def evidence_passages(passages: Iterable[Passage], evidence: Sequence[int]) -> list[str]:
    """The fewest passages (of one article version) that together hold every evidence sentence.

    One id when a single passage holds them all (the usual case: evidence comes from one
    paragraph); otherwise, in page order, each passage holding at least one evidence sentence.
    """
    wanted = set(evidence)
    holders = [(p.id, set(p.meta.get("sentences", ()))) for p in passages]
    for pid, members in holders:
        if wanted <= members:
            return [pid]
    return [pid for pid, members in holders if members & wanted]
