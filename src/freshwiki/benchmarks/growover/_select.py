"""Which text an instance is generated from: paragraphs of a snapshot, runs of new sentences.

GrowOVER generates from short, self-contained paragraphs (fewer than 5 sentences, 300-600
characters): long enough to hold a fact, short enough that the evidence range a model names
is easy to check. With many candidates it spreads generation over the article's topics by
clustering paragraph embeddings into four groups and taking one paragraph per group (the
one nearest its centroid, so the choice is deterministic for a seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from freshwiki.changes.snapshots import Encoder, Snapshot

MIN_CHARS = 300
MAX_CHARS = 600
MAX_SENTENCES = 4
""""Fewer than 5 sentences"."""
CLUSTERS = 4
MAX_GROUP = 6
"""At most this many new sentences feed one generation call."""


@dataclass(frozen=True)
class Candidate:
    """A paragraph eligible for generation.

    Attributes:
        paragraph: Its index in the snapshot.
        sentences: Indices of its sentences in the snapshot's flat list.
        text: The paragraph text.
    """

    paragraph: int
    sentences: tuple[int, ...]
    text: str


def candidates(snapshot: Snapshot) -> list[Candidate]:
    """Paragraphs with 1-4 sentences and 300-600 characters, in page order."""
    by_paragraph: dict[int, list[int]] = {}
    for i, sentence in enumerate(snapshot.sentences):
        by_paragraph.setdefault(sentence.paragraph, []).append(i)
    found = []
    for paragraph, indices in sorted(by_paragraph.items()):
        text = snapshot.paragraphs[paragraph] if paragraph < len(snapshot.paragraphs) else ""
        if 1 <= len(indices) <= MAX_SENTENCES and MIN_CHARS <= len(text) <= MAX_CHARS:
            found.append(Candidate(paragraph, tuple(indices), text))
    return found


def select_paragraphs(snapshot: Snapshot, encoder: Encoder, *, seed: int = 0,
                      clusters: int = CLUSTERS) -> list[Candidate]:
    """The paragraphs to generate from: all candidates, or one per embedding cluster.

    With more than ``clusters`` candidates, KMeans (``random_state=seed``) on the candidates'
    embeddings picks, per cluster, the candidate closest to the centroid (ties: page order).
    The result is in page order.
    """
    found = candidates(snapshot)
    if len(found) <= clusters:
        return found
    from sklearn.cluster import KMeans  # type: ignore[import-untyped]

    vectors = np.asarray(encoder.encode([c.text for c in found]), dtype=np.float64)
    model = KMeans(n_clusters=clusters, random_state=seed, n_init=10).fit(vectors)
    chosen: list[int] = []
    for cluster in range(clusters):
        members = [i for i, label in enumerate(model.labels_) if label == cluster]
        if not members:
            continue
        centre = model.cluster_centers_[cluster]
        distances = [float(np.sum((vectors[i] - centre) ** 2)) for i in members]
        chosen.append(members[int(np.argmin(distances))])
    return [found[i] for i in sorted(chosen)]


def runs(indices: Sequence[int], snapshot: Snapshot, *, max_group: int = MAX_GROUP
         ) -> list[tuple[int, ...]]:
    """Consecutive indices of one paragraph, cut into groups of at most ``max_group``.

    A run breaks at a gap (a sentence in between that is not in ``indices``) and at a
    paragraph boundary, so each group is one stretch of contiguous new text.
    """
    groups: list[list[int]] = []
    for i in sorted(set(indices)):
        last = groups[-1] if groups else None
        if (last is not None and last[-1] == i - 1 and len(last) < max_group
                and snapshot.sentences[i].paragraph == snapshot.sentences[last[-1]].paragraph):
            last.append(i)
        else:
            groups.append([i])
    return [tuple(g) for g in groups]
