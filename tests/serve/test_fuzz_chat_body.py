"""A seeded slice of the chat request bodies' fuzzing, and what it found.

Bodies go through the route's own parsing and ``ChatService.prepare`` (no HTTP server):
OpenAI's shape with fields holding any JSON value, damaged JSON, bytes, deep nesting. Every
failure must be a ChatAPIError, which the route answers as OpenAI's error body.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.serve import ChatAPIError
from tests.fuzzing import chat_target, fuzz


def test_parsing_raises_only_chat_api_errors_on_a_seeded_slice(tmp_path: Path) -> None:
    target, bodies = chat_target(tmp_path / "home")
    try:
        outcome = fuzz(target, 300, seed=16)
    finally:
        bodies.close()
    assert outcome.inputs == 300
    assert outcome.unhandled == [], outcome.as_dict()
    assert outcome.handled["ChatAPIError"] > 0


def test_deeply_nested_json_is_a_400_not_a_crash(tmp_path: Path) -> None:
    # Found by fuzzing: 100,000 "[" fit in the 1 MB body limit and made json recurse until
    # RecursionError, which FastAPI answered as a 500 with the server logging a traceback.
    _, bodies = chat_target(tmp_path / "home")
    try:
        with pytest.raises(ChatAPIError) as caught:
            bodies(b"[" * 100_000, tmp_path)
    finally:
        bodies.close()
    assert caught.value.status == 400 and "nested too deeply" in caught.value.message
