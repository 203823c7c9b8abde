"""Conversation topics: the real head / tail / recent Wikipedia leads WikiChat evaluates on.

Each topic file is ``{title: lead paragraph}``. A sample is one topic; its order is a seeded
shuffle of each category, interleaved head, tail, recent, so ``--limit 20`` takes 7 head, 7
tail and 6 recent topics, and the same seed always takes the same ones.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from freshwiki.corpus import split_sentences
from freshwiki.errors import FreshwikiError
from freshwiki.seams import Document, Sample

CATEGORIES: tuple[str, ...] = ("head", "tail", "recent")
"""Most viewed, least viewed and most edited (early 2023) articles."""

TOPICS_FOLDER = Path("wikipedia") / "topics"
"""Where the topic files sit inside ``Settings.data_dir``."""


class TopicsError(FreshwikiError):
    """A topic file is missing or not the ``{title: lead}`` JSON the benchmark reads."""


def topic_file(data_dir: Path, category: str) -> Path:
    """``data_dir/wikipedia/topics/{category}_articles_en.json``."""
    return data_dir / TOPICS_FOLDER / f"{category}_articles_en.json"


def _read_leads(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise TopicsError(
            f"topic file not found: {path}",
            hint="set FRESHWIKI_DATA_DIR (or data_dir in freshwiki.toml) to the folder holding "
            "wikipedia/topics/{head,tail,recent}_articles_en.json, or pass "
            "--benchmark-option data_dir=DIR.",
        )
    try:
        leads = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TopicsError(f"{path} is not valid JSON ({exc})",
                          hint="a topic file is one JSON object {title: lead text}.") from exc
    if not isinstance(leads, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in leads.items()
    ):
        raise TopicsError(f"{path} is not a JSON object of title -> lead text",
                          hint="a topic file is one JSON object {title: lead text}.")
    return leads


def first_sentence(lead: str) -> str:
    """The lead's first sentence: what the simulated user knows about the topic."""
    sentences = split_sentences(lead)
    return sentences[0].text if sentences else lead.strip()


def load_topics(
    data_dir: Path, *, categories: Sequence[str] = CATEGORIES, seed: int = 0
) -> list[Sample]:
    """Every usable topic as a sample, interleaved across ``categories`` (module docstring).

    Topics with an empty lead are left out: the simulated user would know nothing to ask.

    Raises:
        TopicsError: an unknown category, or a missing or malformed topic file.
    """
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown or not categories:
        raise TopicsError(f"unknown topic categories: {', '.join(unknown) or '(none given)'}",
                          hint=f"choose from {', '.join(CATEGORIES)}.")
    per_category: list[list[Sample]] = []
    for category in categories:
        leads = _read_leads(topic_file(data_dir, category))
        samples = [
            Sample(
                id=f"{category}/{title}",
                input=title,
                documents=(Document(title=title, text=lead.strip(),
                                    source=f"https://en.wikipedia.org/wiki/"
                                    f"{title.replace(' ', '_')}"),),
                metadata={"category": category, "title": title,
                          "first_sentence": first_sentence(lead)},
            )
            for title, lead in leads.items() if lead.strip()
        ]
        random.Random(f"{seed}:{category}").shuffle(samples)
        per_category.append(samples)
    interleaved: list[Sample] = []
    for row in range(max(len(s) for s in per_category)):
        interleaved.extend(s[row] for s in per_category if row < len(s))
    return interleaved
