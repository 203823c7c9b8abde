"""Questions with answers stated in the default corpus, and what the model says without it.

The data behind ``claim_verification.py`` and ``chat_accuracy.py``, built reproducibly from
the real WikiChat topic leads in ``../shared/data/wikipedia/topics`` (the default corpus):

1. ``qa``: lead paragraphs are taken in a fixed pseudo-random order (sha256 of the title),
   recent and tail topics first (the model's own knowledge is weakest there), then head.
   Disambiguation pages, lists and paragraphs under 25 or over 220 words are skipped. The
   default model writes one factoid question per paragraph with a short answer span and a
   one-sentence statement (``prompts/qa_from_passage.j2``, temperature 0). A pair is kept only
   if a script can check it: the answer is in the paragraph (exact words), is at most six
   words, is not already in the question, is in the statement; the question ends with "?",
   names the subject (a word of the title) and the statement's numbers and most of its words
   are in the paragraph.
2. ``drafts``: the same model answers each kept question closed book, through the grounded
   chat's own draft stage (``freshwiki.chat.draft.draft_claims``, fast mode): these are the
   real drafts the verifier has to judge.

Only titles, questions, answers, statements and drafts are written
(``experiments/data/qa.jsonl``); paragraph text is read from the shared data at run time and is
never copied into the repository. Run::

    .venv/bin/python experiments/qa_data.py qa --per-set recent=55,tail=45,head=19
    .venv/bin/python experiments/qa_data.py drafts
    .venv/bin/python experiments/qa_data.py drafts --heldout   # more real drafts to verify
    .venv/bin/python experiments/qa_data.py qa --heldout --per-set recent=15,tail=20,head=10
    .venv/bin/python experiments/qa_data.py qa --fresh --per-set recent=20,tail=25,head=15
    .venv/bin/python experiments/qa_data.py qa --fresh2 --per-set recent=20,tail=25,head=15
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from rich.progress import Progress

from freshwiki.chat import ChatMessage, TurnCalls
from freshwiki.chat.draft import draft_claims
from freshwiki.config import load_settings
from freshwiki.llm import LLM, Message, open_llm

HERE = Path(__file__).parent
DATA = HERE / "data" / "qa.jsonl"
HELDOUT = HERE / "data" / "qa_heldout.jsonl"
FRESH = HERE / "data" / "qa_fresh.jsonl"
"""Made after every change to the chat had been tuned on ``qa.jsonl`` and ``qa_heldout.jsonl``."""
FRESH2 = HERE / "data" / "qa_fresh2.jsonl"
"""Made after the fixes read off ``qa_fresh.jsonl``'s replies: out of sample for those too."""
TODAY = dt.date(2026, 11, 24)
"""The date the drafts were asked on (fixed, so re-running gives the same prompts)."""

SETS = {"recent": "recent_articles_en.json", "tail": "tail_articles_en.json",
        "head": "head_articles_en.json"}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "maxLength": 200},
        "answer": {"type": "string", "maxLength": 80},
        "statement": {"type": "string", "maxLength": 300},
    },
    "required": ["question", "answer", "statement"],
    "additionalProperties": False,
}

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_STOP = frozenset({
    "a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "from", "by", "with",
    "is", "was", "were", "be", "as", "its", "it", "his", "her", "their", "this", "that",
    "which", "who", "what", "when", "where", "how",
})


def topics(data_dir: Path, name: str) -> dict[str, str]:
    """``{title: lead paragraph}`` of one topic set."""
    path = data_dir / "wikipedia" / "topics" / SETS[name]
    loaded: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def order(title: str) -> str:
    """The fixed pseudo-random order of titles."""
    return hashlib.sha256(title.encode("utf-8")).hexdigest()


def usable(title: str, text: str) -> bool:
    """Whether a paragraph can carry a factoid question (see the module docstring)."""
    words = len(text.split())
    lowered = text.lower()
    return (25 <= words <= 220 and not title.startswith("List of")
            and "may refer to" not in lowered and "can refer to" not in lowered
            and "disambiguation" not in lowered)


def words(text: str) -> list[str]:
    """Lower-cased words."""
    return _WORD.findall(text.lower())


def contains(haystack: str, needle: str) -> bool:
    """Whether ``needle``'s words occur in ``haystack`` as a contiguous run."""
    hay, need = words(haystack), words(needle)
    if not need:
        return False
    return any(hay[i:i + len(need)] == need for i in range(len(hay) - len(need) + 1))


def checked(title: str, text: str, parsed: Any) -> tuple[dict[str, str] | None, str]:
    """The pair if every check passes, else ``None`` and the first failed check."""
    if not isinstance(parsed, dict):
        return None, "no JSON"
    question = " ".join(str(parsed["question"]).split())
    answer = " ".join(str(parsed["answer"]).split()).strip(" .,;")
    statement = " ".join(str(parsed["statement"]).split())
    if not question.endswith("?"):
        return None, "question does not end with '?'"
    if not answer or len(answer.split()) > 6:
        return None, "answer empty or over six words"
    if not contains(text, answer):
        return None, "answer not in the paragraph"
    if contains(question, answer):
        return None, "answer already in the question"
    if set(words(answer)) <= set(words(title)):
        return None, "answer is the subject itself"
    if not contains(statement, answer):
        return None, "answer not in the statement"
    title_words = {w for w in words(title) if w not in _STOP}
    if not title_words & set(words(question)):
        return None, "question does not name the subject"
    if not set(_NUMBER.findall(statement)) <= set(_NUMBER.findall(f"{title} {text}")):
        return None, "statement has a number the paragraph lacks"
    content = [w for w in words(statement) if w not in _STOP]
    source = set(words(f"{title} {text}"))
    if not content or sum(w in source for w in content) / len(content) < 0.75:
        return None, "statement strays from the paragraph"
    return {"question": question, "answer": answer, "statement": statement}, ""


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The records written so far."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def save(records: list[dict[str, Any]], path: Path = DATA) -> None:
    """Write all records (whole file, via a temporary file: a crash leaves the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                   encoding="utf-8")
    tmp.replace(path)


async def make_qa(llm: LLM, model: str, data_dir: Path, per_set: dict[str, int],
                  path: Path = DATA, exclude: tuple[Path, ...] = ()) -> None:
    env = Environment(loader=FileSystemLoader(HERE / "prompts"), undefined=StrictUndefined,
                      keep_trailing_newline=True)
    template = env.get_template("qa_from_passage.j2")
    records = load(path)
    done = {(r["set"], r["title"]) for r in records}
    for seen in exclude:  # a held-out set: no title an earlier set saw, kept or not
        done |= {(r["set"], r["title"]) for r in load(seen)}
    rejected: dict[str, int] = {}
    for name, wanted in per_set.items():
        leads = topics(data_dir, name)
        titles = sorted((t for t in leads if usable(t, leads[t])), key=order)
        have = sum(r["set"] == name and "question" in r for r in records)
        with Progress() as bar:
            task = bar.add_task(f"qa {name}", total=wanted, completed=have)
            for title in titles:
                if have >= wanted:
                    break
                if (name, title) in done:
                    continue
                text = leads[title]
                result = await llm.chat(
                    [Message.user(template.render(title=title, text=text).strip())],
                    max_tokens=160, json_schema=SCHEMA, schema_name="qa", tag="qa-data")
                pair, why = checked(title, text, result.parsed)
                done.add((name, title))
                if pair is None:
                    rejected[why] = rejected.get(why, 0) + 1
                    records.append({"set": name, "title": title, "rejected": why})
                else:
                    records.append({"set": name, "title": title, **pair, "qa_model": model})
                    have += 1
                    bar.update(task, completed=have)
                save(records, path)
    print("rejected:", json.dumps(rejected, indent=1))


async def make_drafts(llm: LLM, model: str, path: Path = DATA) -> None:
    records = load(path)
    todo = [r for r in records if "question" in r and "draft" not in r]
    with Progress() as bar:
        task = bar.add_task("closed-book drafts", total=len(todo))
        for record in todo:
            calls = TurnCalls(llm)
            claims = await draft_claims(calls, [ChatMessage("user", record["question"])], TODAY)
            record["draft"] = claims
            record["draft_model"] = model
            record["draft_date"] = TODAY.isoformat()
            save(records, path)
            bar.advance(task)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["qa", "drafts"])
    parser.add_argument("--per-set", default="recent=55,tail=45,head=19",
                        help="kept questions per topic set, in this order")
    parser.add_argument("--model", default=None, help="model spec (default: the default)")
    parser.add_argument("--heldout", action="store_true",
                        help="drafts: for qa_heldout.jsonl; qa: write "
                             "experiments/data/qa_heldout.jsonl from titles qa.jsonl never "
                             "saw (questions for checking a change made after reading "
                             "results on qa.jsonl)")
    parser.add_argument("--fresh", action="store_true",
                        help="qa only: write experiments/data/qa_fresh.jsonl from titles "
                             "neither qa.jsonl nor qa_heldout.jsonl saw (questions no "
                             "change to the chat has been tuned on)")
    parser.add_argument("--fresh2", action="store_true",
                        help="qa only: write experiments/data/qa_fresh2.jsonl from titles no "
                             "earlier set saw (made after the fixes read off the fresh set)")
    args = parser.parse_args()
    settings = load_settings({"model": args.model} if args.model else {}).settings
    llm = open_llm(settings.model, settings=settings)
    if args.step == "qa":
        per_set = {k: int(v) for k, v in (p.split("=") for p in args.per_set.split(","))}
        if args.fresh2:
            asyncio.run(make_qa(llm, settings.model, settings.data_dir, per_set,
                                FRESH2, exclude=(DATA, HELDOUT, FRESH)))
        elif args.fresh:
            asyncio.run(make_qa(llm, settings.model, settings.data_dir, per_set,
                                FRESH, exclude=(DATA, HELDOUT)))
        elif args.heldout:
            asyncio.run(make_qa(llm, settings.model, settings.data_dir, per_set,
                                HELDOUT, exclude=(DATA,)))
        else:
            asyncio.run(make_qa(llm, settings.model, settings.data_dir, per_set))
    else:
        asyncio.run(make_drafts(llm, settings.model, HELDOUT if args.heldout else DATA))
    return 0


if __name__ == "__main__":
    sys.exit(main())
