"""Three claims over two real-looking leads, and a scripted verifier model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks.claim_verification import TOPIC_FILES
from freshwiki.llm import Message

LEADS = {
    "head": {"Derny": "A Derny is a motorized bicycle used for motor-paced cycling events. "
                      "It was first built in 1938."},
    "tail": {"Clasmatocolea": "Clasmatocolea is a genus of liverworts in the family "
                              "Lophocoleaceae."},
    "recent": {},
}

CLAIMS: list[dict[str, Any]] = [
    {"id": "real-draft:aaa", "kind": "real-draft", "split": "test", "set": "head",
     "title": "Derny", "question": "When was the Derny first built?", "answer": "1938",
     "claim": "The Derny was first built in 1951.", "label": "REFUTES", "how": "read"},
    {"id": "constructed-statement:bbb", "kind": "constructed-statement", "split": "test",
     "set": "tail", "title": "Clasmatocolea", "question": "Which family is Clasmatocolea in?",
     "answer": "Lophocoleaceae", "claim": "Clasmatocolea is in the family Lophocoleaceae.",
     "label": "SUPPORTS", "how": "statement"},
    {"id": "constructed-swap:ccc", "kind": "constructed-swap", "split": "dev", "set": "head",
     "title": "Derny", "question": "When was the Derny first built?", "answer": "1938",
     "claim": "The Derny was first built in 1938.", "label": "SUPPORTS", "how": "statement"},
]


def verifier(messages: Sequence[Message]) -> str:
    """The legacy verifier's JSON: SUPPORTS for every claim but the 1951 one (REFUTES).

    The 1951 claim is the first test claim; a SUPPORTS for it would be downgraded by the
    number guard anyway (1951 is not in the lead).
    """
    text = messages[-1].content
    verdict = "REFUTES" if "1951" in text else "SUPPORTS"
    return json.dumps({"verdict": verdict, "passages": [1], "reason": f"read as {verdict}"})


@pytest.fixture
def claims_data(tmp_path: Path) -> tuple[Path, Path]:
    """``(claims.jsonl, data_dir)`` for the claims and leads above."""
    data_dir = tmp_path / "data"
    topics = data_dir / "wikipedia" / "topics"
    topics.mkdir(parents=True)
    for key, name in TOPIC_FILES.items():
        (topics / name).write_text(json.dumps(LEADS[key]), encoding="utf-8")
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CLAIMS), encoding="utf-8")
    return path, data_dir
