"""The paper's prompt set: one hand-written instruction and four rephrasings written by models.

HelloFresh (§5.1) asks each item with five instructions, the authors' own and four rewordings
of it by other models, because small changes of wording move the answers; the majority vote
over the five is its headline. Here the five are data, not code:
``data/instructions.jsonl`` holds per kind (``notes``, ``edits``) the ``manual`` instruction
(ours, written after the paper's §5.2: same fields, same decision rule, our words) and every
candidate rephrasing a local model wrote (``experiments/hellofresh_rephrase.py``), with the
model spec and weights hash, the seed, the exact request and the raw reply, and a reader's
verdict: ``accepted`` ones carry the template id ``r1``..``r4`` they are asked under,
``rejected`` ones the reason. The prompt around the instruction is ``templates/{kind}/
paper.j2``, the paper's layout.

The older five phrasings ``p1``..``p5`` (which ask the model to predict the community's
verdict and show the editor type, edit summary and minor flag) stay available by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

from freshwiki.errors import FreshwikiError

PAPER_TEMPLATES: Final[tuple[str, ...]] = ("manual", "r1", "r2", "r3", "r4")
"""The paper's way, and the default: the manual instruction and four model rephrasings."""
OUR_TEMPLATES: Final[tuple[str, ...]] = ("p1", "p2", "p3", "p4", "p5")
"""Five hand-written phrasings of "will the community keep it?" (an option)."""
INSTRUCTIONS_FILE: Final = Path(__file__).with_name("data") / "instructions.jsonl"
KINDS: Final = ("notes", "edits")


class PromptDataError(FreshwikiError):
    """The shipped instructions file is missing a template or is malformed."""


@dataclass(frozen=True)
class Instruction:
    """One instruction of the paper's set.

    Attributes:
        kind: ``notes`` or ``edits``.
        template: ``manual`` or ``r1``..``r4``.
        text: The instruction the prompt ends with.
        author: ``hand-written ...`` or the model spec that wrote it.
    """

    kind: str
    template: str
    text: str
    author: str


@lru_cache(maxsize=4)
def _load(path: Path) -> dict[tuple[str, str], Instruction]:
    found: dict[tuple[str, str], Instruction] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        template = row.get("template")
        if template is None:
            continue  # a candidate awaiting review, or rejected
        if template != "manual" and row.get("review") != "accepted":
            raise PromptDataError(f"{path}, line {number}: template {template!r} is not "
                                  "an accepted rephrasing",
                                  hint="set review to accepted, or the template to null.")
        key = (str(row["kind"]), str(template))
        if key in found:
            raise PromptDataError(f"{path}, line {number}: {key[0]} template {key[1]!r} "
                                  "appears twice", hint="keep one of them.")
        found[key] = Instruction(kind=key[0], template=key[1], text=str(row["instruction"]),
                                 author=str(row.get("author") or row.get("model") or ""))
    return found


def paper_instruction(kind: str, template: str, path: Path = INSTRUCTIONS_FILE) -> Instruction:
    """The instruction asked under ``template`` for ``kind``.

    Raises:
        PromptDataError: the file lacks it.
    """
    found = _load(path).get((kind, template))
    if found is None:
        raise PromptDataError(f"{path} has no accepted {kind} instruction {template!r}",
                              hint="generate candidates with experiments/hellofresh_rephrase.py "
                              "and accept one by reading it.")
    return found


def paper_instructions(kind: str, path: Path = INSTRUCTIONS_FILE) -> tuple[Instruction, ...]:
    """All five of ``kind``, in template order."""
    return tuple(paper_instruction(kind, t, path) for t in PAPER_TEMPLATES)
