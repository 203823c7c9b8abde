"""Real passages for chat tests: a few topic leads cut into passages as ingest does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freshwiki.records import Passage
from tests.retrieval.data import passages_of

TITLES = (
    "KickassTorrents",
    "List of Silicon Valley episodes",
    "Bigg Boss (Hindi TV series) season 17",
    "Cecil Lowell",
)


@pytest.fixture(scope="session")
def chat_leads(shared_data: Path) -> dict[str, str]:
    leads: dict[str, str] = {}
    for name in ("head", "tail", "recent"):
        path = shared_data / f"wikipedia/topics/{name}_articles_en.json"
        leads.update(json.loads(path.read_text(encoding="utf-8")))
    return {title: leads[title] for title in TITLES}


@pytest.fixture(scope="session")
def chat_passages(chat_leads: dict[str, str]) -> list[Passage]:
    return passages_of(chat_leads)
