"""End-to-end replies of vanilla, rag and the grounded chat (checked, wikichat), scored by kind.

The questions are the frozen chat evaluation set (``experiments/data/chat_eval/``, its README):
answerable and two-part questions over real leads of the default corpus, questions whose
subject or asked fact the corpus lacks, false premises, two-turn follow-ups, WikiContradict's
real contradicting paragraph pairs (asked against their own small corpus, built here from
``../shared/data/wikicontradict``) and human-written false-premise questions of FalseQA (read
from a local clone, ``--falseqa``). Every system runs with the same model through the
evaluation runner, as the ``chat_accuracy`` benchmark (``freshwiki eval chat_accuracy``):
each system's replies are a stored run (two for a split with conflict items, which are asked
against their own corpus), resumed when the command is run again and exported with
``freshwiki runs export``. The
earlier development sets (``--legacy``) still run for development.

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
Writes ``experiments/results/chat_accuracy_eval.json`` (``--out``: a name under
``experiments/results`` or a path) with the runs' ids, and every reply beside it
(``*_replies.json``, read back from the runs; no FalseQA question text: its repository states
no licence). Run::

    .venv/bin/python experiments/chat_accuracy.py --no-cache --falseqa ../FalseQA
    .venv/bin/python experiments/chat_accuracy.py --split dev --systems rag,checked
    .venv/bin/python experiments/chat_accuracy.py --legacy fresh,fresh2 --systems rag,checked
    .venv/bin/python experiments/chat_accuracy.py --report-only   # re-score stored replies
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from _provenance import data_provenance, header, write_result
from freshwiki.benchmarks.chat_accuracy import (
    ABSENT,
    ANSWERABLE,
    CONFLICT_INDEX,
    FALSEQA_COMMIT,
    KINDS,
    LEGACY,
    SPLITS,
    ChatEvalError,
    build_conflict_index,
    chat_accuracy_benchmark,
    read_labels,
    reply_key,
    rule_outcome,
)
from freshwiki.benchmarks.chat_accuracy import load_items as load_set_items
from freshwiki.benchmarks.chat_accuracy.analysis import paired, reply_row, share, summarise
from freshwiki.config import Settings, load_settings
from freshwiki.evaluation import ResultsStore, default_results_path, run_evaluation

HERE = Path(__file__).parent
DATA = HERE / "data" / "chat_eval"
QUESTIONS = DATA / "questions.jsonl"
LABELS = DATA / "labels.jsonl"
RESULTS = HERE / "results" / "chat_accuracy_eval.json"
WIKICONTRADICT = HERE.parent.parent / "shared" / "data" / "wikicontradict" / "wikicontradict.json"
SYSTEMS = {"vanilla": ("vanilla", {}), "rag": ("rag", {}),
           "checked": ("grounded", {"mode": "checked"}),
           "wikichat": ("grounded", {"mode": "wikichat"})}
"""Script system name -> (registered system, options); the labels are keyed by these names."""
__all__ = ["ABSENT", "ANSWERABLE", "KINDS", "LABELS", "RESULTS", "load_items", "reply_key",
           "rule_outcome"]  # what chat_eval_labels.py reads


def load_items(split: str, kinds: Sequence[str], legacy: Sequence[str],
               falseqa: Path | None) -> list[dict[str, Any]]:
    """The items to run: the frozen set's ``split`` (or the legacy development sets)."""
    if falseqa is None and "falseqa" in kinds and not legacy:
        print("note: no --falseqa clone given; the FalseQA items are left out",
              file=sys.stderr)
    try:
        return load_set_items(DATA, split, kinds, legacy, falseqa)
    except ChatEvalError as exc:
        raise SystemExit(f"{exc.message} ({exc.hint})") from exc


def groups(items: list[dict[str, Any]]) -> list[tuple[list[str], int]]:
    """The runs one system needs: (kinds, how many of the chosen items) per corpus.

    The conflict items are asked against their own small corpus, so they are a run of their
    own; the other kinds share the default index.
    """
    present = [k for k in KINDS if any(i["kind"] == k for i in items)]
    out = []
    plain = [k for k in present if k != "conflict"]
    if plain:
        out.append((plain, sum(i["kind"] != "conflict" for i in items)))
    if "conflict" in present:
        out.append((["conflict"], sum(i["kind"] == "conflict" for i in items)))
    return out


async def run(items: list[dict[str, Any]], names: list[str], args: argparse.Namespace,
              settings: Settings, store: Path, replies: dict[str, dict[str, Any]],
              save: Any) -> dict[str, list[str]]:
    """Every system through the runner (one run per corpus), its replies read back.

    One item at a time (``concurrency=1``), as the script always ran them, so each reply's
    seconds are its own. A stopped run resumes where it stopped: the runner skips what its
    store holds.
    """
    runs: dict[str, list[str]] = {}
    plan = groups(items)
    if any(k == ["conflict"] for k, _ in plan) and any(n != "vanilla" for n in names):
        build_conflict_index(settings, WIKICONTRADICT)
    console = Console(stderr=True)
    for name in names:
        kind, options = SYSTEMS[name]
        for kinds, count in plan:
            bench_options: dict[str, Any] = {"split": args.split, "kinds": ",".join(kinds),
                                             "stride": args.stride}
            if args.legacy:
                bench_options["legacy"] = args.legacy
            given = dict(bench_options)
            if args.falseqa is not None:
                given["falseqa"] = str(args.falseqa)
            benchmark = chat_accuracy_benchmark(settings, given)
            system_options = dict(options)
            if kinds == ["conflict"] and kind != "vanilla":
                system_options["index"] = CONFLICT_INDEX
            summary = await run_evaluation(
                benchmark, system=kind, options=system_options, judge=None,
                limit=count, benchmark_options={**bench_options,
                                                "falseqa": args.falseqa is not None},
                settings=settings, store_path=store, cache=not args.no_cache,
                concurrency=1, label=name, console=console)
            run_id = summary.info.run_id
            runs.setdefault(name, []).append(run_id)
            print(f"{name} {'+'.join(kinds)}: run {run_id}, {summary.complete}/{summary.items}"
                  f" complete, {len(summary.failures)} failed", file=sys.stderr)
            done = replies.setdefault(name, {})
            with ResultsStore(store) as results:
                for item in items:
                    if item["kind"] not in kinds:
                        continue
                    output = results.get_output(run_id, item["id"], "qa")
                    if output is not None:
                        done[item["id"]] = reply_row(output.text, output.trace,
                                                     latency_s=output.latency_s,
                                                     cache_hit=output.cache_hit)
            save()
    return runs


def outcomes_of(name: str, items: list[dict[str, Any]], rows: dict[str, Any],
                labels: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each item's outcome for system ``name``: the rules', or a label's where they cannot."""
    out = {}
    for item in items:
        row = rows[item["id"]]
        ruled = rule_outcome(item, row["reply"], row["grounded"])
        label = labels.get(reply_key(name, item["id"], row["reply"]))
        out[item["id"]] = (str(label["outcome"]) if label is not None and (
            ruled == "other" or label.get("overrides") == ruled) else ruled)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", default="vanilla,rag,checked,wikichat")
    parser.add_argument("--split", default="test",
                        choices=SPLITS)
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
                                                    "experiments/results, or a path")
    parser.add_argument("--store", type=Path, default=None,
                        help="the runs database (default: the home's runs/runs.sqlite)")
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
    if args.stride < 1:
        parser.error("--stride must be 1 or more")
    # Strided over every kind, then filtered, as the benchmark does (see chat_accuracy).
    items = [i for i in load_items(args.split, KINDS, legacy, args.falseqa)[:: args.stride]
             if i["kind"] in kinds]
    if args.limit:
        items = items[: args.limit]
    default = (f"chat_accuracy_legacy_{'_'.join(legacy)}.json" if legacy
               else RESULTS.name if args.split == "test"
               else f"chat_accuracy_eval_{args.split}.json")
    out = (Path(args.out) if args.out and Path(args.out).parent != Path(".")
           else RESULTS.with_name(args.out or default))
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
    settings = load_settings().settings
    if not args.report_only:
        # Systems may answer in several passes (a long baseline first, a system under
        # development later): each pass is recorded with its command, commit and date.
        passes = replies.setdefault("_passes", {})
        stamp = header(data={})
        entry = {"systems": names, "command": stamp["command"],
                 "commit": stamp["commit"], "cache": not args.no_cache,
                 "src_uncommitted_changes": stamp["src_uncommitted_changes"]}
        passes[stamp["date"]] = entry
        store = args.store or default_results_path(settings)
        entry["runs"] = asyncio.run(run(items, names, args, settings, store, replies, save))
        save()
    passes_done = replies.pop("_passes", {})
    present = [n for n in names if n in replies]
    items = [i for i in items if all(i["id"] in replies[n] for n in present)]
    labels = read_labels(LABELS)
    outcomes = {n: outcomes_of(n, items, replies[n], labels) for n in present}
    results = {n: summarise(items, replies[n], outcomes[n]) for n in present}
    comparisons = {f"{a} - rag": paired(a, "rag", items, outcomes)
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
        "runs": {n: sorted({r for p in passes_done.values() for r in (p.get("runs") or {})
                            .get(n, ())}) for n in present},
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
