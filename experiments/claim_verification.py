"""Claim verification on real text: the legacy and the cloze verifier, fast and full mode.

Data (``experiments/data/claims.jsonl``, built by ``build`` from ``experiments/data/qa.jsonl``,
see ``qa_data.py``; every claim is judged against one real lead paragraph of the default
corpus, read from ``../shared/data`` at run time):

- ``real-draft``: what the default model said closed book (the chat's own draft stage) to a
  question whose answer the paragraph states: the first claim of each draft. Labelled by
  reading the claim against the paragraph (``experiments/data/claim_labels.jsonl``: label,
  one-line reason, who labelled and how).
Questions that reading found flawed (``experiments/data/qa_review.jsonl``: the paragraph does
not answer them, or the generated answer is wrong) give no constructed claim.

- ``constructed-statement``: the one-sentence answer written with the question, checked by
  script to contain the answer span and stay within the paragraph's words (SUPPORTS).
- ``constructed-swap``: that sentence with its answer replaced by another question's answer
  of the same kind (year, date, number or name) (REFUTES).
- ``constructed-other-article``: a statement about another article, judged against the
  lead that shares the most (idf-weighted) words with it and does not contain its answer
  (NOT ENOUGH INFO).

``run`` gives the split's claims to the four verifiers the way the chat does: the question and
the claim, the paragraph as the retrieved passage, the fast mode's evidence block built from
it. Each verifier is a run of the evaluation runner (the ``claim_verification`` benchmark with
the ``claim-verifier`` system, ``--option verifier=...``): stored, resumed when the command is
run again, exported with ``freshwiki runs export``. The verdicts are read back from the runs
into ``claim_verification_verdicts.json``. It prints per-label precision and recall with
Wilson 95 % intervals per verifier, the share of real wrong drafts judged SUPPORTS, and
seconds per claim, and writes ``experiments/results/claim_verification.json`` (with the runs'
ids). LLM calls go through the response cache (``--no-cache`` to pay again). Run::

    .venv/bin/python experiments/claim_verification.py build
    .venv/bin/python experiments/claim_verification.py run [--limit N]
    .venv/bin/python experiments/claim_verification.py run --update --ids NEW_IDS.txt

``run --external NAME`` runs verifiers on a public human-labelled set instead
(``experiments/data/external/NAME/claims.jsonl``, rebuilt by ``external_sets.py build``; the
``claim_verification`` benchmark's ``external`` option), each as a runner run with the
claim as its own query when the set has no question. It writes
``experiments/results/claim_verification_external_NAME.json``: SUPPORTS precision and recall,
REFUTES recall and the share of not-supported claims called SUPPORTS, with Wilson 95 %
intervals, beside the majority-class and always-SUPPORTS baselines on the same claims::

    .venv/bin/python experiments/claim_verification.py run --external climate_fever \
        --verifiers cloze-fast,checked,predicate,legacy-fast [--limit N]

A malformed claims file stops the command before any model call, naming the file, the line and
the field; no result file is written.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import datetime as dt
import hashlib
import json
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from _provenance import data_provenance, write_result
from freshwiki.benchmarks.claim_verification import (
    KINDS,
    LABEL_SET,
    ClaimsError,
    claim_verification_benchmark,
)
from freshwiki.benchmarks.claim_verification.analysis import (
    constant_rows,
    majority_label,
    scores,
    supports_scores,
    verdict_row,
)
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, default_results_path, run_evaluation

HERE = Path(__file__).parent
QA = HERE / "data" / "qa.jsonl"
HELDOUT = HERE / "data" / "qa_heldout.jsonl"
"""Its closed-book drafts are real drafts too (``qa_data.py drafts --heldout``); it gives no
constructed claim, so adding them left every constructed claim as it was."""
CLAIMS = HERE / "data" / "claims.jsonl"
LABELS = HERE / "data" / "claim_labels.jsonl"
REVIEW = HERE / "data" / "qa_review.jsonl"
RESULTS = HERE / "results" / "claim_verification.json"
TODAY = dt.date(2026, 11, 24)
EXTERNAL = HERE / "data" / "external"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset({
    "a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "from", "by", "with",
    "is", "was", "were", "be", "as", "its", "it", "his", "her", "their", "this", "that",
    "which", "who", "what", "when", "where", "how", "has", "had", "have", "are", "been",
})


def words(text: str) -> list[str]:
    """Lower-cased words."""
    return _WORD.findall(text.lower())


def contains(haystack: str, needle: str) -> bool:
    """Whether ``needle``'s words occur in ``haystack`` contiguously."""
    hay, need = words(haystack), words(needle)
    return bool(need) and any(hay[i:i + len(need)] == need
                              for i in range(len(hay) - len(need) + 1))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSON-lines file (none if it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def leads(data_dir: Path) -> dict[str, dict[str, str]]:
    """``{set: {title: paragraph}}`` of the topic files."""
    names = {"recent": "recent_articles_en.json", "tail": "tail_articles_en.json",
             "head": "head_articles_en.json"}
    folder = data_dir / "wikipedia" / "topics"
    return {k: json.loads((folder / v).read_text(encoding="utf-8")) for k, v in names.items()}


def kind_of(answer: str) -> str:
    """Year, date, number or name: what a swapped-in answer has to match."""
    if re.fullmatch(r"\d{4}", answer):
        return "year"
    if re.search(r"\d", answer) and re.search(r"[A-Za-z]{3,}", answer) and re.search(
            r"(?i)jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec", answer):
        return "date"
    if re.fullmatch(r"[\d.,]+(?:\s*(?:%|million|billion|km|m))?", answer):
        return "number"
    return "name"


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build(data_dir: Path, per_kind: int) -> list[dict[str, Any]]:
    """The claims (see the module docstring), in a fixed order.

    Every claim of every real draft is kept; of each constructed kind, the first
    ``per_kind`` questions in a fixed pseudo-random order (so real wrong drafts stay at least
    a third of the whole).
    """
    paragraphs = leads(data_dir)
    qa = [r for r in read_jsonl(QA) if "question" in r]
    flawed = {r["title"] for r in read_jsonl(REVIEW)}
    labels = {r["id"]: r for r in read_jsonl(LABELS)}
    items: list[dict[str, Any]] = []

    def add(kind: str, record: dict[str, Any], claim: str, label: str, how: str,
            title: str | None = None) -> None:
        item_id = f"{kind}:{_key(record['title'] + claim)[:12]}"
        split = "dev" if int(_key(record["title"])[:8], 16) % 4 == 0 else "test"
        items.append({"id": item_id, "kind": kind, "split": split, "set": record["set"],
                      "title": title or record["title"], "question": record["question"],
                      "answer": record["answer"], "claim": claim, "label": label, "how": how})

    heldout = [r for r in read_jsonl(HELDOUT) if "question" in r]
    for record in qa + heldout:
        for n, claim in enumerate(record.get("draft") or [], start=1):
            item_id = f"real-draft:{_key(record['title'] + claim)[:12]}"
            labelled = labels.get(item_id)
            if labelled is not None:
                add("real-draft", record, claim, labelled["label"],
                    f"claim {n} of the closed-book draft of {record['draft_model']}; "
                    f"read by {labelled['labeller']}: {labelled['reason']}")
            else:
                auto = "SUPPORTS" if contains(claim, record["answer"]) else "REFUTES"
                add("real-draft", record, claim, f"UNLABELLED:{auto}",
                    f"claim {n} of the closed-book draft of {record['draft_model']}; not read")
    # Constructed claims rest on the generated answer being right: only from questions
    # whose lead was read (their draft is labelled) and found sound (``qa_review.jsonl``).
    read = {r["title"] for r in labels.values()}
    qa = [r for r in qa if r["title"] not in flawed and r["title"] in read]
    for record in sorted(qa, key=lambda r: _key(r["title"]))[:per_kind]:
        add("constructed-statement", record, record["statement"], "SUPPORTS",
            "statement written with the question; answer span and words checked by script")
    by_kind: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for record in sorted(qa, key=lambda r: _key(r["title"])):
        by_kind[kind_of(record["answer"])].append(record)
    candidates: list[tuple[dict[str, Any], str, str]] = []
    for group in by_kind.values():
        for n, record in enumerate(group):
            for other in group[n + 1:] + group[:n]:
                text = paragraphs[record["set"]][record["title"]]
                if not contains(text, other["answer"]) and other["answer"] != record["answer"]:
                    swapped = record["statement"].replace(record["answer"], other["answer"], 1)
                    if swapped != record["statement"]:
                        candidates.append((record, swapped, other["answer"]))
                    break
    candidates.sort(key=lambda c: _key(c[1]))
    for record, swapped, value in candidates[:per_kind]:
        add("constructed-swap", record, swapped, "REFUTES",
            f"answer {record['answer']!r} swapped for {value!r} (the answer to another "
            "question, of the same kind)")
    everything = {(s, t): p for s, titles in paragraphs.items() for t, p in titles.items()}
    document_frequency: collections.Counter[str] = collections.Counter()
    bags = {}
    for key, text in everything.items():
        bag = {w for w in words(f"{key[1]} {text}") if w not in _STOP}
        bags[key] = bag
        document_frequency.update(bag)
    total = len(everything)
    for record in sorted(qa, key=lambda r: _key(r["title"] + "nei"))[:per_kind]:
        wanted = {w for w in words(record["statement"]) if w not in _STOP}
        best, best_score = None, 0.0
        for key, bag in bags.items():
            if key[1] == record["title"]:
                continue
            score = sum(math.log(total / document_frequency[w]) for w in wanted & bag)
            if score > best_score and not contains(everything[key], record["answer"]):
                best, best_score = key, score
        if best is not None:
            item = dict(record, set=best[0])
            add("constructed-other-article", item, record["statement"], "NOT ENOUGH INFO",
                f"statement about {record['title']!r} judged against {best[1]!r}",
                title=best[1])
    return items


# -- running the verifiers -------------------------------------------------------------------

VERIFIERS = {"legacy fast": "legacy-fast", "cloze fast": "cloze-fast",
             "legacy full": "legacy-full", "cloze full": "cloze-full"}
"""The script's verifier names -> the ``claim-verifier`` system's ``verifier`` option."""


async def run_all(items: list[dict[str, Any]], args: argparse.Namespace, settings: Any,
                  names: list[str], only: dict[str, set[str]]
                  ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Each verifier as one runner run over the chosen claims; the verdicts read back.

    One claim at a time (``concurrency=1``) so each verdict's seconds are its own; a stopped
    run resumes where it stopped.
    """
    store = args.store or default_results_path(settings)
    console = Console(stderr=True)
    chosen = {i["id"] for i in items}
    out: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, str] = {}
    for name in names:
        kinds = [k for k in KINDS if k in only.get(name, set(KINDS))]
        options: dict[str, Any] = {"split": args.split, "kinds": ",".join(kinds)}
        if args.ids:
            options["ids"] = ",".join(sorted(chosen))
        benchmark = claim_verification_benchmark(settings, options)
        count = sum(1 for s in benchmark.samples() if s.id in chosen)
        if not count:
            continue
        summary = await run_evaluation(
            benchmark, system="claim-verifier",
            options={"verifier": VERIFIERS[name], "today": TODAY.isoformat()}, judge=None,
            limit=count if args.limit else None, benchmark_options=options, settings=settings,
            store_path=store, cache=not args.no_cache, concurrency=1, label=name,
            console=console)
        runs[name] = summary.info.run_id
        print(f"{name}: run {summary.info.run_id}, {summary.complete}/{summary.items} complete, "
              f"{len(summary.failures)} failed", file=sys.stderr)
        with ResultsStore(store) as results:
            out[name] = [verdict_row(sample_id, text, trace) for sample_id, _t, _m, text, trace
                         in results.traces(summary.info.run_id) if sample_id in chosen]
    return out, runs


def report(items: list[dict[str, Any]], results: dict[str, list[dict[str, Any]]]) -> None:
    console = Console()
    table = Table(title="claim verification (precision / recall, 95 % CI)")
    for column in ("verifier", "SUPPORTS P", "SUPPORTS R", "REFUTES P", "REFUTES R",
                   "NEI P", "NEI R", "wrong drafts not SUPPORTS", "s/claim"):
        table.add_column(column)

    def cell(v: tuple[float, float, float]) -> str:
        return f"{v[0]:.3f} [{v[1]:.2f}, {v[2]:.2f}]" if not math.isnan(v[0]) else "-"

    for name, rows in results.items():
        s = scores(items, rows)
        table.add_row(name, cell(s["SUPPORTS"]["precision"]), cell(s["SUPPORTS"]["recall"]),
                      cell(s["REFUTES"]["precision"]), cell(s["REFUTES"]["recall"]),
                      cell(s["NOT ENOUGH INFO"]["precision"]),
                      cell(s["NOT ENOUGH INFO"]["recall"]),
                      cell(s["real wrong drafts not SUPPORTS"]), str(s["seconds per claim"]))
    console.print(table)


# -- public human-labelled sets ---------------------------------------------------------------

EXTERNAL_VERIFIERS = ("cloze-fast", "checked", "predicate", "legacy-fast", "cloze-full",
                      "legacy-full")
"""The ``claim-verifier`` system's verifiers, as ``--verifiers`` takes them with ``--external``
(the own-claims names, "cloze fast" etc., are accepted too)."""


def _external_names(spec: str) -> list[str]:
    names = [VERIFIERS.get(n.strip(), n.strip()) for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in EXTERNAL_VERIFIERS]
    if unknown:
        raise SystemExit(f"--verifiers: unknown {unknown}; choose from "
                         f"{', '.join(EXTERNAL_VERIFIERS)}")
    return names


async def run_external(benchmark: Any, options: dict[str, Any], names: list[str],
                       args: argparse.Namespace, settings: Any
                       ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Each verifier as one runner run over the set's claims (resumed when run again)."""
    store = args.store or default_results_path(settings)
    console = Console(stderr=True)
    out: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, str] = {}
    for name in names:
        summary = await run_evaluation(
            benchmark, system="claim-verifier",
            options={"verifier": name, "today": TODAY.isoformat()}, judge=None,
            limit=args.limit, benchmark_options=options, settings=settings,
            store_path=store, cache=not args.no_cache, concurrency=1,
            label=f"{options.get('external') or 'external'} {name}", console=console)
        runs[name] = summary.info.run_id
        print(f"{name}: run {summary.info.run_id}, {summary.complete}/{summary.items} complete, "
              f"{len(summary.failures)} failed", file=sys.stderr)
        with ResultsStore(store) as results:
            out[name] = [verdict_row(sample_id, text, trace) for sample_id, _t, _m, text, trace
                         in results.traces(summary.info.run_id)]
    return out, runs


def external_main(args: argparse.Namespace, settings: Any) -> int:
    """``run --external NAME`` (or ``--external-path PATH``): see the module docstring."""
    names = _external_names(args.verifiers)
    options: dict[str, Any] = {"split": args.split}
    if args.external_path:
        options["external_path"] = str(args.external_path)
    else:
        options["external"] = args.external
    try:
        benchmark = claim_verification_benchmark(settings, options)
    except ClaimsError as exc:  # before any run: nothing is written
        print(f"error: {exc}\nhint: {exc.hint}", file=sys.stderr)
        return 2
    label = args.external or Path(args.external_path).parent.name
    out = (Path(args.out) if args.out
           else HERE / "results" / f"claim_verification_external_{label}.json")
    manifest_path = (Path(args.external_path).parent if args.external_path
                     else EXTERNAL / label) / "manifest.json"
    manifest = (json.loads(manifest_path.read_text(encoding="utf-8"))
                if manifest_path.is_file() else {})
    started = time.perf_counter()
    results, runs = asyncio.run(run_external(benchmark, options, names, args, settings))
    if args.update and out.exists():
        # The verifiers not run now keep their stored runs, read back from the store.
        kept = json.loads(out.read_text(encoding="utf-8"))
        if kept.get("model") != settings.model:
            print(f"--update: {out.name} holds {kept.get('model')}, not {settings.model}; "
                  "run without --update", file=sys.stderr)
            return 2
        with ResultsStore(args.store or default_results_path(settings)) as store:
            for name, run_id in kept.get("runs", {}).items():
                if name not in results:
                    runs[name] = run_id
                    results[name] = [verdict_row(sample_id, text, trace)
                                     for sample_id, _t, _m, text, trace in store.traces(run_id)]
    items = [{"id": r["id"], "label": r["label"], "kind": r["set"]} for r in benchmark.items]
    judged = set.intersection(*({r["id"] for r in rows} for rows in results.values())) \
        if results else set()
    common = [i for i in items if i["id"] in judged]
    majority = majority_label(common)
    verifiers = {name: {"run": runs[name], **supports_scores(items, rows)}
                 for name, rows in results.items()}
    baselines = {f"majority class ({majority})": supports_scores(
                     common, constant_rows(common, majority)),
                 "always SUPPORTS": supports_scores(common, constant_rows(common, "SUPPORTS"))}
    report_external(label, verifiers, baselines)
    source = manifest.get("source", {})
    labels = collections.Counter(i["label"] for i in common)
    write_result(out, {
        "set": label,
        "model": settings.model,
        "split": args.split,
        "today": TODAY.isoformat(),
        "claims": len(common),
        "labels": {k: labels.get(k, 0) for k in LABEL_SET},
        "majority label": majority,
        "runs": runs,
        "seconds": round(time.perf_counter() - started, 1),
        "source": {k: source.get(k) for k in ("repo", "commit", "path", "licence")},
        "sampling": manifest.get("sampling"),
        "claims_sha256": manifest.get("claims_sha256"),
        "verifiers": verifiers,
        "baselines": baselines,
    }, data=data_provenance(
        {"real": 1.0},
        sample="out of sample: no rule, prompt or threshold was tuned on this set",
        sources=(f"{source.get('repo')} @ {source.get('commit')}, {source.get('path')} "
                 f"({source.get('licence')}); rebuilt by {manifest.get('rebuild')}"),
        claims=len(common),
        labels="human labels from the source's own annotators, as the set's README says; "
               "not written by this project"))
    print(f"wrote {out}")
    return 0


def report_external(label: str, verifiers: dict[str, Any], baselines: dict[str, Any]) -> None:
    """The figures as a table on the terminal."""
    table = Table(title=f"{label}: external labels (95 % Wilson intervals)")
    for column in ("verifier", "n", "SUPPORTS P", "SUPPORTS R", "REFUTES R",
                   "not supported called SUPPORTS", "accuracy", "s/claim"):
        table.add_column(column)

    def cell(v: tuple[float, float, float]) -> str:
        return f"{v[0]:.3f} [{v[1]:.2f}, {v[2]:.2f}]" if not math.isnan(v[0]) else "-"

    for name, s in [*verifiers.items(), *baselines.items()]:
        table.add_row(name, str(s["n"]), cell(s["SUPPORTS precision"]),
                      cell(s["SUPPORTS recall"]), cell(s["REFUTES recall"]),
                      cell(s["not supported called SUPPORTS"]), cell(s["accuracy"]),
                      str(s["seconds per claim"]))
    Console().print(table)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["build", "run", "report"])
    parser.add_argument("--limit", type=int, default=None, help="first N claims only")
    parser.add_argument("--ids", default=None,
                        help="run: only the claims whose id is listed in this file (one per "
                             "line), e.g. newly added ones, with --update")
    parser.add_argument("--per-kind", type=int, default=40,
                        help="build: constructed claims of each kind")
    parser.add_argument("--verifiers", default="legacy fast,cloze fast,legacy full,cloze full")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--only", action="append", metavar="VERIFIER=KIND[+KIND]",
                        help="run a verifier on some kinds only, e.g. 'legacy full=real-draft' "
                        "(the slowest one, when time is short; the report says so)")
    parser.add_argument("--update", action="store_true",
                        help="run: keep the stored verdicts of the verifiers not run now "
                             "(a change to one verifier re-runs only that one; with "
                             "--external, their runs are read back from the store)")
    parser.add_argument("--external", default=None, metavar="NAME",
                        help="run: a public human-labelled set under data/external/NAME "
                             "instead of the project's claims")
    parser.add_argument("--external-path", default=None, type=Path, metavar="PATH",
                        help="run: any claims file in the external format (tests)")
    parser.add_argument("--split", choices=["dev", "test", "train", "all"], default="test",
                        help="which claims to run and report (rules were only tuned on dev)")
    parser.add_argument("--store", type=Path, default=None,
                        help="the runs database (default: the home's runs/runs.sqlite)")
    parser.add_argument("--out", default=None,
                        help="result file (default experiments/results/"
                             "claim_verification.json); the verdicts file goes beside it")
    args = parser.parse_args()
    settings = load_settings().settings
    if args.external or args.external_path:
        if args.step != "run":
            parser.error("--external goes with run")
        return external_main(args, settings)
    if args.split == "train":
        parser.error("--split train is for --external sets only")
    if args.step == "build":
        items = build(settings.data_dir, args.per_kind)
        CLAIMS.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                          encoding="utf-8")
        counts = collections.Counter((i["kind"], i["label"]) for i in items)
        for (kind, label), n in sorted(counts.items()):
            print(f"{kind:28} {label:24} {n}")
        print("total", len(items))
        return 0
    items = read_jsonl(CLAIMS)
    if any(i["label"].startswith("UNLABELLED") for i in items) and args.step == "report":
        print("some real drafts are not labelled yet: see claim_labels.jsonl", file=sys.stderr)
    if args.split != "all":
        items = [i for i in items if i["split"] == args.split]
    if args.limit:
        items = items[: args.limit]
    if args.ids and args.step == "run":
        wanted = set(Path(args.ids).read_text(encoding="utf-8").split())
        items = [i for i in items if i["id"] in wanted]
    out = Path(args.out) if args.out else RESULTS
    raw = out.with_name(out.stem + "_verdicts.json")
    runs: dict[str, str] = {}
    if args.step == "run":
        started = time.perf_counter()
        only = {}
        for spec in args.only or []:
            name, _, kinds = spec.partition("=")
            only[name.strip()] = {k.strip() for k in kinds.split("+")}
        names = [n.strip() for n in args.verifiers.split(",")]
        unknown = [n for n in names if n not in VERIFIERS]
        if unknown:
            parser.error(f"--verifiers: unknown {unknown}; choose from {list(VERIFIERS)}")
        results, runs = asyncio.run(run_all(items, args, settings, names, only))
        raw.parent.mkdir(parents=True, exist_ok=True)
        if args.update and raw.exists():
            kept = json.loads(raw.read_text(encoding="utf-8"))
            if kept["model"] != settings.model:
                print(f"--update: the stored verdicts are from {kept['model']}, not "
                      f"{settings.model}; run without --update", file=sys.stderr)
                return 2
            merged = dict(kept["results"])
            runs = {**kept.get("runs", {}), **runs}
            for name, rows in results.items():  # this run's verdicts replace the stored ones
                fresh = {r["id"] for r in rows}
                merged[name] = [r for r in merged.get(name, []) if r["id"] not in fresh] + rows
            results = merged
        tmp = raw.with_suffix(".tmp")
        tmp.write_text(json.dumps({"model": settings.model, "results": results,
                                   "seconds": round(time.perf_counter() - started, 1),
                                   "runs": runs}, indent=1), encoding="utf-8")
        tmp.replace(raw)
    # The figures are over the split asked for, whichever step ran. (Until 25 November a
    # ``run`` summarised every claim it had run, dev split included, under "split": "test".)
    items = read_jsonl(CLAIMS)
    if args.split != "all":
        items = [i for i in items if i["split"] == args.split]
    raw_data = json.loads(raw.read_text(encoding="utf-8"))
    results = raw_data["results"]
    ids = {i["id"] for i in items}
    results = {k: [r for r in v if r["id"] in ids] for k, v in results.items()}
    judged = {r["id"] for rows in results.values() for r in rows}
    items = [i for i in items if i["id"] in judged]
    report(items, results)
    kinds = collections.Counter(i["kind"] for i in items)
    real = kinds.get("real-draft", 0) / max(len(items), 1)
    sample = ("out of sample: test split (3/4 of the articles by title hash); rules and "
              "prompts were only revised against the dev split"
              if args.split == "test" else f"{args.split} split (dev is in sample)")
    write_result(out, {
        "model": raw_data["model"],
        "split": args.split,
        "runs": raw_data.get("runs", {}),
        "verifiers": {name: {"claims": len(rows),
                             "kinds": dict(collections.Counter(
                                 k["kind"] for k in items if k["id"] in {r["id"] for r in rows})),
                             **scores(items, rows)} for name, rows in results.items()},
    }, data=data_provenance(
        {"real": real, "constructed": 1 - real}, sample=sample,
        sources=["../shared/data/wikipedia/topics (WikiChat topic leads, CC BY-SA)"],
        claims=len(items), by_kind=dict(kinds),
        labels="real drafts labelled by reading (data/claim_labels.jsonl); constructed "
               "claims labelled by how they were made"))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
