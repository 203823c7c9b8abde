"""End-to-end replies of vanilla, rag and the grounded chat (checked, wikichat), scored by kind.

The questions are the frozen chat evaluation set (``experiments/data/chat_eval/``, its README):
answerable and two-part questions over real leads of the default corpus, questions whose
subject or asked fact the corpus lacks, false premises, two-turn follow-ups, WikiContradict's
real contradicting paragraph pairs (asked against their own small corpus, built here from
``../shared/data/wikicontradict``) and human-written false-premise questions of FalseQA (read
from a local clone, ``--falseqa``). Every system runs with the same model, through the system
registry, as ``freshwiki eval`` runs it; the earlier development sets (``--legacy``) still run
for development.

A reply is placed by rules, and where rules cannot tell, by a label read by hand
(``labels.jsonl`` beside the questions, one line of reason each, keyed by system, item and the
exact reply; unread ones are reported as such):

- answerable, two-part, follow-up: **correct** (states every part: its words in order, or every
  value word of one accepted spelling), **partial** (some part, or some of a name), **I don't
  know** (says so, or the grounded chat's "I don't know", ``grounded=False``), else **wrong** or
  **unspecific** by reading;
- absent subject or fact: **abstained** (says it does not know) or **answered** (anything else:
  an invented answer, or unrelated quotes);
- false premise: **corrected** (states what the lead says instead, and does not restate the
  premise as true), **rejected** (says the premise does not hold, by reading), **abstained**,
  else **affirmed** (goes along with it), by reading;
- conflict: **both** values, **one**, or **neither** (abstentions counted apart);
- FalseQA: **affirmed** (answers as if the premise were true, by reading), **corrected**,
  **rejected** or **abstained**.

Also counted: **contradicted citations** (a wrong or affirming reply that cites the question's
own lead, which states otherwise), and **conflict notes** on every kind (a note on a set
without a contradiction is a false alarm).

The checked mode and rag are compared question by question on the answerable kinds: the mean
difference of correct (1/0) with a paired bootstrap interval and a sign-flip p-value.
Writes ``experiments/results/chat_accuracy_eval.json`` (``--out``) and every reply beside it
(``*_replies.json``, no FalseQA question text: its repository states no licence). Run::

    .venv/bin/python experiments/chat_accuracy.py --no-cache --falseqa ../FalseQA
    .venv/bin/python experiments/chat_accuracy.py --split dev --systems rag,checked
    .venv/bin/python experiments/chat_accuracy.py --legacy fresh,fresh2 --systems rag,checked
    .venv/bin/python experiments/chat_accuracy.py --report-only   # re-score stored replies
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from _provenance import data_provenance, header, write_result
from freshwiki.config import Settings, load_settings
from freshwiki.llm import LLM, Message, open_llm
from freshwiki.seams import Sample, Task
from freshwiki.stats import bootstrap_ci, sign_flip_p, wilson_ci
from freshwiki.systems import load_system

HERE = Path(__file__).parent
QUESTIONS = HERE / "data" / "chat_eval" / "questions.jsonl"
LABELS = HERE / "data" / "chat_eval" / "labels.jsonl"
RESULTS = HERE / "results" / "chat_accuracy_eval.json"
WIKICONTRADICT = HERE.parent.parent / "shared" / "data" / "wikicontradict" / "wikicontradict.json"
CONFLICT_INDEX = "wikicontradict-pairs"
"""The conflict items' corpus: every paragraph of WikiContradict's 130 pairs, one passage each."""
FALSEQA_COMMIT = "9a97299"
LEGACY = {"dev": "qa.jsonl", "heldout": "qa_heldout.jsonl", "fresh": "qa_fresh.jsonl",
          "fresh2": "qa_fresh2.jsonl"}
"""Earlier development sets (answerable only; in sample for the chat): for development runs."""
SYSTEMS = {"vanilla": ("vanilla", {}), "rag": ("rag", {}),
           "checked": ("grounded", {"mode": "checked"}),
           "wikichat": ("grounded", {"mode": "wikichat"})}
ANSWERABLE = ("answerable", "two_part", "followup")
ABSENT = ("absent_subject", "absent_fact")
KINDS = (*ANSWERABLE, *ABSENT, "false_premise", "conflict", "falseqa")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_IDK = re.compile(
    r"(?i)\b(?:i don't know|i do not know|could not find|couldn't find|can't find|cannot find|"
    r"no information|not (?:mentioned|stated|provided|specified|available)|i'm not sure|"
    r"i am not sure|don't have|do not have|unable to (?:find|answer|determine)|"
    r"(?:do|does) not (?:say|mention|state|provide))")
_NOTE = re.compile(r"(?i)\b(?:sources|passages) disagree\b")
_MARKER = re.compile(r"\[(\d+)\]")
_HEDGES = frozenset({"approximately", "about", "around", "circa", "c", "some", "nearly"})
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_STOP = frozenset({"the", "a", "an", "of", "in", "on", "at", "and", "to", "for", "by"})


# -- scoring by rules ----------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Lower-cased words."""
    return _WORD.findall(text.lower())


def _key_words(text: str) -> set[str]:
    """Words that carry a value: months as numbers, hedges and stopwords dropped."""
    out = set()
    for w in words(text):
        if w in _HEDGES or w in _STOP:
            continue
        month = next((n for m, n in _MONTHS.items() if w == m or (
            3 <= len(w) <= 4 and m.startswith(w) and w != "may")), None)
        out.add(str(month) if month is not None else w)
    return out


def states(reply: str, answer: str) -> bool:
    """Whether ``reply`` states ``answer``: its words in order, or every value word of it."""
    hay, need = words(reply), words(answer)
    if need and any(hay[i:i + len(need)] == need for i in range(len(hay) - len(need) + 1)):
        return True
    wanted = _key_words(answer)
    return bool(wanted) and wanted <= _key_words(reply)


def parts_stated(reply: str, parts: Sequence[Sequence[str]]) -> list[bool]:
    """For each required part, whether the reply states one of its spellings."""
    return [any(states(reply, a) for a in part) for part in parts]


def abstains(reply: str, grounded: bool) -> bool:
    """The reply says it does not know (or is the grounded chat's "I don't know")."""
    return not grounded or bool(_IDK.search(reply))


def rule_outcome(item: dict[str, Any], reply: str, grounded: bool) -> str:
    """The outcome the rules can give, or ``other`` (to be read)."""
    kind = item["kind"]
    parts = item.get("answers") or []
    question = item.get("question") or ""
    if kind in ANSWERABLE:
        stated = parts_stated(reply, parts)
        if stated and all(stated):
            return "correct"
        if abstains(reply, grounded) and not any(stated):
            return "dont_know"
        distinctive = {w for part in parts for a in part[:1] for w in _key_words(a)
                       if not w.isdigit()} - _key_words(question)
        if any(stated) or distinctive & _key_words(reply):
            return "partial"
        return "other"
    if kind in ABSENT:
        return "abstained" if abstains(reply, grounded) else "answered"
    if kind == "conflict":
        stated = parts_stated(reply, parts)
        if all(stated):
            return "both"
        if abstains(reply, grounded) and not any(stated):
            return "dont_know"
        return "one" if any(stated) else "neither"
    if kind == "false_premise":
        if any(parts_stated(reply, parts)):
            return "other"  # states the correction; whether it also affirms is read
        return "abstained" if abstains(reply, grounded) else "other"
    if kind == "falseqa":
        return "abstained" if abstains(reply, grounded) else "other"
    raise ValueError(f"unknown kind {kind!r}")


# -- items, systems, runs ------------------------------------------------------------------


def load_items(split: str, kinds: Sequence[str], legacy: Sequence[str],
               falseqa: Path | None) -> list[dict[str, Any]]:
    """The items to run: the frozen set's ``split`` (or the legacy development sets)."""
    if legacy:
        items = []
        flawed = {json.loads(line)["title"] for line in (HERE / "data" / "qa_review.jsonl")
                  .read_text(encoding="utf-8").splitlines() if line.strip()}
        for name in legacy:
            for line in (HERE / "data" / LEGACY[name]).read_text(encoding="utf-8").splitlines():
                row = json.loads(line) if line.strip() else {}
                if "question" in row and row["title"] not in flawed:
                    items.append({"id": f"{name}:{row['title']}", "kind": "answerable",
                                  "set": row["set"], "split": name, "titles": [row["title"]],
                                  "question": row["question"], "answers": [[row["answer"]]]})
        return items
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    items = [r for r in rows if r["split"] == split and r["kind"] in kinds]
    if any(r["kind"] == "falseqa" for r in items):
        if falseqa is None:
            print("note: no --falseqa clone given; the FalseQA items are left out",
                  file=sys.stderr)
            items = [r for r in items if r["kind"] != "falseqa"]
        else:
            texts = falseqa_questions(falseqa)
            for item in items:
                if item["kind"] == "falseqa":
                    text = texts[item["falseqa_row"]]
                    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
                    if digest != item["question_sha256"]:
                        raise SystemExit(f"{falseqa}: row {item['falseqa_row']} of "
                                         f"{item['falseqa_file']} is not the question of "
                                         f"{item['id']} (sha256 differs): check out commit "
                                         f"{FALSEQA_COMMIT}")
                    item["question"] = text
    return items


def falseqa_questions(clone: Path) -> list[str]:
    """The question column of FalseQA's ``dataset/test.csv`` (a clone, or a bare git dir)."""
    path = clone / "dataset" / "test.csv"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        text = subprocess.run(["git", "-C", str(clone), "show", "HEAD:dataset/test.csv"],
                              capture_output=True, text=True, check=True).stdout
    return [row["question"] for row in csv.DictReader(io.StringIO(text))]


def build_conflict_index(settings: Settings) -> None:
    """The conflict items' corpus (once): each WikiContradict paragraph as one passage."""
    from freshwiki.records import Passage
    from freshwiki.retrieval import Embedder, HybridIndex, default_index_dir, has_index

    if has_index(settings, CONFLICT_INDEX):
        return
    data = json.loads(WIKICONTRADICT.read_text(encoding="utf-8"))
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


async def answer(system: Any, item: dict[str, Any]) -> dict[str, Any]:
    """One item through one system (a follow-up: both turns; the second is scored)."""
    turns = item.get("turns") or [item["question"]]
    messages: list[Message] = []
    started = time.perf_counter()
    first = ""
    output: Any = None
    for n, question in enumerate(turns):
        messages.append(Message.user(question))
        task = Task(sample=Sample(id=item["id"], input=question), template="qa",
                    messages=tuple(messages), query=question, max_tokens=200)
        output = await system.respond(task)
        messages.append(Message.assistant(output.text))
        if n == 0 and len(turns) > 1:
            first = output.text
    trace = output.trace or {}
    chat = trace.get("chat") or {}
    return {"reply": output.text, "first_reply": first,
            "grounded": bool(trace.get("grounded", True)),
            # The grounded chat's answer before its check, and each sentence's verdict: what
            # the check removed or corrected, to measure how often it was right to.
            "draft": chat.get("draft"),
            "checks": [[c["verdict"], c["claim"], c["rationale"], c["correction"]]
                       for c in chat.get("reply_checks") or ()],
            "cited_titles": cited_titles(output),
            "conflict_note": bool(chat.get("conflicts")) or bool(_NOTE.search(output.text)),
            "llm_calls": chat.get("llm_calls"),
            "seconds": round(time.perf_counter() - started, 2),
            "first_text_s": (chat.get("timings") or {}).get("first_text"),
            "cache_hit": output.cache_hit}


def cited_titles(output: Any) -> list[str]:
    """Titles of the passages the reply cites ([n] of rag's passages, or chat citations)."""
    trace = output.trace or {}
    if "citations" in trace:
        return sorted({c["evidence"]["title"] for c in trace.get("citations") or ()})
    retrieved = trace.get("retrieved") or []
    return sorted({retrieved[int(n) - 1]["title"] for n in _MARKER.findall(output.text)
                   if 1 <= int(n) <= len(retrieved)})


async def run(items: list[dict[str, Any]], names: list[str], cache: bool,
              replies: dict[str, dict[str, Any]], save: Any) -> None:
    """Every item through every system, item by item (a stopped run stays comparable)."""
    settings = load_settings().settings
    llm: LLM = open_llm(settings.model, settings=settings, cache=cache)
    if any(i["kind"] == "conflict" for i in items):
        build_conflict_index(settings)
    systems: dict[tuple[str, str], Any] = {}

    def system(name: str, item: dict[str, Any]) -> Any:
        index = CONFLICT_INDEX if item["kind"] == "conflict" else ""
        key = (name, index)
        if key not in systems:
            kind, options = SYSTEMS[name]
            if index and name != "vanilla":
                options = {**options, "index": index}
            systems[key] = load_system(kind, llm, settings, options)
        return systems[key]

    try:
        with Progress() as bar:
            task_id = bar.add_task("items", total=len(items))
            for item in items:
                for name in names:
                    done = replies.setdefault(name, {})
                    if item["id"] not in done:
                        done[item["id"]] = await answer(system(name, item), item)
                save()
                bar.advance(task_id)
    finally:
        for value in systems.values():
            closer = getattr(value, "aclose", None)
            if closer is not None:
                await closer()
        await llm.aclose()


# -- labels and summaries ------------------------------------------------------------------


def reply_key(system: str, item_id: str, reply: str) -> str:
    """Identifies one reply for a hand label (system, item, exact reply text)."""
    return hashlib.sha256(f"{system}\n{item_id}\n{reply}".encode()).hexdigest()[:16]


def read_labels() -> dict[str, dict[str, Any]]:
    """Hand labels: ``{key, system, id, outcome, reason, overrides?}`` per line."""
    if not LABELS.exists():
        return {}
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {r["key"]: r for r in rows}


def outcome(system: str, item: dict[str, Any], row: dict[str, Any],
            labels: dict[str, dict[str, Any]]) -> str:
    """The rules' outcome, or a label's where the rules cannot tell (or it overrides them)."""
    ruled = rule_outcome(item, row["reply"], row["grounded"])
    label = labels.get(reply_key(system, item["id"], row["reply"]))
    if label is not None and (ruled == "other" or label.get("overrides") == ruled):
        return str(label["outcome"])
    return ruled


def share(hits: int, n: int) -> list[float] | None:
    """Share with its Wilson 95 % interval (rounded)."""
    interval = wilson_ci(hits, n)
    if interval is None:
        return None
    return [round(hits / n, 4), round(interval.low, 4), round(interval.high, 4)]


def summarise(name: str, items: list[dict[str, Any]], rows: dict[str, dict[str, Any]],
              labels: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Outcome shares per kind, contradicted citations, conflict notes, seconds."""
    by_kind: dict[str, Any] = {}
    outcomes = {i["id"]: outcome(name, i, rows[i["id"]], labels) for i in items}
    for kind in KINDS:
        mine = [i for i in items if i["kind"] == kind]
        if not mine:
            continue
        count = collections.Counter(outcomes[i["id"]] for i in mine)
        entry: dict[str, Any] = {"n": len(mine), "counts": dict(sorted(count.items()))}
        entry["shares"] = {k: share(v, len(mine)) for k, v in sorted(count.items())}
        entry["unread"] = count.get("other", 0)
        contradicted = [i["id"] for i in mine if outcomes[i["id"]] in ("wrong", "affirmed")
                        and set(i.get("titles") or ()) & set(rows[i["id"]]["cited_titles"])]
        entry["contradicted_citations"] = len(contradicted)
        entry["contradicted_ids"] = contradicted
        entry["conflict_notes"] = sum(bool(rows[i["id"]]["conflict_note"]) for i in mine)
        by_kind[kind] = entry
    answerable = [i for i in items if i["kind"] in ANSWERABLE]
    seconds = [rows[i["id"]]["seconds"] for i in items]
    check = check_effect(answerable, rows, outcomes)
    return {
        "check_effect": check,
        "n": len(items),
        "by_kind": by_kind,
        "answerable_correct": share(sum(outcomes[i["id"]] == "correct" for i in answerable),
                                    len(answerable)) if answerable else None,
        "contradicted_citations": sum(e["contradicted_citations"] for e in by_kind.values()),
        "conflict_notes_outside_conflicts": sum(
            e["conflict_notes"] for k, e in by_kind.items() if k != "conflict"),
        "mean_seconds": round(sum(seconds) / max(len(seconds), 1), 2),
        "by_set": {s: share(sum(outcomes[i["id"]] == "correct" for i in answerable
                                if i.get("set") == s),
                            sum(i.get("set") == s for i in answerable))
                   for s in ("head", "tail", "recent")
                   if any(i.get("set") == s for i in answerable)},
    }


def check_effect(items: list[dict[str, Any]], rows: dict[str, dict[str, Any]],
                 outcomes: dict[str, str]) -> dict[str, Any] | None:
    """What the check did to the checked mode's own answers (answerable kinds, by rule).

    The answer before the check (the trace's draft) either states every part of the gold
    answer or not; the reply after it is correct or not. A right answer the check did not let
    through is its false alarm; a wrong one it corrected, or withheld, is what it is for.
    """
    with_draft = [i for i in items if rows[i["id"]].get("draft") is not None]
    if not with_draft:
        return None
    right = [i for i in with_draft
             if all(parts_stated(rows[i["id"]]["draft"], i["answers"]))]
    wrong = [i for i in with_draft if i not in right]
    kept = sum(outcomes[i["id"]] == "correct" for i in right)
    corrected = sum(outcomes[i["id"]] == "correct" for i in wrong)
    withheld = sum(outcomes[i["id"]] == "dont_know" for i in wrong)
    return {"answers_right": len(right), "kept_right": kept,
            "right_kept_share": share(kept, len(right)),
            "answers_not_right": len(wrong), "corrected": corrected,
            "withheld": withheld, "neither": len(wrong) - corrected - withheld}


def paired(a: str, b: str, items: list[dict[str, Any]], replies: dict[str, Any],
           labels: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """``a`` minus ``b`` on correct (1/0), paired by answerable question."""
    answerable = [i for i in items if i["kind"] in ANSWERABLE]
    if not answerable or a not in replies or b not in replies:
        return None
    diff = [float(outcome(a, i, replies[a][i["id"]], labels) == "correct")
            - float(outcome(b, i, replies[b][i["id"]], labels) == "correct")
            for i in answerable]
    interval = bootstrap_ci(diff)
    p_value, _ = sign_flip_p(diff)
    return {"n": len(diff), "mean_difference": round(sum(diff) / len(diff), 4),
            "ci95": [round(interval.low, 4), round(interval.high, 4)] if interval else None,
            "p_value": round(p_value, 4),
            f"{a}_only": sum(d > 0 for d in diff), f"{b}_only": sum(d < 0 for d in diff)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", default="vanilla,rag,checked,wikichat")
    parser.add_argument("--split", default="test",
                        choices=("test", "dev", *(f"test{n}" for n in range(2, 8))))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--legacy", default="",
                        help="comma-separated earlier development sets instead ("
                             + ", ".join(LEGACY) + "); in sample for the chat")
    parser.add_argument("--falseqa", type=Path, default=None,
                        help=f"a clone of github.com/thunlp/FalseQA at {FALSEQA_COMMIT}")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--stride", type=int, default=1,
                        help="answer every K-th item only (a spread-out subset for a slow "
                             "system; the report then scores that subset)")
    parser.add_argument("--no-cache", action="store_true",
                        help="pay for every call (the timing in the replies is then real)")
    parser.add_argument("--out", default=None, help="result file name under "
                                                    "experiments/results")
    parser.add_argument("--replies", default=None,
                        help="replies file under experiments/results (default: the result "
                             "file's name + _replies): score a subset of systems of a run, "
                             "e.g. one that answered only part of the items, on its own")
    parser.add_argument("--report-only", action="store_true",
                        help="no model calls: score the stored replies")
    parser.add_argument("--sample", default=None,
                        help="what the result is in or out of sample of, when not the default")
    args = parser.parse_args()
    names = [n.strip() for n in args.systems.split(",") if n.strip()]
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        parser.error(f"--systems: unknown {unknown}; choose from {sorted(SYSTEMS)}")
    legacy = [n.strip() for n in args.legacy.split(",") if n.strip()]
    if any(n not in LEGACY for n in legacy):
        parser.error(f"--legacy: choose from {sorted(LEGACY)}")
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if any(k not in KINDS for k in kinds):
        parser.error(f"--kinds: choose from {list(KINDS)}")
    items = load_items(args.split, kinds, legacy, args.falseqa)
    if args.stride < 1:
        parser.error("--stride must be 1 or more")
    items = items[:: args.stride]
    if args.limit:
        items = items[: args.limit]
    default = (f"chat_accuracy_legacy_{'_'.join(legacy)}.json" if legacy
               else RESULTS.name if args.split == "test"
               else f"chat_accuracy_eval_{args.split}.json")
    out = RESULTS.with_name(args.out or default)
    raw = out.with_name(args.replies or out.stem + "_replies.json")
    replies: dict[str, dict[str, Any]] = {}
    if raw.exists():
        replies = json.loads(raw.read_text(encoding="utf-8"))

    def save() -> None:
        raw.parent.mkdir(parents=True, exist_ok=True)
        tmp = raw.with_suffix(".tmp")
        tmp.write_text(json.dumps(replies, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(raw)

    started = time.perf_counter()
    if not args.report_only:
        # Systems may answer in several passes (a long baseline first, a system under
        # development later): each pass is recorded with its command, commit and date.
        passes = replies.setdefault("_passes", {})
        stamp = header(data={})
        passes[stamp["date"]] = {"systems": names, "command": stamp["command"],
                                 "commit": stamp["commit"], "cache": not args.no_cache,
                                 "src_uncommitted_changes": stamp["src_uncommitted_changes"]}
        asyncio.run(run(items, names, not args.no_cache, replies, save))
    passes_done = replies.pop("_passes", {})
    present = [n for n in names if n in replies]
    items = [i for i in items if all(i["id"] in replies[n] for n in present)]
    labels = read_labels()
    results = {n: summarise(n, items, replies[n], labels) for n in present}
    comparisons = {f"{a} - rag": paired(a, "rag", items, replies, labels)
                   for a in present if a != "rag"}
    table = Table(title=f"chat accuracy, {len(items)} items (95 % CI)")
    for column in ("system", "answerable correct", "abstained (absent)", "premise fixed",
                   "conflict both", "contradicted cit.", "false conflict notes", "s/item"):
        table.add_column(column)

    def cell(v: list[float] | None) -> str:
        return "—" if v is None else f"{v[0]:.3f} [{v[1]:.2f}, {v[2]:.2f}]"

    for name, s in results.items():
        kinds_ = s["by_kind"]
        absent = [kinds_[k] for k in ABSENT if k in kinds_]
        abstained = sum(e["counts"].get("abstained", 0) for e in absent)
        fp = kinds_.get("false_premise")
        fixed = (fp["counts"].get("corrected", 0) + fp["counts"].get("rejected", 0)) if fp else 0
        conflict = kinds_.get("conflict")
        table.add_row(
            name, cell(s["answerable_correct"]),
            cell(share(abstained, sum(e["n"] for e in absent))) if absent else "—",
            cell(share(fixed, fp["n"])) if fp else "—",
            cell(share(conflict["counts"].get("both", 0), conflict["n"])) if conflict else "—",
            str(s["contradicted_citations"]), str(s["conflict_notes_outside_conflicts"]),
            str(s["mean_seconds"]))
    Console().print(table)
    for label, comparison in comparisons.items():
        if comparison:
            print(f"{label} (answerable, paired): {comparison}")
    unread = {n: sum(e["unread"] for e in s["by_kind"].values()) for n, s in results.items()}
    if any(unread.values()):
        print(f"replies the rules cannot place and no label reads yet: {unread}")
    settings = load_settings().settings
    kinds_count = collections.Counter(i["kind"] for i in items)
    real = sum(v for k, v in kinds_count.items() if k in ("conflict", "falseqa"))
    sample = args.sample or (
        "in sample (earlier development sets, read to tune the chat)" if legacy else
        "out of sample: the test split, frozen before the checked mode was written and never "
        "tuned on" if args.split == "test" else
        "out of sample: the test2 split, frozen before the premise and coverage changes it "
        "measures and never tuned on (the test split is in sample from then on)"
        if args.split == "test2" else
        "out of sample: the test3 split, frozen before the check changes it measures (decades, "
        "asked kind, dated names, quoted fallback) and never tuned on (test and test2 are in "
        "sample from then on)" if args.split == "test3" else
        "out of sample: the test4 split, frozen before the false-premise change it measures "
        "(names with digits, opposite directions, naming what no passage mentions)"
        if args.split == "test4" else
        "out of sample: the test5 split, frozen before the change it measures (elided "
        "articles, possessive names, independent clauses checked apart); test3 is in sample "
        "from then on" if args.split == "test5" else
        "out of sample: the test6 split, frozen before the change it measures (3M as a name, "
        "why-question names, numbered readings); test5 is in sample from then on"
        if args.split == "test6" else
        "out of sample: the test7 split, frozen before the change it measures (a value read "
        "back from the passages away from its subject is released); test6 is in sample from "
        "then on" if args.split == "test7" else "development split (tuned on)")
    write_result(out, {
        "model": settings.model,
        "seconds": round(time.perf_counter() - started, 1),
        "cache": "off" if args.no_cache else "on",
        "passes": passes_done,
        "systems": results,
        "paired": comparisons,
    }, data=data_provenance(
        {"real": round(real / max(len(items), 1), 4),
         "constructed": round(1 - real / max(len(items), 1), 4)},
        sample=sample,
        sources="; ".join([
            "../shared/data/wikipedia/topics (WikiChat topic leads, CC BY-SA)",
            "../shared/data/wikicontradict (WikiContradict, MIT)",
            f"thunlp/FalseQA dataset/test.csv @ {FALSEQA_COMMIT} (no licence stated; rows "
            "referenced by index and hash)"]),
        items=len(items), by_kind=dict(kinds_count),
        provenance="questions written by project maintainers by reading real leads (not "
                   "independent human annotation), WikiContradict's and FalseQA's questions "
                   "written by their authors; constructed = questions over real passages, "
                   "real = items whose question and passages are both from public human-"
                   "written sets; replies the rules cannot place are labelled by reading "
                   f"({LABELS.relative_to(HERE.parent)})"))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
