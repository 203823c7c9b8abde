"""``freshwiki growover train-gate``: train RiLM's certainty gate on a finished GrowOVER run.

Kept apart from ``cli_growover.py`` (the benchmark's own commands); :func:`register` adds the
command to the ``growover`` group. Global options (``--home``...) come from ``cli.py``'s state,
imported when the command runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.evaluation._gate_training import GateTraining


def _consoles() -> tuple[Console, Console]:
    from freshwiki import cli

    return cli.out, cli.err


def _settings() -> Settings:
    from freshwiki import cli

    return cli._state.resolved().settings


def train_gate_command(
    run_id: Annotated[str, typer.Argument(
        help="A finished GrowOVER run of a retrieving system (ralm, rilm); id or prefix.",
        show_default=False)],
    out_path: Annotated[Path, typer.Option(
        "--out", help="Where to write the gate (JSON).", show_default=False)],
    holdout: Annotated[float, typer.Option(
        help="Share of labelled samples held out to report accuracy on.")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seeds the split and the classifier.")] = 0,
    model: Annotated[str | None, typer.Option(
        help="Model that computes the features (default: the run's model; it must be the "
        "model rilm will answer with).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Train RiLM's certainty gate on a finished GrowOVER run.

    QA answers are labelled unchanged+hit: reliable, changed+miss: misleading, new+miss:
    uncertain; the model's features of each (prompt, answer) train the classifier.
    """
    from freshwiki.evaluation import ResultsStore, default_results_path
    from freshwiki.evaluation._gate_training import RalmPrompts, train_gate_from_run
    from freshwiki.llm import open_llm

    out, err = _consoles()
    settings = _settings()
    path = default_results_path(settings)
    if not path.exists():
        raise FreshwikiError(f"no results store at {path}",
                             hint="run `freshwiki eval growover --system ralm ...` first.")
    with ResultsStore(path) as store:
        info = store.run_info(run_id)
        spec = model or str(info.config.get("model_spec") or info.model)
        prompts: RalmPrompts | None = None

        def prompt_for(example: Any, output: Any) -> Any:
            nonlocal prompts
            if prompts is None:  # only runs without recorded prompts need the dataset
                prompts = RalmPrompts(settings, info.benchmark,
                                      dict(info.config.get("benchmark_options") or {}))
            return prompts(example, output)

        def progress(done: int, total: int) -> None:
            if not as_json and (done == total or done % 25 == 0):
                err.print(f"features {done}/{total}", highlight=False)

        async def main() -> GateTraining:
            llm = open_llm(spec, settings=settings)
            try:
                return await train_gate_from_run(store, info.run_id, llm, prompt_for=prompt_for,
                                                 holdout=holdout, seed=seed, progress=progress)
            finally:
                await llm.aclose()

        try:
            training = asyncio.run(main())
        finally:
            if prompts is not None:
                prompts.close()
    training.gate.save(out_path)
    _print(training, out_path, out, as_json)


def _print(training: GateTraining, path: Path, out: Console, as_json: bool) -> None:
    from freshwiki.evaluation._gate_training import label_for

    report = training.report
    if as_json:
        out.print_json(json.dumps({
            "gate": str(path), "run_id": training.data.run_id,
            "feature_kind": training.gate.feature_kind, "model": training.gate.model,
            "counts": dict(training.data.counts), "labels": training.data.label_counts,
            "skipped": dict(training.data.skipped), "report": report.to_dict(),
        }))
        return
    counts = Table(title=f"samples of run {training.data.run_id} (type, retrieval)")
    counts.add_column("type outcome")
    counts.add_column("samples", justify="right")
    counts.add_column("label")
    for key, n in sorted(training.data.counts.items()):
        kind, _, outcome = key.partition(" ")
        counts.add_row(key, str(n), label_for(kind, outcome) or "[dim]unused[/dim]")
    for reason, n in sorted(training.data.skipped.items()):
        counts.add_row(f"[dim]{escape(reason)}[/dim]", str(n), "[dim]skipped[/dim]")
    out.print(counts)
    accuracy = "n/a" if report.accuracy is None else f"{report.accuracy:.3f}"
    out.print(f"trained on {report.n_train}, held out {report.n_test}: accuracy {accuracy}",
              highlight=False)
    confusion = Table(title="held-out confusion (rows: true, columns: predicted)")
    confusion.add_column("")
    for c in report.classes:
        confusion.add_column(c, justify="right")
    confusion.add_column("recall", justify="right")
    for c, row in zip(report.classes, report.confusion, strict=True):
        recall = report.recall.get(c)
        confusion.add_row(c, *map(str, row), "n/a" if recall is None else f"{recall:.3f}")
    out.print(confusion)
    out.print(f"gate ({training.gate.feature_kind}, {escape(training.gate.model)}) written to "
              f"{escape(str(path))}; use it with `freshwiki eval growover --system rilm "
              f"--option gate={escape(str(path))}`", soft_wrap=True, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``train-gate`` to ``app`` (the ``growover`` command group)."""
    app.command("train-gate")(train_gate_command)
