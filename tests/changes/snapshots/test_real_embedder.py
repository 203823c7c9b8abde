"""End to end with the real all-MiniLM-L6-v2 encoder on real Wikipedia revisions.

The expected labels were checked by reading both versions: the 2002 article "Pear" (revision
188924, the last of article-pear.xml) and the 2014 one (revision 638548877), and the small
2002 edit that reworded the "see also" link.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.changes.snapshots import Aligner, Alignment, diff_dumps, diff_revisions, parse_cut
from freshwiki.retrieval._embed import Embedder


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(None, threads=1)


def test_real_link_rewording_is_unchanged_but_unverified(shared_data: Path,
                                                         embedder: Embedder) -> None:
    path = shared_data / "wikipedia/histories/article-pear.xml"
    results = list(diff_revisions(path, Aligner(embedder), start=parse_cut("2002-08-31T02:00:00"),
                                  end=parse_cut("2002-08-31T04:00:00")))
    (result,) = results
    assert isinstance(result, Alignment)
    assert (result.old.revision_id, result.new.revision_id) == (185241, 185408)
    # "[[propagating apples and other fruit trees]]" became "[[Fruit tree propagation]]": the
    # same link reworded. Only those two sentences were embedded.
    assert result.embedded == 2
    lab = result.new_labels[13]
    assert (lab.label, lab.counterparts, lab.ambiguous) == ("unchanged", (13,), True)
    assert lab.similarity is not None and 0.7 <= lab.similarity < 0.99
    assert result.to_growover() == {"S": {i: i for i in range(14)}, "C": [], "N": [], "D": []}


def test_real_2002_to_2014_article(shared_data: Path, embedder: Embedder) -> None:
    old = shared_data / "wikipedia/histories/article-pear.xml"
    new = shared_data / "wikipedia/histories/article-pear-0.10.xml"
    (result,) = diff_dumps(old, new, Aligner(embedder))
    assert isinstance(result, Alignment)
    o, n = result.old.texts, result.new.texts
    assert len(o) == 14 and len(n) == 85

    def new_label(text: str) -> tuple[str, tuple[int, ...], bool]:
        lab = result.new_labels[n.index(text)]
        return lab.label, lab.counterparts, lab.ambiguous

    # Word for word the same.
    rootstocks = ("Other species are used as rootstocks for European and Asian pears and as "
                  "ornamental trees.")
    assert new_label(rootstocks) == ("unchanged", (o.index(rootstocks),), False)
    # More detail, nothing contradicted: unchanged, decided without an LLM (very close).
    assert new_label("Pears are consumed fresh, canned, as juice, and dried.") == (
        "unchanged", (o.index("Pears are consumed fresh, canned, and as juice."),), False)
    assert new_label("Fermented pear juice is called perry or pear cider.") == (
        "unchanged", (o.index("Fermented pear juice is called perry."),), False)
    # Statements the 2002 article does not make at all.
    assert new_label("Quince rootstocks produce smaller trees, which is often desirable in "
                     "commercial orchards or domestic gardens.") == ("new", (), False)
    assert new_label("They will ripen faster if placed next to bananas in a fruit bowl.") == (
        "new", (), False)
    # A 2002 statement the 2014 article no longer makes.
    picked = ("They must be picked and, sometimes, subjected to cold, before they will become "
              "sweet and soft.")
    assert result.old_labels[o.index(picked)].label == "deleted"
    # A decade of rewriting leaves many pairs an NLI check should settle; without an LLM they
    # are flagged, and every flagged label is a similarity-only fallback.
    assert result.ambiguous
    assert all(lab.step == "fallback" for lab in result.ambiguous if lab.side == "new")
    assert result.llm_calls == 0
