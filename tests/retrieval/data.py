"""Real passages for retrieval tests and measurements, built the way the corpus layer does.

Shared by the test fixtures and ``experiments/retrieval.py``; reads only ``../shared/data``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from freshwiki.corpus.ingest import plain_paragraphs
from freshwiki.corpus.segment import make_passages
from freshwiki.records import Passage

TOPIC_FILES = tuple(
    f"wikipedia/topics/{name}_articles_en.json" for name in ("head", "tail", "recent")
)
WIKICONTRADICT = "wikicontradict/wikicontradict.json"


def stamp_for(page_id: int) -> dt.datetime:
    """A made-up but deterministic revision time per page: 2015..2023, spread over months."""
    return dt.datetime(2015 + page_id % 9, 1 + page_id % 12, 1, 12, tzinfo=dt.UTC)


def passages_of(leads: dict[str, str], first_page_id: int = 1) -> list[Passage]:
    """Cut ``{title: lead}`` into passages as ingest does for topics files (one page each)."""
    out: list[Passage] = []
    for i, (title, text) in enumerate(leads.items()):
        page_id = first_page_id + i
        out.extend(make_passages(
            plain_paragraphs(text), page_id=page_id, revision_id=1_000_000 + page_id,
            title=title, timestamp=stamp_for(page_id),
        ))
    return out


def topic_leads(shared_data: Path) -> dict[str, str]:
    """All 10,419 WikiChat topic leads (head, tail, recent), ``{title: lead}``."""
    leads: dict[str, str] = {}
    for name in TOPIC_FILES:
        leads.update(json.loads((shared_data / name).read_text(encoding="utf-8")))
    return leads


def wikicontradict(shared_data: Path) -> list[dict[str, Any]]:
    """The WikiContradict entries (130)."""
    entries: list[dict[str, Any]] = json.loads(
        (shared_data / WIKICONTRADICT).read_text(encoding="utf-8")
    )
    return entries


def wikicontradict_articles(entries: list[dict[str, Any]]) -> dict[str, str]:
    """``{title: text}`` of every WikiContradict paragraph (A and B), per article.

    None of the WikiContradict articles is among the topic titles, so these are added to a
    topics corpus to make the questions answerable.
    """
    texts: dict[str, list[str]] = {}
    for entry in entries:
        ann = entry["annotationResult"]
        for title, text in (
            (ann.get("paragraphA_article") or entry["title"], entry["paragraph_A_clean"]),
            (ann.get("paragraphB_article") or entry["title"], ann["paragraphB_information"]),
        ):
            parts = texts.setdefault(title, [])
            if text and text.strip() and text not in parts:
                parts.append(text)
    return {title: "\n".join(parts) for title, parts in texts.items()}


def wikicontradict_questions(entries: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """(question, gold article titles) for every question of every entry (253)."""
    out = []
    for entry in entries:
        ann = entry["annotationResult"]
        gold = {ann.get("paragraphA_article") or entry["title"],
                ann.get("paragraphB_article") or entry["title"]}
        for key, value in ann.items():
            if key.startswith("question") and "_" not in key and str(value).strip():
                out.append((str(value).strip(), gold))
    return out


# Written by hand (not tuned on any retriever's output): each describes one topic article in
# other words, mostly avoiding its title and distinctive terms, to measure what dense
# retrieval adds. The facts were checked against each article's lead. Gold = that title.
PARAPHRASE_QUERIES: tuple[tuple[str, str], ...] = (
    ("noisy whistling sound when breathing in", "Stridor"),
    ("medicine that brings down a high temperature", "Antipyretic"),
    ("component whose electrical resistance drops when light shines on it", "Photoresistor"),
    ("bitter red-leaved Italian salad plant", "Radicchio"),
    ("vague feeling of being unwell that often comes before an illness", "Malaise"),
    ("unix program that prints the lines of a file matching a regex", "Grep"),
    ("Japanese cooking on a hot steel griddle", "Teppanyaki"),
    ("narrowing at the bottom of the food pipe that makes swallowing hard", "Schatzki ring"),
    ("operation that cuts the nerve supplying the stomach", "Vagotomy"),
    ("tea ball that opens like a blossom in hot water", "Flowering tea"),
    ("musical structure where the opening part returns after a contrasting middle",
     "Ternary form"),
    ("picture turns into a trapezoid when the projector is tilted", "Keystone effect"),
    ("brain swelling in mountaineers who climb too high too fast",
     "High-altitude cerebral edema"),
    ("arctic whale whose males have a single long tusk", "Narwhal"),
    ("dog from Malta bred for chasing bunnies", "Pharaoh Hound"),
    ("flexible tissue extending the front ends of the ribs", "Costal cartilage"),
    ("social moth larvae that strip the leaves off trees", "Tent caterpillar"),
    ("simple shelter whose roof slopes against a wall", "Lean-to"),
    ("sailor on the Pilgrims' ship who settled in Plymouth", "John Alden"),
    ("FBI check that gun shops must run before selling a firearm",
     "National Instant Criminal Background Check System"),
    ("specialist hospital that patients are sent to by other doctors",
     "Tertiary referral hospital"),
    ("site indexing pirated downloads seized by American authorities in 2016",
     "KickassTorrents"),
    ("why steaks are hung for weeks before being sold", "Beef aging"),
    ("Florida soccer club that signed Messi, backed by Beckham", "Inter Miami CF"),
    ("beauty pageant in San Salvador won by a Nicaraguan", "Miss Universe 2023"),
    ("continental football tournament held in Ivory Coast", "2023 Africa Cup of Nations"),
    ("ancient Chinese oracle bone divination and ancestor worship",
     "Religion of the Shang dynasty"),
    ("drink of gin topped with sparkling wine", "French 75 (cocktail)"),
    ("son of the Scientology founder who died at 22", "Quentin Hubbard"),
    ("vampire mother in the sitcom about a family of monsters", "Lily Munster"),
)
