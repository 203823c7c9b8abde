"""``make run``'s own question and the cricket one, end to end as a user runs them.

The real ``freshwiki chat`` executable, the default model (Qwen2.5-Coder-1.5B), the default
corpus (all 10,419 topic leads of ``../shared/data``, built once here as on a first ``make
run``), response cache off. What the answers must say was read off the leads by hand:

- The Israel-Hamas war lead: "An armed conflict between Israel and Hamas-led Palestinian militant
  groups has been taking place chiefly in and around the Gaza Strip since 7 October 2023."
- "2023 Cricket World Cup": "... India and Australia beat New Zealand and South Africa
  respectively to advance to the final ... Australia won by 6 wickets, winning their sixth
  Cricket World Cup title." (The model, asked alone, answers "India won"; the chat must not.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

EXE = str(Path(sys.executable).with_name("freshwiki"))
WAR = "When did the Israel–Hamas war begin, and where is it being fought?"
CRICKET = "Who won the 2023 Cricket World Cup?"


def replies(stdout: str) -> dict[str, str]:
    """Each question's reply text and its source lines, from a piped session's transcript."""
    out = {}
    for question in (WAR, CRICKET):
        after = stdout.split(f"you> {question}\n", 1)[1]
        out[question] = after.split("you> ", 1)[0].split("\nconversation ", 1)[0]
    return out


def test_make_runs_question_and_the_cricket_question_with_the_default_model(
    qwen15_path: Path, shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = tmp_path_factory.mktemp("default-corpus-home")
    env = {**os.environ, "FRESHWIKI_HOME": str(home), "FRESHWIKI_CACHE": "false",
           "FRESHWIKI_DATA_DIR": str(shared_data), "COLUMNS": "200"}
    run = subprocess.run([EXE, "chat"], input=f"{WAR}\n/new\n{CRICKET}\n", text=True,
                         capture_output=True, env=env, timeout=1800, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Building the default corpus once" in run.stderr
    war, cricket = (replies(run.stdout)[q] for q in (WAR, CRICKET))

    text, sources = war.split("\nSources:\n", 1)
    assert "7 October 2023" in text and "Gaza Strip" in text, war
    assert re.search(r"\[1\]", text) and "Israel–Hamas war" in sources, war
    assert "Text from Wikipedia, CC BY-SA 4.0." in sources

    text, sources = cricket.split("\nSources:\n", 1)
    assert "Australia" in text and "India won" not in text, cricket
    assert "[1]" in text and "2023 Cricket World Cup" in sources, cricket
