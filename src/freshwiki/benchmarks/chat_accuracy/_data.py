"""The frozen chat evaluation set: its items, FalseQA's question texts, the conflict corpus.

The set lives in the repository (``experiments/data/chat_eval/``: ``questions.jsonl``, its
README and ``LABELLING.md``), so the default path is found from this file. FalseQA's questions
are not copied into it (its repository states no licence): an item names the row of
``dataset/test.csv`` and the sha256 of its text, and the text is read from a local clone.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks.chat_accuracy._rules import KINDS
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.config import Settings

FALSEQA_COMMIT = "9a97299"
"""The FalseQA commit the items' hashes were taken from."""
CONFLICT_INDEX = "wikicontradict-pairs"
"""The conflict items' corpus: every paragraph of WikiContradict's 130 pairs, one passage each."""
SPLITS = ("test", "dev", *(f"test{n}" for n in range(2, 8)))
"""The frozen set's splits (see its README: which change each later split was frozen before)."""
LEGACY = {"dev": "qa.jsonl", "heldout": "qa_heldout.jsonl", "fresh": "qa_fresh.jsonl",
          "fresh2": "qa_fresh2.jsonl"}
"""Earlier development sets (answerable only; in sample for the chat), beside ``chat_eval``."""


class ChatEvalError(FreshwikiError):
    """The chat evaluation set (or a FalseQA clone) cannot be read as needed."""


def default_path() -> Path | None:
    """The repository's ``experiments/data/chat_eval`` when this is a source checkout."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "experiments" / "data" / "chat_eval"
        if (candidate / "questions.jsonl").is_file():
            return candidate
    return None


def resolve_path(path: Path | str | None) -> Path:
    """The chat evaluation folder to read: ``path``, else the repository's.

    Raises:
        ChatEvalError: no ``questions.jsonl`` there (or no repository copy when none given).
    """
    folder = Path(path).expanduser() if path else default_path()
    if folder is None:
        raise ChatEvalError("no chat evaluation set found: this is not a source checkout",
                            hint="pass --benchmark-option path=DIR (a folder holding "
                                 "questions.jsonl, as experiments/data/chat_eval does).")
    if not (folder / "questions.jsonl").is_file():
        raise ChatEvalError(f"{folder}: no questions.jsonl",
                            hint="pass path= the chat_eval folder of a freshwiki checkout.")
    return folder


def falseqa_questions(clone: Path) -> list[str]:
    """The question column of FalseQA's ``dataset/test.csv`` (a clone, or a bare git dir).

    Raises:
        ChatEvalError: neither the file nor a git commit holding it.
    """
    path = clone / "dataset" / "test.csv"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        proc = subprocess.run(["git", "-C", str(clone), "show", "HEAD:dataset/test.csv"],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise ChatEvalError(f"{clone}: no dataset/test.csv (nor a git repository with it)",
                                hint="clone github.com/thunlp/FalseQA and check out commit "
                                     f"{FALSEQA_COMMIT}.")
        text = proc.stdout
    return [row["question"] for row in csv.DictReader(io.StringIO(text))]


def load_items(folder: Path, split: str, kinds: Sequence[str] = KINDS,
               legacy: Sequence[str] = (), falseqa: Path | None = None) -> list[dict[str, Any]]:
    """The items to run, in file order: the set's ``split`` (or the legacy development sets).

    FalseQA items are left out without a clone (``falseqa``); with one, each gets its
    question text, checked against the item's hash.

    Raises:
        ChatEvalError: an unknown split, kind or legacy set, or a clone at another commit.
    """
    if split not in SPLITS:
        raise ChatEvalError(f"unknown split {split!r}", hint=f"choose from {', '.join(SPLITS)}.")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ChatEvalError(f"unknown kinds {unknown}", hint=f"choose from {', '.join(KINDS)}.")
    if legacy:
        return _legacy_items(folder.parent, legacy)
    rows = [json.loads(line) for line in (folder / "questions.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    items = [r for r in rows if r["split"] == split and r["kind"] in kinds]
    if falseqa is None:
        return [r for r in items if r["kind"] != "falseqa"]
    if any(r["kind"] == "falseqa" for r in items):
        texts = falseqa_questions(falseqa)
        for item in items:
            if item["kind"] != "falseqa":
                continue
            text = texts[item["falseqa_row"]]
            if hashlib.sha256(text.encode("utf-8")).hexdigest() != item["question_sha256"]:
                raise ChatEvalError(
                    f"{falseqa}: row {item['falseqa_row']} of {item['falseqa_file']} is not "
                    f"the question of {item['id']} (sha256 differs)",
                    hint=f"check out commit {FALSEQA_COMMIT} in the clone.")
            item["question"] = text
    return items


def _legacy_items(data: Path, names: Sequence[str]) -> list[dict[str, Any]]:
    bad = [n for n in names if n not in LEGACY]
    if bad:
        raise ChatEvalError(f"unknown legacy sets {bad}", hint=f"choose from {sorted(LEGACY)}.")
    review = data / "qa_review.jsonl"
    flawed = {json.loads(line)["title"] for line in review.read_text(
        encoding="utf-8").splitlines() if line.strip()} if review.exists() else set()
    items = []
    for name in names:
        for line in (data / LEGACY[name]).read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if "question" in row and row["title"] not in flawed:
                items.append({"id": f"{name}:{row['title']}", "kind": "answerable",
                              "set": row["set"], "split": name, "titles": [row["title"]],
                              "question": row["question"], "answers": [[row["answer"]]]})
    return items


def items_hash(items: Sequence[dict[str, Any]]) -> str:
    """The content hash of the chosen items (FalseQA texts stand in by their own hash).

    It, not the folder's path, identifies the data of a run: the same set read from another
    checkout gives the same hash, and an edited question a new one.
    """
    canonical = [{k: v for k, v in item.items() if not (k == "question"
                                                          and item["kind"] == "falseqa")}
                 for item in items]
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_conflict_index(settings: Settings, wikicontradict: Path) -> None:
    """Build the conflict items' corpus once: each WikiContradict paragraph as one passage.

    The conflict questions ask about a contradiction within a pair of paragraphs; asked
    against the default corpus they would find neither, so they run on this index
    (``--option index=wikicontradict-pairs``).
    """
    from freshwiki.records import Passage
    from freshwiki.retrieval import Embedder, HybridIndex, default_index_dir, has_index

    if has_index(settings, CONFLICT_INDEX):
        return
    data = json.loads(wikicontradict.read_text(encoding="utf-8"))
    passages, seen = [], set()
    for i, item in enumerate(data):
        annotation = item["annotationResult"]
        for side in ("A", "B"):
            text = " ".join(str(annotation.get(f"paragraph{side}_information") or "").split())
            text = re.sub(r"\[(?:inconsistent|contradictory|self-contradictory)\]", "", text,
                          flags=re.IGNORECASE)
            title = str(annotation.get(f"paragraph{side}_article") or item["title"])
            if not text or (title, text) in seen:
                continue
            seen.add((title, text))
            passages.append(Passage(id=f"wc{i}-{side.lower()}", page_id=100_000 + i,
                                    revision_id=100_000 + i, title=title, section_path=(),
                                    text=text, timestamp=None))
    HybridIndex.build(passages, default_index_dir(settings, CONFLICT_INDEX),
                      embedder=Embedder.default(settings), overwrite=True).close()
