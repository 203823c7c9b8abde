"""A tiny chat evaluation set (one item per kind) and a scripted model that answers it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks.chat_accuracy import reply_key
from freshwiki.llm import Message

FALSEQA_TEXT = "Why do cats bark at night?"

ITEMS: list[dict[str, Any]] = [
    {"id": "a1", "split": "test", "kind": "answerable", "set": "head", "titles": ["Derny"],
     "question": "What kind of vehicle is a Derny?", "answers": [["motorized bicycle"]]},
    {"id": "f1", "split": "test", "kind": "followup", "set": "tail", "titles": ["Leading Ladies"],
     "question": "What year was that?",
     "turns": ["In which city was Leading Ladies formed?", "What year was that?"],
     "answers": [["2017"]]},
    {"id": "b1", "split": "test", "kind": "absent_subject", "set": "head", "titles": [],
     "question": "Who founded Zorblatt Industries?", "answers": []},
    {"id": "p1", "split": "test", "kind": "false_premise", "set": "head",
     "titles": ["Malice murder"],
     "question": "What is the penalty for malice murder under Texas law?",
     "answers": [["Georgia"]]},
    {"id": "c1", "split": "test", "kind": "conflict", "set": "wikicontradict",
     "titles": ["Institute"], "question": "When did Fraisse become director?",
     "answers": [["1965"], ["1952"]]},
    {"id": "q1", "split": "test", "kind": "falseqa", "falseqa_file": "dataset/test.csv",
     "falseqa_row": 1, "question_sha256": hashlib.sha256(FALSEQA_TEXT.encode()).hexdigest(),
     "titles": [], "answers": []},
    {"id": "d1", "split": "dev", "kind": "answerable", "set": "head", "titles": ["Derny"],
     "question": "Who paces riders in keirin?", "answers": [["derny"]]},
]

REPLIES = {
    "What kind of vehicle is a Derny?": "A Derny is a motorized bicycle.",
    "In which city was Leading Ladies formed?": "They were formed in London.",
    "What year was that?": "That was in 2017.",
    "Who founded Zorblatt Industries?": "It was founded by John Smith.",
    "What is the penalty for malice murder under Texas law?":
        "Texas law has no offence of that name.",
    "When did Fraisse become director?": "He became director in 1965.",
    FALSEQA_TEXT: "I don't know.",
    "Who paces riders in keirin?": "A pacer.",
}
"""The scripted model's reply to each question (the last user message)."""


def answer(messages: Sequence[Message]) -> str:
    """The scripted reply to the conversation's last question."""
    return REPLIES[messages[-1].content]


@pytest.fixture
def chat_eval(tmp_path: Path) -> Path:
    """A chat_eval folder: the items above and one hand label (p1's reply, read as rejected)."""
    folder = tmp_path / "repo" / "chat_eval"
    folder.mkdir(parents=True)
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps(i) + "\n" for i in ITEMS), encoding="utf-8")
    label = {"key": reply_key("vanilla", "p1", REPLIES[ITEMS[3]["question"]]),
             "system": "vanilla", "id": "p1", "outcome": "rejected", "reason": "says no such "
             "offence exists in Texas"}
    (folder / "labels.jsonl").write_text(json.dumps(label) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def falseqa_clone(tmp_path: Path) -> Path:
    """A FalseQA checkout whose test.csv row 1 is the q1 item's question."""
    clone = tmp_path / "FalseQA"
    (clone / "dataset").mkdir(parents=True)
    (clone / "dataset" / "test.csv").write_text(
        f'question,answer\n"Why is the sky green?",x\n"{FALSEQA_TEXT}",y\n', encoding="utf-8")
    return clone
