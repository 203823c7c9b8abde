#!/usr/bin/env python
r"""The HelloFresh figure: both regimes and the control, five phrasings, on real data; a report.

Run from the repository root (CPU only; one local model thread keeps a shared machine usable)::

    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/hellofresh_run.py \\
        --home /tmp/hellofresh-home --out /tmp/hellofresh-report

What it does, resumably (every evaluation is a ``freshwiki eval`` run in the home's results
store, so re-running the same command continues where it stopped):

1. **Notes**: the real Community Notes (``../shared/data/communitynotes``) labelled,
   filtered as the paper (no media, English: 17 of 118 notes go, all for a ticked
   manipulated-media reason) and balanced per month, seed 0, with the notes layer's own
   functions: 38 notes over 2021-01..03 (``HOME/notes/balanced-month-seed0.jsonl``).
2. **Edits**: (a) *real*: the real histories (``../shared/data/wikipedia/histories``)
   labelled by ``freshwiki edits label`` and balanced per week (2 edits, one week: a
   plumbing check more than a measurement); (b) *constructed*: real articles with designed
   histories from ``experiments/construct_edit_histories.py`` (``--articles``, 10 weeks),
   labelled and balanced per week the same way (hundreds of edits), then subsampled to
   ``--edits-per-label`` accepted and as many rejected per week (default 4: 72 edits over
   9 weeks), reproducibly. If the constructor fails, (b) is skipped with a warning.
3. **Search index**: the search agent searches ``--index`` (default: ``main`` when the home
   has one, else the default corpus of ~10k real Wikipedia leads, built on first use: a few
   minutes, once). ``--corpus FILE`` ingests a topic file and builds ``main`` from it first
   (used for quick checks on a small corpus).
4. The runs of the eval set ``experiments/evalsets/hellofresh.toml`` (``--evalset``
   another): ``zero-shot``, ``search-agent`` and ``search-agent`` with ``control=true`` on the
   notes, the benchmark's default phrasings (the paper's ``manual`` and ``r1``..``r4``;
   ``--templates p1,p2,p3,p4,p5`` for our older ones), model ``--model`` (default: the file's,
   ``local:qwen2.5-coder-1.5b``), no judge; the same three on each edits dataset of step 2.
   Systems outermost, so the control runs after the search agent and the partner samples'
   queries and summaries come from the response cache. ``freshwiki eval-set run`` on the file
   makes the notes runs alone.
5. ``report.html`` / ``report.md`` of all runs in ``--out``: per run the accuracy by template
   and period; the HelloFresh section with accuracy/precision/recall/F1 and CIs per phrasing
   and vote, per period, the ranking-consistency figure (Kendall τ-b), the deployment
   simulation, the search agent's (and the control's) F1 minus zero-shot per phrasing (the
   paper's Figure 5) and, for notes, F1 by vote-count quartile.

``--limit N`` takes the first N samples of every dataset (a smoke test). ``--histories PATH``
(repeatable) labels those real page histories for the real edits instead of the small ones in
``../shared``, e.g. the ones ``experiments/real_histories.py build`` rebuilds (the full history
of enwiki's Anarchism, 2001-2010, and three small pages); every balanced edit is kept, and the
dataset folder is keyed by the sources and the labeller's code, so a changed rule relabels.
``--no-notes`` runs the edits half of Figure 5 alone.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from _provenance import data_provenance, write_result
from freshwiki.changes.notes import build_balanced, filter_notes, load_notes, write_jsonl
from freshwiki.config import load_settings
from freshwiki.evaluation import (
    EvalSet,
    EvalSetResult,
    PlannedRun,
    ResultsStore,
    RunResults,
    check_eval_set,
    default_results_path,
    load_eval_set,
    run_eval_set,
    write_report,
)
from freshwiki.retrieval import has_index

ROOT = Path(__file__).resolve().parents[1]
RESULTS_PATH = ROOT / "experiments" / "results" / "hellofresh_run.json"
EVALSET = ROOT / "experiments" / "evalsets" / "hellofresh.toml"
DATA = load_settings().settings.data_dir
EXE = Path(sys.executable).with_name("freshwiki")
err = Console(stderr=True)


def cli(*args: str) -> None:
    proc = subprocess.run([str(EXE), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"freshwiki {' '.join(args)} failed:\n{proc.stderr[-3000:]}")


def notes_dataset(home: Path) -> Path:
    path = home / "notes" / "balanced-month-seed0.jsonl"
    if not path.is_file():
        kept, _ = filter_notes(load_notes(DATA / "communitynotes").records)
        write_jsonl(build_balanced(kept, period="month", seed=0).records, path)
    return path


def labeller_version() -> str:
    """The git tree hash of the edit labeller's code, so a changed labeller relabels.

    A dataset folder in the home outlives the code that wrote it; keyed by this hash, an
    edited rule (or a checkout of another commit) gets its own folder instead of silently
    reusing labels the current code would not give.
    """
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse",
                           "HEAD:src/freshwiki/changes/edits"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip()[:12] if proc.returncode == 0 else "unversioned"


def real_edits(home: Path, histories: list[Path]) -> Path:
    """Label real page histories and balance them per week (seed 0); every edit is kept.

    ``histories``: dumps or folders to label; empty for the small ones in ``../shared``.
    The folder is keyed by the sources (names and sizes) and the labeller's version.
    """
    sources = histories or [DATA / "wikipedia" / "histories"]
    missing = [str(p) for p in sources if not p.exists()]
    if missing:
        raise SystemExit(f"--histories: not found: {', '.join(missing)} (rebuild the real "
                         "histories with `python experiments/real_histories.py build`)")
    key = hashlib.sha256("\n".join(
        f"{p.resolve()}:{p.stat().st_size}" for p in sorted(sources)).encode()).hexdigest()[:8]
    folder = home / "edits" / ("real" if not histories else f"real-{key}") / labeller_version()
    path = folder / "balanced-week-seed0.jsonl"
    if not path.is_file():
        err.print(f"labelling real edits of {', '.join(map(str, sources))} into {folder}")
        cli("edits", "label", *map(str, sources), "--out", str(folder))
        cli("edits", "build", "--period", "week", "--seed", "0",
            "--input", str(folder / "labelled.jsonl"), "--out", str(path))
    if not path.read_text(encoding="utf-8").strip():
        raise SystemExit(f"real edits: no week of {', '.join(map(str, sources))} has both an "
                         f"accepted and a rejected edit, so the balanced set {path} is empty; "
                         "give longer histories (--histories) or leave them out "
                         "(--no-real-edits)")
    return path


def subsample(source: Path, target: Path, per_label: int, seed: int = 0) -> Path:
    """Keep ``per_label`` accepted and as many rejected edits of each week of ``source``.

    The constructed histories yield hundreds of balanced edits; a CPU-only run of the search
    agent on all of them would take days. Drawn per week with ``random.Random(seed:week)``
    over the records in file order, so the subsample is reproducible and stays balanced.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            groups.setdefault((str(data["period"]), str(data["label"])), []).append(line)
    kept = []
    for (period, _), lines in sorted(groups.items()):
        rng = random.Random(f"{seed}:{period}")
        kept += rng.sample(lines, per_label) if len(lines) > per_label else lines
    target.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return target


def constructed_edits(home: Path, articles: int, per_label: int) -> Path | None:
    folder = home / "edits" / "constructed"
    path = folder / "balanced-week-seed0.jsonl"
    small = folder / f"balanced-week-seed0-{per_label}-per-label.jsonl"
    if small.is_file():
        return small
    if path.is_file():
        return subsample(path, small, per_label)
    history = folder / "history.xml"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "construct_edit_histories.py"),
         "--articles", str(articles), "--seed", "0", "--out", str(history)],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        err.print(f"[yellow]constructed edits skipped: the constructor failed: {tail}[/yellow]")
        return None
    cli("edits", "label", str(history), "--out", str(folder))
    cli("edits", "build", "--period", "week", "--seed", "0",
        "--input", str(folder / "labelled.jsonl"), "--out", str(path))
    return subsample(path, small, per_label)


def plan(eval_set: EvalSet, datasets: list[tuple[str, str, Path]], args: argparse.Namespace,
         ) -> EvalSet:
    """The eval set's notes runs, repeated on every other dataset, with the flags applied.

    Each run of the file names its regime (``meta.regime``); a dataset other than the notes
    gets a copy of each with its benchmark and path. Systems stay outermost (the file's run
    order), datasets inner.
    """
    regimes = [x for x in args.systems.split(",") if x]
    templates = tuple(x for x in args.templates.split(",") if x) or None
    runs: list[PlannedRun] = []
    for run in eval_set.runs:
        if run.meta.get("regime") not in regimes:
            continue
        for name, benchmark, path in datasets:
            options = dict(run.options)
            if run.system == "search-agent" and args.index:
                options["index"] = args.index
            changed = {"benchmark": benchmark, "options": options,
                       "benchmark_options": {**run.benchmark_options, "path": str(path)},
                       "meta": {**run.meta, "dataset": name}}
            if args.model:
                changed["model"] = args.model
            if args.limit is not None:
                changed["limit"] = args.limit
            if templates is not None:
                changed["templates"] = templates
            runs.append(dataclasses.replace(run, **changed))
    return dataclasses.replace(eval_set, runs=tuple(runs))


def row(done: EvalSetResult, seconds: float) -> dict[str, object]:
    """One run in the result file (the schema the README's table is rendered from)."""
    summary = done.summary
    return {"dataset": done.planned.meta["dataset"], "benchmark": done.planned.benchmark,
            "system": done.planned.meta["regime"], "run_id": summary.info.run_id,
            "model": summary.info.model,
            "means": [{"template": m.template, "accuracy": m.mean, "n_scored": m.n,
                       "n_total": m.n_total, "accuracy_failures_incorrect":
                       m.mean_with_failures} for m in summary.means],
            "seconds": round(seconds, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=None,
                        help="FRESHWIKI_HOME for datasets, index, cache and runs "
                        "[default: the configured home]")
    parser.add_argument("--out", type=Path, default=Path("hellofresh-report"))
    parser.add_argument("--evalset", type=Path, default=EVALSET,
                        help="eval-set file with the notes runs (default: %(default)s)")
    parser.add_argument("--model", default=None,
                        help="override the eval set's model (local:qwen2.5-coder-1.5b)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--articles", type=int, default=40,
                        help="articles of the constructed edit histories")
    parser.add_argument("--edits-per-label", type=int, default=4,
                        help="constructed edits kept per label and week (balanced)")
    parser.add_argument("--index", default=None, help="index the search agent searches")
    parser.add_argument("--corpus", type=Path, action="append", default=[],
                        help="topic file to build the `main` index from (if none exists)")
    parser.add_argument("--systems", default="zero-shot,search-agent,control",
                        help="comma-separated: zero-shot, search-agent, control")
    parser.add_argument("--templates", default="",
                        help="comma-separated phrasings [default: the benchmark's, the "
                        "paper's manual,r1,r2,r3,r4; p1..p5 are our older ones]")
    parser.add_argument("--results", type=Path, default=RESULTS_PATH,
                        help="result file (default: %(default)s)")
    parser.add_argument("--no-real-edits", action="store_true")
    parser.add_argument("--histories", type=Path, action="append", default=[],
                        help="real page histories to label for the real edits (dumps or "
                        "folders; repeat) instead of the small ones in ../shared, e.g. "
                        "experiments/data/real_histories/files (experiments/real_histories.py)")
    parser.add_argument("--no-notes", action="store_true",
                        help="leave the notes runs out (the edits half of Figure 5 alone)")
    parser.add_argument("--no-constructed-edits", action="store_true")
    args = parser.parse_args()
    if args.home is not None:
        os.environ["FRESHWIKI_HOME"] = str(args.home)
    settings = load_settings().settings
    home = settings.home
    err.print(f"home {home}; model {args.model or 'from the eval set'}; limit {args.limit}")

    if args.corpus and not has_index(settings, "main"):
        cli("corpus", "ingest", *map(str, args.corpus))
        cli("index", "build", "--name", "main")

    datasets: list[tuple[str, str, Path]] = []
    if not args.no_notes:
        datasets.append(("notes", "hellofresh-notes", notes_dataset(home)))
    if not args.no_constructed_edits:
        constructed = constructed_edits(home, args.articles, args.edits_per_label)
        if constructed is not None:
            datasets.append(("edits (constructed)", "hellofresh-edits", constructed))
    if not args.no_real_edits:
        datasets.append(("edits (real)", "hellofresh-edits", real_edits(home, args.histories)))

    if not datasets:
        raise SystemExit("nothing to run: --no-notes with --no-real-edits and "
                         "--no-constructed-edits leaves no dataset")
    eval_set = plan(load_eval_set(args.evalset, settings=settings), datasets, args)
    check_eval_set(eval_set, settings=settings)  # every run checked before the first starts
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    clock = [started]

    def done(result: EvalSetResult) -> None:
        now = time.perf_counter()
        rows.append(row(result, now - clock[0]))
        s = result.summary
        acc = ", ".join(f"{m.template} {m.mean:.2f}" for m in s.means)
        err.print(f"{s.info.label}: run {s.info.run_id}, {s.complete}/{s.items} complete, "
                  f"{len(s.failures)} failed, {now - clock[0]:.0f} s; accuracy {acc}")
        clock[0] = now

    finished = asyncio.run(run_eval_set(eval_set, settings=settings, console=err,
                                        on_done=done))
    run_ids = [r.summary.info.run_id for r in finished]
    with ResultsStore(default_results_path(settings)) as store:
        results: list[RunResults] = [store.load_run(r) for r in run_ids]
    html, md = write_report(results, args.out)
    err.print(f"{len(run_ids)} runs in {time.perf_counter() - started:.0f} s; report: {html}, "
              f"{md}")
    kinds = {name: ("constructed" if "constructed" in name else "real")
             for name, _, _ in datasets}
    shares = {k: sum(1 for v in kinds.values() if v == k) / len(kinds)
              for k in set(kinds.values())}
    write_result(args.results, {"runs": rows, "report": str(html), "limit": args.limit},
                 data=data_provenance(
                     shares, sample="n/a (zero-shot prompting; nothing is trained or tuned)",
                     figure="measured", shares_of="datasets",
                     sources=", ".join(f"{n}: {k}" for n, k in kinds.items()) + " (notes: "
                     "../shared/data/communitynotes, balanced per month, seed 0; real edits: "
                     + (", ".join(map(str, args.histories)) or "../shared/data/wikipedia/histories")
                     + "; constructed edits: "
                     "experiments/construct_edit_histories.py)"))
    err.print(f"results: {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
