"""The lead paragraphs offered to the question writers of the frozen chat evaluation set.

The chat evaluation set (``experiments/data/chat_eval/``) was written by reading real lead
paragraphs of the default corpus. Which paragraphs were offered is fixed here, so nobody can
pick leads by how a system answers them: leads are ordered by the sha256 of a salt and the
title, titles used by any earlier question or claim set under ``experiments/data`` are left
out (those sets were read to tune the chat, so their leads are in sample), and so are lists,
disambiguation pages and leads under 20 words. The writers took candidates in this order and
recorded every one they skipped, with why.

Run (prints JSON lines: set, rank, title, words, text)::

    .venv/bin/python experiments/chat_eval_candidates.py --set head --start 0 --count 80
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
TOPICS = HERE.parent.parent / "shared" / "data" / "wikipedia" / "topics"
SALT = "freshwiki chat eval 2026-11-27"
SETS = ("head", "tail", "recent")


def used_titles() -> set[str]:
    """Titles of every earlier question, claim or label set (in sample for the chat)."""
    used: set[str] = set()
    for path in sorted((HERE / "data").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                for key in ("title", "article"):
                    if isinstance(row.get(key), str):
                        used.add(row[key])
    # The two questions the end-to-end tests ask (and `make run`): read while fixing the chat.
    used |= {"Israel–Hamas war", "2023 Cricket World Cup"}
    return used


def candidates(name: str) -> list[dict[str, object]]:
    """The set's usable leads in the fixed order."""
    leads: dict[str, str] = json.loads(
        (TOPICS / f"{name}_articles_en.json").read_text(encoding="utf-8"))
    used = used_titles()
    rows = []
    for title, text in leads.items():
        words = len(text.split())
        if (title in used or title.startswith("List of") or "may refer to" in text
                or "(disambiguation)" in title or words < 20):
            continue
        key = hashlib.sha256(f"{SALT}\n{title}".encode()).hexdigest()
        rows.append({"set": name, "key": key, "title": title, "words": words, "text": text})
    rows.sort(key=lambda r: str(r["key"]))
    for rank, row in enumerate(rows):
        row["rank"] = rank
        del row["key"]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=SETS, required=True)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=50)
    args = parser.parse_args()
    for row in candidates(args.set)[args.start:args.start + args.count]:
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
