"""End-to-end answer accuracy of vanilla, rag and the grounded chat on the default corpus.

Questions are those of ``experiments/data/qa.jsonl`` (see ``qa_data.py``): written by the
default model from real lead paragraphs of the default corpus (recent, tail and head topics),
each kept only when a script checked that its short answer is in the paragraph, and not
listed as flawed in ``experiments/data/qa_review.jsonl`` (checked by reading). Every system
runs with the same model, through the system registry, as ``freshwiki eval`` would run it.

A reply is scored by rules, then by reading where rules cannot tell:

- **correct**: it states the gold answer (its words in order, or every value word of it:
  "January 9, 1982" states "9 January 1982");
- **I don't know**: it says it could not find or does not know (grounded: the "I don't
  know" outcome, ``grounded=False``, or the quoted-evidence fallback), without the answer;
- **partial**: it states some of the answer's words the question did not ("Ningbo" for
  "Ningbo Olympic Sports Center");
- anything else is read by hand and labelled **wrong** (it states another value) or
  **unspecific** (true by the paragraph but not what was asked), or placed where the rules
  missed it (**correct**: "2.9 kilometers" for "2.9 km"; **partial**: "1880" for "October
  1880"; **I don't know**: a refusal), one line of reason each
  (``experiments/data/chat_accuracy_labels.jsonl``; unread ones are reported as such);
- a reply the rules place (correct, I don't know) can be re-placed by reading when it
  states something false besides: its label names the rule outcome it ``overrides``
  (every held-out reply of rag, fast and full was read for this; vanilla's and the development
  set's were not).

A **contradicted citation** is a wrong reply that cites the question's own paragraph: that
paragraph states the gold answer, so it contradicts the reply it is cited for (rag's ``[n]``
markers point at its retrieved passages, the grounded chat's at its citations; vanilla
cites nothing). **Conflict notes** count grounded replies that report disagreeing sources,
and those whose two sources are different articles (a conflict must be about one subject).

Prints accuracy, "I don't know" and wrong shares with Wilson 95 % intervals per system and
topic set, and writes ``experiments/results/chat_accuracy.json`` plus every reply
(``chat_accuracy_replies.json``). LLM calls use the response cache (``--no-cache`` to pay
again). Run::

    .venv/bin/python experiments/chat_accuracy.py [--systems vanilla,rag,fast,full] [--limit N]
    .venv/bin/python experiments/chat_accuracy.py --sets fresh,fresh2   # one run, both sets

With ``--sets`` the result (``chat_accuracy_<sets>.json``) also has every system's figures per
set (``by_source``): a set some change was tuned on is in sample, a later one out of sample.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from _provenance import data_provenance, write_result
from freshwiki.config import load_settings
from freshwiki.llm import Message, open_llm
from freshwiki.seams import Sample, Task
from freshwiki.systems import load_system

HERE = Path(__file__).parent
QA = HERE / "data" / "qa.jsonl"
HELDOUT = HERE / "data" / "qa_heldout.jsonl"
FRESH = HERE / "data" / "qa_fresh.jsonl"
FRESH2 = HERE / "data" / "qa_fresh2.jsonl"
SOURCES = {"dev": QA, "heldout": HELDOUT, "fresh": FRESH, "fresh2": FRESH2}
"""Question sets by name, for ``--sets`` (several sets answered in one run)."""
REVIEW = HERE / "data" / "qa_review.jsonl"
LABELS = HERE / "data" / "chat_accuracy_labels.jsonl"
"""Hand labels (wrong / unspecific, with a reason) of replies the rules call ``other``."""
"""Questions reading found flawed (no answer in the paragraph, or a wrong gold answer)."""
RESULTS = HERE / "results" / "chat_accuracy.json"
SYSTEMS = {"vanilla": ("vanilla", {}), "rag": ("rag", {}),
           "fast": ("grounded", {"mode": "fast"}), "full": ("grounded", {"mode": "full"})}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDK = re.compile(
    r"(?i)\b(?:i don't know|i do not know|could not find|couldn't find|can't find|cannot find|"
    r"no information|not (?:mentioned|stated|provided|specified|available)|i'm not sure|"
    r"i am not sure|don't have|do not have|unable to (?:find|answer|determine))")
_MARKER = re.compile(r"\[(\d+)\]")


def words(text: str) -> list[str]:
    """Lower-cased words."""
    return _WORD.findall(text.lower())


_HEDGES = frozenset({"approximately", "about", "around", "circa", "c", "some", "nearly"})
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_STOP = frozenset({"the", "a", "an", "of", "in", "on", "at", "and", "to", "for", "by"})


def _key_words(text: str) -> set[str]:
    """Words that carry a value: months as numbers, hedges and stopwords dropped."""
    out = set()
    for w in words(text):
        if w in _HEDGES or w in _STOP:
            continue
        month = next((n for m, n in _MONTHS.items() if w == m or (len(w) >= 3
                      and m.startswith(w) and w != "may" and len(w) <= 4)), None)
        out.add(str(month) if month is not None else w)
    return out


def states(reply: str, answer: str) -> bool:
    """Whether ``reply`` states the answer: its words in order, or every value word of it.

    The second form accepts "January 9, 1982" for "9 January 1982" and "late September
    2023" for "approximately late September 2023".
    """
    hay, need = words(reply), words(answer)
    if need and any(hay[i:i + len(need)] == need for i in range(len(hay) - len(need) + 1)):
        return True
    wanted = _key_words(answer)
    return bool(wanted) and wanted <= _key_words(reply)


def outcome(reply: str, answer: str, question: str, *, grounded: bool = True) -> str:
    """The outcome: correct, partial, dont_know or other (see the module docstring)."""
    if states(reply, answer):
        return "correct"
    if not grounded or _IDK.search(reply) or reply.startswith("From the sources:"):
        return "dont_know"
    # Names only: a date or number is either stated or not ("May 2024" is not part of
    # "March 2024").
    distinctive = {w for w in _key_words(answer) - _key_words(question) if not w.isdigit()}
    if distinctive & _key_words(reply):
        return "partial"
    return "other"


def cited_titles(system: str, output: Any) -> set[str]:
    """Titles of the passages the reply cites."""
    trace = output.trace or {}
    if system in ("fast", "full"):
        return {c["evidence"]["title"] for c in trace.get("citations") or ()}
    if system == "rag":
        retrieved = trace.get("retrieved") or []
        cited = set()
        for n in _MARKER.findall(output.text):
            if 1 <= int(n) <= len(retrieved):
                cited.add(retrieved[int(n) - 1]["title"])
        return cited
    return set()


def wilson(hits: int, n: int) -> list[float]:
    """Share and its Wilson 95 % interval."""
    if n == 0:
        return [math.nan, math.nan, math.nan]
    z = 1.96
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(p, 4), round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


async def run(questions: list[dict[str, Any]], names: list[str], no_cache: bool,
              replies: dict[str, list[dict[str, Any]]], save: Any) -> None:
    """Every question through every system, appending to ``replies``, saving after each.

    Question by question, so a run stopped early has the same questions for every system.
    """
    settings = load_settings().settings
    llm = open_llm(settings.model, settings=settings, cache=not no_cache)
    systems = {}
    for name in names:
        kind, options = SYSTEMS[name]
        systems[name] = load_system(kind, llm, settings, options)
        replies.setdefault(name, [])
    done = {(name, r["title"]) for name, rows in replies.items() for r in rows}
    with Progress() as bar:
        task_id = bar.add_task("questions", total=len(questions))
        for q in questions:
            for name, system in systems.items():
                if (name, q["title"]) in done:
                    continue
                replies[name].append(await one(name, system, q))
            save()
            bar.advance(task_id)
    for system in systems.values():
        closer = getattr(system, "aclose", None)
        if closer is not None:
            await closer()


async def one(name: str, system: Any, q: dict[str, Any]) -> dict[str, Any]:
    """One question through one system, scored."""
    task = Task(sample=Sample(id=q["title"], input=q["question"]), template="qa",
                messages=(Message.user(q["question"]),), query=q["question"], max_tokens=200)
    started = time.perf_counter()
    output = await system.respond(task)
    trace = output.trace or {}
    grounded = bool(trace.get("grounded", True))
    result = outcome(output.text, q["answer"], q["question"], grounded=grounded)
    chat = trace.get("chat") or {}
    conflicts = chat.get("conflicts") or []
    facts = chat.get("facts") or []
    across = 0
    for c in conflicts:
        titles = {facts[i]["source"]["title"] for i in c.get("facts") or () if i < len(facts)}
        across += len(titles) > 1
    return {
        "title": q["title"], "set": q["set"], "source": q.get("source", ""),
        "question": q["question"],
        "answer": q["answer"], "reply": output.text, "outcome": result,
        "cites_source": q["title"] in cited_titles(name, output),
        "conflict_notes": len(conflicts), "conflicts_across_articles": across,
        "seconds": round(time.perf_counter() - started, 2), "cache_hit": output.cache_hit,
    }


def reply_key(system: str, row: dict[str, Any]) -> str:
    """Identifies one reply for a hand label (system, question, exact reply text)."""
    text = f"{system}\n{row['title']}\n{row['reply']}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_labels() -> dict[str, dict[str, Any]]:
    """Hand labels of the replies the rules could not place (``other``)."""
    if not LABELS.exists():
        return {}
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {r["key"]: r for r in rows}


def summary(system: str, rows: list[dict[str, Any]], labels: dict[str, dict[str, Any]]
            ) -> dict[str, Any]:
    n = len(rows)
    final = []
    for r in rows:
        label = labels.get(reply_key(system, r))
        # A label applies to a reply the rules could not place, or to one whose rule outcome
        # it names in "overrides": the rules see the gold answer in "Putin won ... [1] Joe
        # Biden won the 2024 Russian presidential election [2]" and call it correct.
        placed = label is not None and (r["outcome"] == "other"
                                        or label.get("overrides") == r["outcome"])
        final.append(label["outcome"] if placed and label else r["outcome"])
    count = collections.Counter(final)
    wrong = [r for r, f in zip(rows, final, strict=True) if f == "wrong"]
    return {
        "n": n,
        "accuracy": wilson(count["correct"], n),
        "partial": wilson(count["partial"], n),
        "dont_know": wilson(count["dont_know"], n),
        "true_but_unspecific": wilson(count["unspecific"], n),
        "wrong": wilson(count["wrong"], n),
        "unlabelled_other": count["other"],
        "contradicted_citations": sum(r["cites_source"] for r in wrong),
        "conflict_notes": sum(r["conflict_notes"] > 0 for r in rows),
        "conflict_notes_across_articles": sum(r["conflicts_across_articles"] > 0 for r in rows),
        "mean_seconds": round(sum(r["seconds"] for r in rows) / max(n, 1), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", default="vanilla,rag,fast,full")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--resume", action="store_true",
                        help="keep the replies already in chat_accuracy_replies.json")
    parser.add_argument("--heldout", action="store_true",
                        help="the questions of qa_heldout.jsonl (titles qa.jsonl never saw), "
                             "results in chat_accuracy_heldout*.json")
    parser.add_argument("--fresh", action="store_true",
                        help="the questions of qa_fresh.jsonl (titles neither earlier set saw, "
                             "made after the last change tuned on them), results in "
                             "chat_accuracy_fresh*.json")
    parser.add_argument("--sets", default=None,
                        help="comma-separated question sets answered in one run ("
                             + ", ".join(SOURCES) + "); results in chat_accuracy_<sets>.json "
                             "with figures per set")
    parser.add_argument("--sample", default=None,
                        help="what the result is in or out of sample of, when not what the set "
                             "implies (e.g. a re-run after fixes made from reading its replies)")
    parser.add_argument("--out", default=None,
                        help="result file name under experiments/results (default: by set)")
    parser.add_argument("--report-only", action="store_true",
                        help="no model calls: summarise the stored replies")
    args = parser.parse_args()
    if args.sets:
        names_of_sets = [n.strip() for n in args.sets.split(",")]
        unknown = [n for n in names_of_sets if n not in SOURCES]
        if unknown:
            parser.error(f"--sets: unknown set(s) {unknown}; choose from {sorted(SOURCES)}")
        sources = {n: SOURCES[n] for n in names_of_sets}
        out = RESULTS.with_name(f"chat_accuracy_{'_'.join(names_of_sets)}.json")
    elif args.fresh:
        sources, out = {"fresh": FRESH}, RESULTS.with_name("chat_accuracy_fresh.json")
    elif args.heldout:
        sources, out = {"heldout": HELDOUT}, RESULTS.with_name("chat_accuracy_heldout.json")
    else:
        sources, out = {"dev": QA}, RESULTS
    if args.out:
        out = RESULTS.with_name(args.out)
    raw = out.with_name(out.stem + "_replies.json")  # the replies stay with their result
    questions = [{**json.loads(line), "source": name} for name, source in sources.items()
                 for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    flawed = {json.loads(line)["title"] for line in REVIEW.read_text(encoding="utf-8")
              .splitlines() if line.strip()}
    questions = [q for q in questions if "question" in q and q["title"] not in flawed]
    if args.limit:
        questions = questions[: args.limit]
    names = [n.strip() for n in args.systems.split(",")]
    started = time.perf_counter()
    replies: dict[str, list[dict[str, Any]]] = {}
    if args.resume and raw.exists():
        replies = json.loads(raw.read_text(encoding="utf-8"))

    def save() -> None:
        raw.parent.mkdir(parents=True, exist_ok=True)
        tmp = raw.with_suffix(".tmp")
        tmp.write_text(json.dumps(replies, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(raw)

    if not args.report_only:
        asyncio.run(run(questions, names, args.no_cache, replies, save))
    # The systems asked for, on the questions every one of them answered (a stopped run, or
    # a slow system run on fewer questions, compares like with like).
    replies = {k: v for k, v in replies.items() if k in names}
    common = set.intersection(*({r["title"] for r in rows} for rows in replies.values()))
    replies = {k: [r for r in v if r["title"] in common] for k, v in replies.items()}
    questions = [q for q in questions if q["title"] in common]
    table = Table(title=f"chat accuracy, {len(questions)} questions (95 % CI)")
    labels = read_labels()
    for column in ("system", "correct", "partial", "I don't know", "wrong",
                   "contradicted citations",
                   "conflict notes (across articles)", "s/question"):
        table.add_column(column)
    results: dict[str, Any] = {}
    for name, rows in replies.items():
        s = summary(name, rows, labels)
        s["by_set"] = {k: summary(name, [r for r in rows if r["set"] == k], labels)
                       for k in ("recent", "tail", "head")}
        if len(sources) > 1:
            s["by_source"] = {k: summary(name, [r for r in rows if r.get("source") == k],
                                         labels) for k in sources}
        results[name] = s

        def cell(v: list[float]) -> str:
            return f"{v[0]:.3f} [{v[1]:.2f}, {v[2]:.2f}]"

        table.add_row(name, cell(s["accuracy"]), cell(s["partial"]), cell(s["dont_know"]),
                      cell(s["wrong"]),
                      str(s["contradicted_citations"]),
                      f"{s['conflict_notes']} ({s['conflict_notes_across_articles']})",
                      str(s["mean_seconds"]))
    Console().print(table)
    settings = load_settings().settings
    sets = collections.Counter(q["set"] for q in questions)
    # In sample: the dev and held-out sets were read to make the chat's checks; the fresh
    # set was made after the last such change and nothing was tuned on it.
    sample = args.sample or ("out of sample" if args.fresh or set(sources) == {"fresh2"}
                             else "in sample")
    write_result(out, {
        "model": settings.model,
        "seconds": round(time.perf_counter() - started, 1),
        "systems": results,
    }, data=data_provenance(
        {"constructed": 1.0}, sample=sample,
        sources=["../shared/data/wikipedia/topics (WikiChat topic leads, CC BY-SA)"],
        questions=len(questions), by_set=dict(sets),
        by_source=dict(collections.Counter(q["source"] for q in questions)),
        provenance="real lead paragraphs of the default corpus; questions written by the "
                   "default model and checked by script (answer span in the paragraph); "
                   "constructed questions, real passages; replies the rules cannot place "
                   "are labelled by reading (data/chat_accuracy_labels.jsonl)"))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
