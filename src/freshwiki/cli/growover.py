"""``freshwiki growover``: build and maintain a GrowOVER living benchmark from Wikipedia dumps.

``growover build`` generates the first snapshot and updates it at every later cut;
``growover update`` adds one snapshot to an existing dataset. Evaluation is the ordinary
``freshwiki eval growover --benchmark-option name=NAME --system ralm``; ``growover
train-gate`` trains RiLM's certainty gate on a finished run of a retrieving system.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import MofNCompleteColumn
from rich.table import Table

from freshwiki.cli._common import ATTRIBUTION, err, out, progress, settings, state
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    import datetime as dt

    from freshwiki.benchmarks.growover import Dataset, SnapshotInfo
    from freshwiki.config import Settings
    from freshwiki.llm import Message
    from freshwiki.systems.rilm.training import Example, GateTraining

app = typer.Typer(
    help="GrowOVER: a QA and dialogue benchmark generated from Wikipedia snapshots and "
    "maintained as the articles change.",
    no_args_is_help=True,
)


def _settings(model: str | None = None) -> Settings:
    return state.resolved(model=model).settings if model is not None else settings()


@contextmanager
def _progress(err: Console, quiet: bool) -> Iterator[Callable[[str, int, int | None], None]]:
    """A rich progress bar on stderr, one line per stage (snapshot date, index)."""
    if quiet:
        yield lambda _what, _done, _total: None
        return
    bars = progress(MofNCompleteColumn(), bar_width=16, elapsed=True)
    tasks: dict[str, Any] = {}

    def update(what: str, done: int, total: int | None) -> None:
        if what not in tasks:
            tasks[what] = bars.add_task(what, total=total)
        bars.update(tasks[what], completed=done, total=total)

    with bars:
        yield update


def _cuts(sources: list[Path], cuts: str | None, every: str | None, start: str | None,
          end: str | None) -> list[dt.datetime] | None:
    from freshwiki.benchmarks.growover import DatasetError
    from freshwiki.changes.snapshots import monthly_cuts, parse_cut
    from freshwiki.corpus import ARTICLE_NAMESPACES, iter_revisions

    if cuts and every:
        raise typer.BadParameter("give --cuts or --every, not both", param_hint="--cuts")
    if every not in (None, "month"):
        raise typer.BadParameter(f"{every!r}: only `month` is supported", param_hint="--every")
    if cuts:
        return [parse_cut(c) for c in cuts.split(",") if c.strip()]
    if every is None:
        return None
    lo, hi = (parse_cut(start) if start else None), (parse_cut(end) if end else None)
    if lo is None or hi is None:
        stamps = [r.timestamp for p in sources
                  for r in iter_revisions(p, namespaces=ARTICLE_NAMESPACES)]
        if not stamps:
            raise DatasetError("the sources hold no article revision",
                               hint="are they pages-meta-history dumps of articles?")
        lo, hi = lo or min(stamps), hi or max(stamps)
    return monthly_cuts(lo, hi)


_PAGE_NOTES = 5
"""Articles skipped whole (deleted, emptied, redirected) named per snapshot; the rest are
counted, and all are in that snapshot's ``skips.jsonl``."""


def _notes(dataset: Dataset, shown: list[SnapshotInfo]) -> None:
    """On stderr: snapshots in which nothing changed, and articles skipped whole."""
    for info in shown:
        skips = [s for s in dataset.skips(info) if s.stage in ("snapshot", "page")]
        for skip in [s for s in skips if s.stage == "snapshot"]:
            err.print(f"note: snapshot {info.label}: {escape(skip.reason)}", highlight=False)
        pages = [s for s in skips if s.stage == "page"]
        for skip in pages[:_PAGE_NOTES]:
            err.print(f"note: snapshot {info.label}: {escape(skip.title)} skipped: "
                      f"{escape(skip.reason)}", highlight=False)
        if len(pages) > _PAGE_NOTES:
            err.print(f"note: snapshot {info.label}: {len(pages) - _PAGE_NOTES} more "
                      f"article(s) skipped, see {dataset.folder(info) / 'skips.jsonl'}",
                      highlight=False, soft_wrap=True)


def _report(dataset: Dataset, out: Console, as_json: bool,
            infos: list[SnapshotInfo] | None = None) -> None:
    shown = infos if infos is not None else dataset.snapshots
    _notes(dataset, shown)
    if as_json:
        out.print_json(json.dumps({"path": str(dataset.root), "name": dataset.root.name,
                                   "snapshots": [s.to_dict() for s in shown]}))
        return
    table = Table(title=f"GrowOVER dataset {dataset.root.name}")
    columns = ("snapshot", "pages", "qa init/unch/new/chg", "dialogues init/unch/new",
               "skips")
    for col in columns:
        table.add_column(col, justify="left" if col == "snapshot" else "right")
    for s in shown:
        c = s.counts
        table.add_row(
            s.label + ("" if s.complete else " (incomplete)"), str(c.get("pages", "-")),
            "/".join(str(c.get(f"qa_{t}", 0)) for t in ("initial", "unchanged", "new",
                                                         "changed")),
            "/".join(str(c.get(f"dialogue_{t}", 0)) for t in ("initial", "unchanged", "new")),
            str(c.get("skips", "-")))
    out.print(table)
    out.print(f"dataset: {dataset.root}", soft_wrap=True, markup=False, highlight=False)
    out.print(ATTRIBUTION, style="dim")


def _kinds(value: str) -> list[Any]:
    from freshwiki.benchmarks.growover import KINDS

    kinds = [k.strip() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise typer.BadParameter(f"{value!r}: kinds are {', '.join(KINDS)}", param_hint="--kinds")
    return [k for k in KINDS if k in kinds]


@app.command("build")
def build(
    sources: Annotated[list[Path], typer.Argument(
        help="HISTORY.xml (pages-meta-history; several files are merged per page), or two "
        "or more dumps, oldest first (one snapshot each).", show_default=False)],
    name: Annotated[str, typer.Option(help="Dataset name (folder under HOME/growover).")],
    cuts: Annotated[str | None, typer.Option(
        help="Comma-separated cut dates for history sources (YYYY-MM-DD = end of that day).")
    ] = None,
    every: Annotated[str | None, typer.Option(
        help="`month`: a cut at the end of every month between --from and --to.")] = None,
    start: Annotated[str | None, typer.Option("--from", help="First cut for --every.")] = None,
    end: Annotated[str | None, typer.Option("--to", help="Last cut for --every.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Generating model spec (default: the configured model).")] = None,
    seed: Annotated[int, typer.Option(help="KMeans seed for paragraph selection.")] = 0,
    kinds: Annotated[str, typer.Option(help="Instance kinds: qa,dialogue.")] = "qa,dialogue",
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only this article (repeatable).")] = None,
    use_judge: Annotated[bool, typer.Option(
        "--judge/--no-judge", help="Ask the model about sentence pairs similarity cannot "
        "decide, as the paper checks every candidate pair (on by default); --no-judge is the "
        "fast path: such sentences are left out and recorded.")] = True,
    judge_batch: Annotated[int | None, typer.Option(
        "--judge-batch", min=1, help="Sentence pairs the judge decides per call (default 16; "
        "1: one call per pair).", show_default=False)] = None,
    distractors: Annotated[list[Path] | None, typer.Option(
        "--distractors", help="A source of distractor articles (dump, topics JSON, JSON "
        "lines; repeatable): indexed in every snapshot, never asked about, as the paper's "
        "database mixes in random articles.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the snapshots as JSON.")
                       ] = False,
) -> None:
    """Generate snapshot 0 and update it at each later cut; re-running resumes."""
    from freshwiki.benchmarks.growover import build_dataset, datasets_dir

    chosen_kinds = _kinds(kinds)
    cut_list = _cuts(sources, cuts, every, start, end)
    settings = _settings(model)
    root = datasets_dir(settings.home) / name
    dataset = _run(settings, err, as_json, lambda llm, encoder, judge, progress: build_dataset(
        root, sources, llm=llm, model_spec=settings.model, encoder=encoder, cuts=cut_list,
        judge=judge, seed=seed, kinds=chosen_kinds, titles=set(title) if title else None,
        progress=progress, embedder=encoder, distractors=distractors or ()), use_judge,
        judge_batch)
    _report(dataset, out, as_json)


@app.command("update")
def update(
    name: Annotated[str, typer.Argument(help="Dataset name (folder under HOME/growover).")],
    source_or_cut: Annotated[str, typer.Argument(
        help="A new dump (one snapshot), or a later cut date of the dataset's history.")],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Generating model spec; must be the dataset's.")] = None,
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only this article (repeatable).")] = None,
    use_judge: Annotated[bool, typer.Option(
        "--judge/--no-judge", help="As for build (on by default).")] = True,
    judge_batch: Annotated[int | None, typer.Option(
        "--judge-batch", min=1, help="As for build (default 16).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the snapshot as JSON.")
                       ] = False,
) -> None:
    """Add one snapshot: carry over, drop and generate; re-running resumes it."""
    from freshwiki.benchmarks.growover import Dataset, datasets_dir, update_dataset

    settings = _settings(model)
    root = datasets_dir(settings.home) / name
    dataset = Dataset.open(root)
    if model is None:
        settings = _settings(dataset.manifest["model"]["spec"])
    _run(settings, err, as_json, lambda llm, encoder, judge, progress: update_dataset(
        root, source_or_cut, llm=llm, encoder=encoder, judge=judge,
        titles=set(title) if title else None, progress=progress, embedder=encoder), use_judge,
        judge_batch)
    dataset = Dataset.open(root)
    _report(dataset, out, as_json, dataset.snapshots[-1:])


def _run(settings: Settings, err: Console, quiet: bool, work: Callable[..., Any],
         use_judge: bool, judge_batch: int | None = None) -> Any:
    from freshwiki.changes.snapshots import DEFAULT_BATCH_SIZE, BatchLLMJudge
    from freshwiki.llm import open_llm
    from freshwiki.retrieval import Embedder

    encoder = Embedder.default(settings)

    async def main() -> Any:
        llm = open_llm(settings=settings)
        try:
            with _progress(err, quiet) as progress:
                judge = (BatchLLMJudge(llm, batch_size=judge_batch or DEFAULT_BATCH_SIZE)
                         if use_judge else None)
                return await work(llm, encoder, judge, progress)
        finally:
            await llm.aclose()

    try:
        return asyncio.run(main())
    finally:
        encoder.close()


@app.command("train-gate")
def train_gate_command(
    run_id: Annotated[str, typer.Argument(
        help="A finished GrowOVER run of ralm (its retrieved documents are the pairs); id or "
        "prefix.", show_default=False)],
    out_path: Annotated[Path, typer.Option(
        "--out", help="Where to write the gate (JSON).", show_default=False)],
    snapshot: Annotated[str | None, typer.Option(
        help="Snapshot to train on (default: the first with changed or new instances, as "
        "the paper trains on its first update month). Later snapshots are only evaluated.",
        show_default=False)] = None,
    kind: Annotated[str, typer.Option(
        help="qa or dialogue: the paper trains one gate per task.")] = "qa",
    later: Annotated[bool, typer.Option(
        help="Report the gate's accuracy on the pairs of later snapshots (out of sample; "
        "costs one feature pass per pair).")] = True,
    holdout: Annotated[float, typer.Option(
        help="Share of the training snapshot's pairs held out (0: train on all, as the paper; "
        "later snapshots are the test).")] = 0.0,
    seed: Annotated[int, typer.Option(help="Seeds the split and the classifier.")] = 0,
    model: Annotated[str | None, typer.Option(
        help="Model that computes the features (default: the run's model; it must be the "
        "model rilm will answer with).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Train RiLM's certainty gate on one snapshot of a finished GrowOVER ralm run.

    Every (question, retrieved document) pair is labelled: unchanged fact and the document
    holds the evidence: reliable; changed fact, document without it: misleading; new fact,
    document without it: uncertain. The model's state after each pair's prompt trains the
    classifier.
    """
    from freshwiki.evaluation import ResultsStore, default_results_path
    from freshwiki.llm import open_llm
    from freshwiki.systems.rilm.training import pair_rows, train_gate_from_rows

    if kind not in ("qa", "dialogue"):
        raise FreshwikiError(f"--kind must be qa or dialogue, not {kind!r}",
                             hint="pass --kind qa or --kind dialogue.")
    settings = state.resolved().settings
    path = default_results_path(settings)
    if not path.exists():
        raise FreshwikiError(f"no results store at {path}",
                             hint="run `freshwiki eval growover --system ralm ...` first.")
    with ResultsStore(path) as store:
        results = store.load_run(run_id)
    info = results.info
    spec = model or str(info.config.get("model_spec") or info.model)
    prompts: PairPrompts | None = None

    def prompt_for(example: Example) -> list[Message]:
        nonlocal prompts
        if prompts is None:
            # Options that only locate the data (path, name) are kept apart from the run's
            # identity, under data_location; the benchmark needs both to be rebuilt.
            location = info.config.get("data_location") or {}
            prompts = PairPrompts(settings, info.benchmark,
                                  {**(info.config.get("benchmark_options") or {}),
                                   **(location.get("options") or {})})
        return prompts(example)

    def progress(done: int, total: int) -> None:
        if not as_json and (done == total or done % 25 == 0):
            err.print(f"features {done}/{total}", highlight=False)

    async def main() -> GateTraining:
        llm = open_llm(spec, settings=settings)
        try:
            return await train_gate_from_rows(
                pair_rows(results), llm, run_id=info.run_id, prompt_for=prompt_for,
                kind=kind, snapshot=snapshot, evaluate_later=later, holdout=holdout,
                seed=seed, progress=progress)
        finally:
            await llm.aclose()

    try:
        training = asyncio.run(main())
    finally:
        if prompts is not None:
            prompts.close()
    training.gate.save(out_path)
    _print(training, out_path, out, as_json)


class PairPrompts:
    """Rebuilds a pair's prompt for gate training.

    The benchmark's task with that one document in context, as ``rilm`` builds it. It lives
    here, not beside the gate training in ``systems/rilm``: rendering a sample needs the
    benchmark, which a system may not import.

    Args:
        settings: Where the dataset and the embedding cache live.
        benchmark: The run's benchmark name.
        options: The run's benchmark options.
    """

    def __init__(self, settings: Settings, benchmark: str,
                 options: Mapping[str, Any]) -> None:
        from freshwiki.benchmarks import load_benchmark
        from freshwiki.retrieval import SnapshotIndexes

        self._benchmark = load_benchmark(benchmark, settings, options)
        self._samples = {s.id: s for s in self._benchmark.samples()}
        self._indexes = SnapshotIndexes(settings=settings)

    def __call__(self, example: Example) -> list[Message]:
        """The messages ``rilm`` would build for ``example``'s sample and document.

        Raises:
            GateTrainingError: the sample or the document no longer exists.
        """
        from freshwiki.retrieval import SearchHit
        from freshwiki.systems.rag import context_messages
        from freshwiki.systems.rilm.training import GateTrainingError

        sample = self._samples.get(example.sample_id)
        if sample is None:
            raise GateTrainingError(
                f"sample {example.sample_id} of the run is not in the dataset any more",
                hint="train on a run of the dataset as it is now.")
        task = self._benchmark.render(sample, example.template)
        index = self._indexes.get(str(sample.metadata.get("index", "")))
        passage = index.passage(example.passage_id)
        if passage is None:
            raise GateTrainingError(
                f"passage {example.passage_id} retrieved for {example.sample_id} is not in "
                "its snapshot index any more", hint="train on a run of the current dataset.")
        hit = SearchHit(passage=passage, score=0.0, rank=1, key=-1, fused_score=0.0)
        return list(context_messages(task.messages, [hit]))

    def close(self) -> None:
        """Close the snapshot indexes."""
        self._indexes.close()


def _print(training: GateTraining, path: Path, out: Console, as_json: bool) -> None:
    from freshwiki.systems.rilm.training import label_for

    data = training.data
    if as_json:
        out.print_json(json.dumps({
            "gate": str(path), "run_id": data.run_id, "kind": data.kind,
            "snapshot": data.snapshot, "feature_kind": training.gate.feature_kind,
            "model": training.gate.model, "counts": dict(data.counts),
            "labels": data.label_counts, "skipped": dict(data.skipped),
            "report": training.report.to_dict(),
            "later": None if training.later is None else {
                "snapshots": data.later_snapshots, **training.later.to_dict(),
                "by_snapshot": {k: v.to_dict() for k, v in training.later_by_snapshot.items()}},
        }))
        return
    counts = Table(title=f"{data.kind} (question, document) pairs of run {data.run_id}, "
                   f"snapshot {data.snapshot} (type, document holds the evidence)")
    counts.add_column("type outcome")
    counts.add_column("pairs", justify="right")
    counts.add_column("label")
    for key, n in sorted(data.counts.items()):
        itype, _, outcome = key.partition(" ")
        counts.add_row(key, str(n), label_for(itype, outcome) or "[dim]unused[/dim]")
    for reason, n in sorted(data.skipped.items()):
        counts.add_row(f"[dim]{escape(reason)}[/dim]", str(n), "[dim]skipped[/dim]")
    out.print(counts)
    reports = [("held out of the training snapshot", training.report)]
    if training.later is not None:
        reports.append((f"later snapshots {', '.join(data.later_snapshots)} (out of sample)",
                        training.later))
    out.print(f"trained on {training.report.n_train} pairs of snapshot {data.snapshot}",
              highlight=False)
    for title, report in reports:
        if not report.n_test:
            continue
        accuracy = "n/a" if report.accuracy is None else f"{report.accuracy:.3f}"
        confusion = Table(title=f"{title}: {report.n_test} pairs, accuracy {accuracy} "
                          "(rows: true, columns: predicted)")
        confusion.add_column("")
        for c in report.classes:
            confusion.add_column(c, justify="right")
        confusion.add_column("recall", justify="right")
        for c, row in zip(report.classes, report.confusion, strict=True):
            recall = report.recall.get(c)
            confusion.add_row(c, *map(str, row), "n/a" if recall is None else f"{recall:.3f}")
        out.print(confusion)
    option = "gate" if data.kind == "qa" else "dialogue_gate"
    out.print(f"gate ({training.gate.feature_kind}, {escape(training.gate.model)}) written to "
              f"{escape(str(path))}; use it with `freshwiki eval growover --system rilm "
              f"--option {option}={escape(str(path))}` on the snapshots after "
              f"{data.snapshot}", soft_wrap=True, highlight=False)
