"""Check that moving the README into docs/ lost no figure, interval or command.

Issue 32 cut the 1,226-line README down to a front door and moved the rest into docs/, reworded
only where a page had to stand alone. A figure dropped on the way would not be missed by any
reader, so this compares the old text (README.md and docs/*.md at a git revision) with the new
one (README.md and docs/*.md in the working tree):

- every number (``.760``, ``30.6``, ``1,359``, with its sign and a trailing multiplication or
  per cent sign) occurs at least as often in the new text as in the old, and every interval
  (``[.69, .82]``, spacing ignored) too;
- every code span and every line of a code block (commands, file names, options) is still there.

It prints what is missing, with the old line it came from, and exits 1 if anything is. Run it
from the repository root::

    python scripts/check_moved_figures.py 22fe763
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

INTERVAL = re.compile(r"\[\s*[−+-]?[\d.,]*\d\s*,\s*[−+-]?[\d.,]*\d\s*\]")
NUMBER = re.compile(r"[−+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?[×%]?")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def numbers(text: str) -> Counter[str]:
    """Every number and interval of ``text``, intervals with their spacing normalised."""
    found: Counter[str] = Counter()
    for interval in INTERVAL.findall(text):
        found["interval " + re.sub(r"\s+", "", interval)] += 1
    for token in NUMBER.findall(INTERVAL.sub(" ", text)):
        if any(c.isdigit() for c in token):
            found[token] += 1
    return found


def code(text: str) -> set[str]:
    """Every code span and every non-empty line inside a fenced code block."""
    found = {span.strip() for span in CODE_SPAN.findall(text)}
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced and line.strip():
            found.add(line.strip())
    return found


def old_text(revision: str) -> str:
    """README.md and docs/*.md as they were at ``revision``."""
    names = subprocess.run(["git", "ls-tree", "--name-only", revision, "docs/"],
                           capture_output=True, text=True, check=True).stdout.split()
    paths = ["README.md", *(n for n in names if n.endswith(".md"))]
    return "\n".join(subprocess.run(["git", "show", f"{revision}:{p}"], capture_output=True,
                                    text=True, check=True).stdout for p in paths)


def new_text(root: Path) -> str:
    """README.md and docs/*.md in the working tree, without the README's headline results.

    The headlines repeat figures of the results pages; counted, they would hide a figure
    dropped from its page.
    """
    readme = (root / "README.md").read_text(encoding="utf-8")
    readme = re.sub(r"^## Headline results\n.*?(?=^## )", "", readme, flags=re.M | re.S)
    pages = sorted((root / "docs").glob("*.md"))
    return "\n".join([readme, *(p.read_text(encoding="utf-8") for p in pages)])


def where(token: str, text: str) -> str:
    """The first old line holding ``token``, for the report."""
    needle = token.removeprefix("interval ")
    for line in text.splitlines():
        if needle in re.sub(r"\s+", "", line) or needle in line:
            return line.strip()[:160]
    return "?"


def main() -> int:
    """Compare, print what is missing, and exit 1 if anything is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="the git revision before the move, e.g. 22fe763")
    args = parser.parse_args()
    before, after = old_text(args.revision), new_text(Path.cwd())

    old_numbers, new_numbers = numbers(before), numbers(after)
    short = {t: n - new_numbers[t] for t, n in old_numbers.items() if new_numbers[t] < n}
    old_code, new_code = code(before), code(after)
    gone = sorted(old_code - new_code)

    for token, n in sorted(short.items()):
        print(f"figure {token!r}: {n} fewer than before; was in: {where(token, before)}")
    for line in gone:
        print(f"code gone: {line}")
    total = sum(old_numbers.values())
    print(f"{total} figures and intervals, {len(old_code)} code spans and lines checked: "
          f"{sum(short.values())} figures and {len(gone)} code items missing")
    return 1 if short or gone else 0


if __name__ == "__main__":
    sys.exit(main())
