"""The learned verifier head (issue 34 item 2): a logistic probe on the model's hidden state.

The probe (``freshwiki.chat.probe``) reads the default model's final hidden state after one
prompt holding the evidence, the question (when there is one) and the claim, and maps it to
SUPPORTS / REFUTES / NOT ENOUGH INFO. It is trained on one public human-labelled set and
tested on others, out of sample:

- train: ``healthver_dev`` (HealthVer's dev split, 200 per label; its repository has no
  labelled train file), C chosen by 5-fold cross-validation on those rows only;
- test: ``climate_fever`` (300, Wikipedia evidence sentences: another source and topic),
  our own claim benchmark's test split (256 claims of ``experiments/data/claims.jsonl``, the
  lead paragraphs from ``../shared/data``: another source, labels by the project
  maintainers), and ``healthver`` test (300: the same source as training, another split, so
  *in distribution*: the easiest of the three, reported as such).

The external sets' rows are not committed (their repositories carry no licence):
``experiments/external_sets.py build`` rebuilds them into ``experiments/data/external/NAME/
claims.jsonl``; pass ``--external-dir`` when they live elsewhere. Features are read through
the llm layer's feature cache, so ``features`` can be stopped and run again (it resumes), and
``train`` / ``evaluate`` reuse what it read. Compared with the cloze reading (``cloze-fast``)
on the same rows: for our claims the committed verdicts
(``results/claim_verification_verdicts.json``), for the external sets the runs given with
``--cloze SET=RUN_ID`` (claim-verifier runs of the claim benchmark on that set). Run::

    .venv/bin/python experiments/verifier_probe.py features --limit 20      # timing
    .venv/bin/python experiments/verifier_probe.py features
    .venv/bin/python experiments/verifier_probe.py train
    .venv/bin/python experiments/verifier_probe.py evaluate --cloze climate_fever=RUN ...

``train`` writes the committed probe (``src/freshwiki/chat/probes/qwen2.5-coder-1.5b.json``);
``evaluate`` writes ``experiments/results/verifier_probe.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from _provenance import ROOT, data_provenance, write_result
from freshwiki.benchmarks.claim_verification import read_claims, read_leads
from freshwiki.chat.probe import DEFAULT_PROBE, LABELS, VerifierProbe, probe_features, train_probe
from freshwiki.config import load_settings
from freshwiki.evaluation import ResultsStore, default_results_path
from freshwiki.llm import LLM, FeatureVector, open_llm
from freshwiki.stats import wilson_ci

HERE = Path(__file__).parent
EXTERNAL = HERE / "data" / "external"
CLAIMS = HERE / "data" / "claims.jsonl"
VERDICTS = HERE / "results" / "claim_verification_verdicts.json"
RESULTS = HERE / "results" / "verifier_probe.json"
MODEL = "local:qwen2.5-coder-1.5b"
TRAIN_SET = "healthver_dev"
TEST_SETS = ("climate_fever", "claims", "healthver")
"""Evaluation sets in the order features are read (cut from the end when time is short)."""
DESCRIPTION = {
    "climate_fever": "CLIMATE-FEVER, Wikipedia evidence sentences, 300 label-balanced pairs: "
                     "out of sample (another source and topic than training)",
    "claims": "our claim benchmark's test split (256 claims, lead paragraphs; labels by the "
              "project maintainers): out of sample",
    "healthver": "HealthVer test split, 300 label-balanced: the training set's source, "
                 "another split: in distribution",
}
SUPPORTS = "SUPPORTS"
RECALL_POINT = 0.6
"""The SUPPORTS recall at which the threshold curve reports precision (the issue's floor)."""


# -- data --------------------------------------------------------------------------------------

def read_external(name: str, folder: Path) -> list[dict[str, Any]]:
    """The rows of ``folder/name/claims.jsonl`` (fields as the external-set format has them).

    Raises:
        SystemExit: the file is missing or a row lacks a field (naming row, file and field).
    """
    path = folder / name / "claims.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path}: missing; rebuild it with `python experiments/"
                         f"external_sets.py build {name} --source DIR` or pass --external-dir")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        for key in ("id", "claim", "evidence", "label"):
            if not isinstance(row.get(key), str) or not row[key]:
                raise SystemExit(f"{path}: row {number}: field {key!r} missing or empty")
        if row["label"] not in LABELS:
            raise SystemExit(f"{path}: row {number}: field 'label' is {row['label']!r}")
        rows.append({"id": row["id"], "claim": row["claim"], "evidence": row["evidence"],
                     "title": row.get("title") or "", "question": row.get("question"),
                     "label": row["label"]})
    return rows


def read_own(data_dir: Path) -> list[dict[str, Any]]:
    """Our claim benchmark's test split, each claim with its lead paragraph as evidence."""
    leads = read_leads(data_dir)
    return [{"id": i["id"], "claim": i["claim"], "evidence": leads[i["set"]][i["title"]],
             "title": i["title"], "question": i["question"], "label": i["label"],
             "kind": i["kind"]}
            for i in read_claims(CLAIMS) if i["split"] == "test"]


def read_set(name: str, folder: Path, data_dir: Path) -> list[dict[str, Any]]:
    """A set's rows in label round-robin order (S, R, N, S, ...; file order within a label).

    The first N rows are then as label-balanced as the set allows: a run cut short for time
    still has a balanced prefix to train or test on.
    """
    rows = read_own(data_dir) if name == "claims" else read_external(name, folder)
    queues = [[r for r in rows if r["label"] == label] for label in LABELS]
    out: list[dict[str, Any]] = []
    for i in range(max(len(q) for q in queues)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def parse_limits(specs: Sequence[str]) -> dict[str, int]:
    """``SET=N`` options: use only the first N rows (round-robin order) of that set."""
    return {name: int(n) for name, n in (spec.split("=", 1) for spec in specs)}


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- features ----------------------------------------------------------------------------------

async def features_of(llm: LLM, rows: Sequence[dict[str, Any]], *, label: str,
                      console: Console | None = None) -> list[FeatureVector]:
    """Each row's probe features (cached by the llm layer), printing progress every 20."""
    out: list[FeatureVector] = []
    started = time.perf_counter()
    for n, row in enumerate(rows, 1):
        out.append(await probe_features(llm, row["claim"], row["evidence"],
                                        question=row["question"] or None, title=row["title"]))
        if console is not None and (n % 20 == 0 or n == len(rows)):
            seconds = time.perf_counter() - started
            console.print(f"{label}: {n}/{len(rows)} rows, {seconds:.0f} s "
                          f"({seconds / n:.2f} s/row)")
    return out


# -- metrics -----------------------------------------------------------------------------------

def share(hits: int, total: int) -> dict[str, Any]:
    """A proportion with its Wilson 95 % interval (``None`` values when there is no total)."""
    ci = wilson_ci(hits, total)
    return {"value": hits / total if total else None, "hits": hits, "n": total,
            "ci": [ci.low, ci.high] if ci is not None else None}


def metrics(gold: Sequence[str], guess: Sequence[str]) -> dict[str, Any]:
    """SUPPORTS precision and recall, REFUTES recall, not-SUPPORTS called SUPPORTS, accuracy."""
    pairs = list(zip(gold, guess, strict=True))
    called_s = [g for g, p in pairs if p == SUPPORTS]
    gold_s = [p for g, p in pairs if g == SUPPORTS]
    gold_r = [p for g, p in pairs if g == "REFUTES"]
    not_s = [p for g, p in pairs if g != SUPPORTS]
    return {
        "n": len(pairs),
        "supports_precision": share(sum(g == SUPPORTS for g in called_s), len(called_s)),
        "supports_recall": share(sum(p == SUPPORTS for p in gold_s), len(gold_s)),
        "refutes_recall": share(sum(p == "REFUTES" for p in gold_r), len(gold_r)),
        "not_supports_called_supports": share(sum(p == SUPPORTS for p in not_s), len(not_s)),
        "accuracy": share(sum(g == p for g, p in pairs), len(pairs)),
        "predicted": {label: sum(p == label for _, p in pairs) for label in LABELS},
        "confusion": {g: {p: sum(1 for a, b in pairs if a == g and b == p) for p in LABELS}
                      for g in LABELS},
    }


def majority(gold: Sequence[str]) -> str:
    """The set's most frequent label (ties: the first in :data:`LABELS`)."""
    counts = Counter(gold)
    return max(LABELS, key=lambda label: (counts[label], -LABELS.index(label)))


def threshold_curve(gold: Sequence[str], p_supports: Sequence[float]) -> dict[str, Any]:
    """SUPPORTS against the rest by P(SUPPORTS) >= t: precision and recall per threshold.

    ``at_recall`` is the best precision among thresholds whose recall is at least
    :data:`RECALL_POINT` (the threshold chosen on the test rows themselves, so it shows what a
    threshold could give, not a figure to claim).
    """
    positives = sum(g == SUPPORTS for g in gold)
    points = []
    for t in [round(0.05 * i, 2) for i in range(1, 20)]:
        called = [g for g, p in zip(gold, p_supports, strict=True) if p >= t]
        hits = sum(g == SUPPORTS for g in called)
        points.append({"threshold": t, "called": len(called),
                       "precision": hits / len(called) if called else None,
                       "recall": hits / positives if positives else None})
    eligible = [p for p in points if p["recall"] is not None and p["recall"] >= RECALL_POINT
                and p["precision"] is not None]
    best = max(eligible, key=lambda p: (p["precision"], p["threshold"])) if eligible else None
    return {"points": points, "recall_point": RECALL_POINT, "at_recall": best}


def cloze_verdicts(spec: str, settings: Any) -> dict[str, str]:
    """``{id: verdict}`` of a cloze-fast run id, or of a JSON verdicts file."""
    path = Path(spec)
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["results"]["cloze fast"] if isinstance(data, dict) else data
        return {str(r["id"]): str(r["verdict"]) for r in rows}
    with ResultsStore(default_results_path(settings)) as store:
        return {str(sample_id): str(trace.get("verdict") or text)
                for sample_id, _t, _m, text, trace in store.traces(spec)}


# -- commands ----------------------------------------------------------------------------------

async def cmd_features(args: argparse.Namespace) -> None:
    settings = load_settings().settings
    llm = open_llm(args.model, settings=settings)
    console = Console(stderr=True)
    plan = [item.split(":") for item in args.plan.split(",")] if args.plan else [
        [name, str(args.limit)] for name in (args.sets.split(",") if args.sets
                                             else [TRAIN_SET, *TEST_SETS])]
    try:
        for name, limit in plan:
            rows = read_set(name, args.external_dir, settings.data_dir)
            if int(limit):
                rows = rows[: int(limit)]
            await features_of(llm, rows, label=name, console=console)
    finally:
        await llm.aclose()


async def cmd_train(args: argparse.Namespace) -> None:
    settings = load_settings().settings
    llm = open_llm(args.model, settings=settings)
    rows = read_set(TRAIN_SET, args.external_dir, settings.data_dir)
    if args.limit:
        rows = rows[: args.limit]
    try:
        vectors = await features_of(llm, rows, label=TRAIN_SET, console=Console(stderr=True))
    finally:
        await llm.aclose()
    path = args.external_dir / TRAIN_SET / "claims.jsonl"
    manifest = json.loads((args.external_dir / TRAIN_SET / "manifest.json").read_text())
    started = time.perf_counter()
    probe = train_probe(vectors, [r["label"] for r in rows], seed=args.seed, extra={
        "set": TRAIN_SET,
        "source": manifest.get("source", {}),
        "claims_sha256": file_sha256(path),
        "rows_used": len(rows),
        "order": "label round-robin (S, R, N, ...) in file order; the first rows_used rows",
        "model_spec": args.model,
        "commit": _commit(),
        "command": " ".join(["python", *sys.argv]),
    })
    probe.save(args.out)
    cv = probe.training["cv"]["scores"]
    print(f"trained on {len(rows)} rows in {time.perf_counter() - started:.1f} s; C "
          f"{probe.training['c']} (CV balanced accuracy: "
          + ", ".join(f"C={c}: {v:.3f}" for c, v in cv.items())
          + f"); wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


def _commit() -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()


async def cmd_evaluate(args: argparse.Namespace) -> None:
    settings = load_settings().settings
    probe = VerifierProbe.load(args.probe)
    cloze_specs = dict(spec.split("=", 1) for spec in args.cloze)
    cloze_specs.setdefault("claims", str(VERDICTS))
    limits = parse_limits(args.limit)
    llm = open_llm(args.model, settings=settings)
    sets: dict[str, Any] = {}
    counts: dict[str, int] = {}
    try:
        for name in args.sets.split(","):
            rows = read_set(name, args.external_dir, settings.data_dir)
            if name in limits:
                rows = rows[: limits[name]]
            vectors = await features_of(llm, rows, label=name)
            sets[name] = evaluate_set(name, rows, vectors, probe, cloze_specs.get(name), settings)
            counts[name] = len(rows)
    finally:
        await llm.aclose()
    report(sets)
    decision = decide(sets)
    print(decision["text"])
    payload = {
        "model": args.model,
        "probe": {"path": str(args.probe.relative_to(ROOT)) if args.probe.is_relative_to(ROOT)
                  else str(args.probe),
                  "sha256": file_sha256(args.probe), "dim": probe.dim,
                  "training": probe.training},
        "sets": sets,
        "decision": decision,
    }
    own = counts.get("claims", 0)
    total = sum(counts.values()) or 1
    data = data_provenance(
        {"real": (total - own / 2) / total, "constructed": own / 2 / total},
        sample="out of sample for climate_fever and claims (other sources than the training "
               "set); healthver test is the training set's source (in distribution)",
        sources="HealthVer (sarrouti/HealthVer, dev for training, test), CLIMATE-FEVER "
                "(tdiggelm/climate-fever-dataset): rebuilt locally by experiments/"
                "external_sets.py (no licence: rows not committed); our claims with "
                "../shared/data/wikipedia/topics leads (CC BY-SA)",
        counts=counts,
        note="our claims are about half constructed (statements, swaps, other-article); "
             "the share above counts them as half of that set",
    )
    write_result(RESULTS, payload, data=data)
    print(f"wrote {RESULTS}")


def evaluate_set(name: str, rows: Sequence[dict[str, Any]], vectors: Sequence[FeatureVector],
                 probe: VerifierProbe, cloze_spec: str | None, settings: Any) -> dict[str, Any]:
    gold = [r["label"] for r in rows]
    probs = [probe.probabilities(v) for v in vectors]
    guess = [max(LABELS, key=p.__getitem__) for p in probs]
    base = majority(gold)
    out: dict[str, Any] = {
        "description": DESCRIPTION.get(name, name),
        "gold": {label: gold.count(label) for label in LABELS},
        "probe": metrics(gold, guess),
        "majority": {"label": base, **metrics(gold, [base] * len(gold))},
        "threshold_curve": threshold_curve(gold, [p[SUPPORTS] for p in probs]),
    }
    kinds = sorted({str(r["kind"]) for r in rows if "kind" in r})
    if kinds:  # our claims: real drafts and the three constructed kinds
        out["by_kind"] = {kind: metrics([g for g, r in zip(gold, rows, strict=True)
                                         if r["kind"] == kind],
                                        [p for p, r in zip(guess, rows, strict=True)
                                         if r["kind"] == kind])
                          for kind in kinds}
    if cloze_spec:
        verdicts = cloze_verdicts(cloze_spec, settings)
        both = [i for i, r in enumerate(rows) if r["id"] in verdicts]
        out["cloze_fast"] = {
            "source": cloze_spec if not Path(cloze_spec).is_file()
            else str(Path(cloze_spec).resolve().relative_to(ROOT)),
            "rows": len(both),
            "cloze": metrics([gold[i] for i in both], [verdicts[rows[i]["id"]] for i in both]),
            "probe": metrics([gold[i] for i in both], [guess[i] for i in both]),
        }
    return out


def decide(sets: dict[str, Any]) -> dict[str, Any]:
    """The issue's rule for making the probe the default.

    It must beat cloze-fast out of sample on SUPPORTS precision at equal or better SUPPORTS
    recall, on every out-of-sample set compared.
    """
    verdicts: dict[str, bool | None] = {}
    said = []
    for name in ("climate_fever", "claims"):
        pair = sets.get(name, {}).get("cloze_fast")
        if not pair:
            verdicts[name] = None
            continue
        probe, cloze = pair["probe"], pair["cloze"]
        pp, cp = probe["supports_precision"]["value"], cloze["supports_precision"]["value"]
        pr, cr = probe["supports_recall"]["value"], cloze["supports_recall"]["value"]
        win = bool(pp is not None and pr is not None and cr is not None
                   and (cp is None or pp > cp) and pr >= cr)
        verdicts[name] = win
        said.append(f"{name} ({pair['rows']} rows): probe SUPPORTS precision {_num(pp)} at "
                    f"recall {_num(pr)}, cloze-fast {_num(cp)} at {_num(cr)}: "
                    + ("better" if win else "not better"))
    compared = [v for v in verdicts.values() if v is not None]
    wins = bool(compared) and all(compared)
    text = "; ".join(said) + (". The probe becomes the default" if wins else
                              ". Cloze-fast stays the default")
    return {"rule": "SUPPORTS precision higher and SUPPORTS recall equal or higher than "
                    "cloze-fast on each out-of-sample set with a cloze run",
            "per_set": verdicts, "probe_wins": wins, "text": text}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cell(m: dict[str, Any]) -> str:
    if m["value"] is None:
        return "-"
    return f"{m['value']:.2f} ({m['hits']}/{m['n']})"


def report(sets: dict[str, Any]) -> None:
    console = Console()
    table = Table(title="verifier probe (SUPPORTS P / R, REFUTES R, not-S called S, accuracy)")
    for column in ("set", "reader", "rows", "S prec", "S rec", "R rec", "not-S→S", "acc"):
        table.add_column(column)
    for name, result in sets.items():
        lines = [("probe", result["probe"]), (f"majority ({result['majority']['label']})",
                                               result["majority"])]
        if "cloze_fast" in result:
            lines += [("cloze-fast (same rows)", result["cloze_fast"]["cloze"]),
                      ("probe (same rows)", result["cloze_fast"]["probe"])]
        for reader, m in lines:
            table.add_row(name, reader, str(m["n"]), _cell(m["supports_precision"]),
                          _cell(m["supports_recall"]), _cell(m["refutes_recall"]),
                          _cell(m["not_supports_called_supports"]), _cell(m["accuracy"]))
        best = result["threshold_curve"]["at_recall"]
        if best:
            console.print(f"{name}: P(SUPPORTS) >= {best['threshold']}: precision "
                          f"{best['precision']:.2f} at recall {best['recall']:.2f}")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--external-dir", type=Path, default=EXTERNAL)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("features", help="read and cache every row's features (resumable)")
    p.add_argument("--sets", default="", help=f"comma-separated (default {TRAIN_SET} and "
                                              f"{','.join(TEST_SETS)})")
    p.add_argument("--limit", type=int, default=0, help="first N rows of each set (timing)")
    p.add_argument("--plan", default="", help="SET:N,SET:N,... read in this order (first N "
                                              "rows of each; a set may come back with a "
                                              "larger N)")
    p = sub.add_parser("train", help=f"train the probe on {TRAIN_SET}")
    p.add_argument("--out", type=Path, default=DEFAULT_PROBE)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0,
                   help="first N rows (label round-robin order) when time allows no more")
    p = sub.add_parser("evaluate", help="score the probe out of sample; write the result")
    p.add_argument("--probe", type=Path, default=DEFAULT_PROBE)
    p.add_argument("--sets", default=",".join(TEST_SETS))
    p.add_argument("--cloze", action="append", default=[],
                   help="SET=RUN_ID (or a verdicts JSON) of cloze-fast on that set")
    p.add_argument("--limit", action="append", default=[],
                   help="SET=N: only the first N rows (label round-robin order) of that set")
    args = parser.parse_args()
    command = {"features": cmd_features, "train": cmd_train, "evaluate": cmd_evaluate}
    asyncio.run(command[args.command](args))


if __name__ == "__main__":
    main()
