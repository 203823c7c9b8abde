"""The evaluation runner: benchmark x system x model → committed outputs and scores.

One run is identified by everything that determines its outputs and scores
(:func:`run_identity`): benchmark name, options and dataset identity, system name and
``describe()``, the model's identity (weights sha256 for local models, not the spec string),
the judge's identity, and a fingerprint of the code and prompt templates of the benchmark,
system and scorers (:mod:`~freshwiki.evaluation._fingerprint`). The run id is a short hash of
that, so the same command on the same code names the same run, and an edited prompt or scorer
starts a new one (``freshwiki runs diff A B`` says what differs). The chosen templates,
``--limit`` and scorer names are *not* part of it: they only widen the work set, so
``--limit 40`` after ``--limit 20`` continues the same run and adds 20 samples.

"Same set-up" means same *content*, wherever it lives: data files by their content hash, an
index by the digest of its passages and embedder, a GGUF file by its sha256, a served model by
what its server reports (``/v1/models``) plus an optional revision. No path or URL is part of
the identity, so the same set-up on another machine or in another checkout gets the same run
id. Where the data was read from is still recorded, apart from the identity, under the
configuration's ``data_location`` (with the benchmark options that only locate data).

For each sample x template of the work set the runner responds unless an output is already
committed, commits the output at once, then runs each scorer whose score is not yet
committed and commits each score at once (:class:`~freshwiki.evaluation._store.ResultsStore`
makes every commit exactly-once). Re-running the same command therefore continues where it
stopped; a killed process loses at most the items in flight. A benchmark that asks some
templates of only some samples (:class:`~freshwiki.benchmarks.ScopedTemplates`) has the other
pairs left out of the work set altogether; so does a system that implements the same
``applies`` (``replay``, which answers only the pairs it has a recorded answer for).

Judge: unless the user names one, the judge is the strongest available model, another one when
it is at least as strong as the model under test, else the model under test itself
(:mod:`~freshwiki.evaluation._judge_choice`).

Concurrency: the LLM client already bounds calls per backend; the runner also bounds items
in flight (default: twice the model client's concurrency, so the next prompt is ready the
moment a slot frees, without queueing the whole benchmark in memory).

Errors are per item: an exception while rendering, responding or scoring is recorded in the
store with its cause, counted, and the run goes on; the next run retries it. Two exceptions
to that rule stop the run with a :class:`~freshwiki.errors.FreshwikiError` instead:

* :class:`~freshwiki.systems.SystemSetupError`: the system cannot answer anything (a missing
  index); every sample would fail the same way.
* **Systemic failure**: when the last ``max_consecutive_failures`` (default 10) finished
  attempts of one stage (responding, or one scorer) all failed with the same exception type,
  the cause is evidently not the samples (a server down, a judge that cannot produce JSON):
  the run stops rather than record 253 identical failures. Successes of that stage reset
  the count, so scattered failures never stop a run. ``0`` disables the rule.

Plugins: modules named in ``FRESHWIKI_PLUGINS`` (comma-separated) are imported before names
are resolved, so a project can register its own benchmarks, systems and scorers without
changing freshwiki (the tests use it to run a slow test system in a real subprocess).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import math
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

import freshwiki
from freshwiki.benchmarks import (
    Benchmark,
    Dialogue,
    Output,
    Sample,
    ScopedTemplates,
    Scorer,
    Task,
    load_benchmark,
    load_scorer,
)
from freshwiki.config import Settings, load_settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._fingerprint import fingerprint, module_names
from freshwiki.evaluation._judge_choice import default_judge
from freshwiki.evaluation._stats import failed_keys
from freshwiki.evaluation._store import ResultsStore, default_results_path, work_set_items
from freshwiki.evaluation._types import FailedItem, RunInfo
from freshwiki.llm import LLM, open_llm
from freshwiki.plugins import PluginError, import_plugins
from freshwiki.systems import System, SystemSetupError, load_system

if TYPE_CHECKING:
    from rich.progress import Task as ProgressTask

DEFAULT_MAX_CONSECUTIVE_FAILURES = 10
RUN_ID_LENGTH = 12


class EvaluationError(FreshwikiError):
    """An evaluation cannot start or cannot go on (bad templates, systemic failure...)."""


class SystemicFailureError(EvaluationError):
    """The same error kept recurring: the run stopped instead of recording it per item."""


# -- plugins and provenance ----------------------------------------------------------------


def load_plugins(environ: Mapping[str, str] | None = None) -> list[str]:
    """Import the modules named in ``FRESHWIKI_PLUGINS`` so their registrations run.

    The registries also do this on their first lookup; the runner calls it up front so that a
    bad plug-in stops the run before any model is loaded.

    Returns:
        The module names imported.

    Raises:
        EvaluationError: a module cannot be imported (naming it and why).
    """
    try:
        return import_plugins(environ)
    except PluginError as exc:
        raise EvaluationError(exc.message, hint=exc.hint) from exc.__cause__


@lru_cache(maxsize=1)
def code_version() -> str:
    """The freshwiki version plus the git commit of its source, ``+dirty`` when modified.

    Only the package folder is checked for modifications: edited tests or docs do not
    change what a run computes. Outside a git checkout (an installed wheel) it is just the
    version.
    """
    version = freshwiki.__version__
    root = Path(freshwiki.__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=20, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    head = git("rev-parse", "HEAD")
    if not head:
        return version
    status = git("status", "--porcelain", "--", ".")
    dirty = "+dirty" if status is None or status else ""
    return f"{version} (git {head}{dirty})"


def dataset_identity(benchmark: Benchmark) -> dict[str, Any]:
    """What a benchmark says about its data, when it says anything: its content, not its place.

    The :class:`~freshwiki.benchmarks.Benchmark` protocol does not require it; a benchmark
    may expose ``describe()`` (a mapping, e.g. the data's sha256 and size) and/or a
    ``dataset_hash`` attribute, and both become part of the run identity, so a changed
    dataset starts a new run. Paths are not identity (the same file elsewhere is the same
    data): the built-in benchmarks leave them out of ``describe()``, and a top-level value
    that is an absolute path (a plug-in's ``"path": "/data/x.jsonl"``) is moved to
    :func:`data_location` instead.
    """
    return _split_dataset(benchmark)[0]


def data_location(benchmark: Benchmark,
                  benchmark_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Where the benchmark's data was read from: recorded with a run, outside its identity.

    The benchmark's ``data_location()`` (when it has one), absolute paths taken out of its
    ``describe()``, and the options it names in ``location_options`` (``path``,
    ``data_dir``...), whose data the content hashes already identify.
    """
    out = dict(_split_dataset(benchmark)[1])
    locate = getattr(benchmark, "data_location", None)
    if callable(locate):
        out.update(dict(locate()))
    options = {k: v for k, v in (benchmark_options or {}).items()
               if k in _location_options(benchmark)}
    if options:
        out["options"] = options
    return out


def _location_options(benchmark: Benchmark) -> frozenset[str]:
    return frozenset(getattr(benchmark, "location_options", ()) or ())


def _split_dataset(benchmark: Benchmark) -> tuple[dict[str, Any], dict[str, Any]]:
    identity: dict[str, Any] = {}
    location: dict[str, Any] = {}
    describe = getattr(benchmark, "describe", None)
    if callable(describe):
        for key, value in dict(describe()).items():
            if isinstance(value, str | Path) and Path(value).is_absolute():
                location[str(key)] = str(value)
            else:
                identity[key] = value
    digest = getattr(benchmark, "dataset_hash", None)
    if digest is not None:
        identity["dataset_hash"] = digest
    return identity, location


def llm_identity(llm: LLM) -> str:
    """``backend:identity``: a local model's weights, a served model's server report.

    The weights' sha256 for local models; for served ones what the server reports, once
    :meth:`~freshwiki.llm.LLM.identity` has asked it (``evaluate`` does, through
    :func:`resolve_identities`). Before that, a served model falls back to its cache key
    (name and URL).
    """
    known = getattr(llm.backend, "identity", None)
    return f"{llm.backend.name}:{known if isinstance(known, str) else llm.backend.model_id}"


async def resolve_identities(*llms: LLM | None) -> None:
    """Ask every model that can say what it is (a server's ``/v1/models``) once, up front.

    :func:`run_identity` is synchronous and reads what this found; :func:`evaluate` calls it
    before computing a run's id.
    """
    for client in llms:
        if client is not None:
            await client.identity()


def run_identity(
    benchmark: Benchmark,
    system: System,
    llm: LLM,
    judge: LLM | None,
    benchmark_options: Mapping[str, Any] | None = None,
    simulator: LLM | None = None,
    scorers: Sequence[Scorer] = (),
) -> dict[str, Any]:
    """Everything that determines a run's outputs and scores; hashed into its id.

    Besides data, options and weights, the identity holds a fingerprint of the code and the
    prompt templates involved (:mod:`freshwiki.evaluation._fingerprint`): every module the
    benchmark, the system and the scorers import, and every template beside them. Editing a
    prompt or a scorer therefore starts a new run instead of reusing old outputs. Scorers
    whose code is already covered (a benchmark's own scorers live in its package) can still
    be added to a run later without changing its id.

    The simulated user of a dialogue benchmark is keyed only when there is one. Options that
    only say where data lives (the benchmark's ``location_options``) are left out: the
    dataset's content hash stands for them (see :func:`data_location`). Served models are
    identified by what their server reports only after :func:`resolve_identities`.
    """
    code = fingerprint(module_names([benchmark, system, *scorers]))
    locating = _location_options(benchmark)
    identity = {
        "benchmark": benchmark.name,
        "benchmark_options": {k: v for k, v in (benchmark_options or {}).items()
                              if k not in locating},
        "dataset": dataset_identity(benchmark),
        "system": system.name,
        "system_config": dict(system.describe()),
        "model": llm_identity(llm),
        "judge": None if judge is None else llm_identity(judge),
        "code": dict(code.modules),
        "prompts": dict(code.files),
    }
    if simulator is not None:
        identity["simulator"] = llm_identity(simulator)
    return identity


def make_run_id(identity: Mapping[str, Any]) -> str:
    """A short hex digest of the canonical JSON of ``identity``."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:RUN_ID_LENGTH]


# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreMean:
    """The mean score of one template x scorer over the work set's committed items.

    ``n_failed`` items of the work set have no score because responding or this scorer
    failed; ``mean_with_failures`` counts them as incorrect (0), so a system whose hard items
    fail does not look better for it.
    """

    template: str
    scorer: str
    mean: float
    n: int
    n_failed: int = 0

    @property
    def n_total(self) -> int:
        """Scored plus failed items."""
        return self.n + self.n_failed

    @property
    def mean_with_failures(self) -> float:
        """The mean with failed items scored 0 (NaN when nothing was attempted)."""
        if not self.n_total:
            return float("nan")
        return (0.0 if self.n == 0 else self.mean) * self.n / self.n_total


@dataclass(frozen=True)
class RunSummary:
    """What one invocation of the runner did, and where the run stands.

    Attributes:
        info: The run (as stored, with the widened work set).
        items: Sample x template pairs in this invocation's work set.
        already_done: Of those, complete (output and every score) before it started.
        complete: Of those, complete now.
        new_outputs: Outputs committed by this invocation.
        new_scores: Scores committed by this invocation.
        new_failures: Failed attempts in this invocation.
        failures: Unresolved failures in the work set (the next run retries them).
        means: Mean score per template x scorer over the work set.
        sample_ids: The work set's samples, in benchmark order (an eval set's intervals
            are computed over exactly these).
    """

    info: RunInfo
    items: int
    already_done: int
    complete: int
    new_outputs: int
    new_scores: int
    new_failures: int
    failures: tuple[FailedItem, ...] = ()
    means: tuple[ScoreMean, ...] = field(default=())
    sample_ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable view (``freshwiki eval --json``)."""
        return {
            "run_id": self.info.run_id,
            "benchmark": self.info.benchmark,
            "system": self.info.system,
            "model": self.info.model,
            "label": self.info.label,
            "items": self.items,
            "already_done": self.already_done,
            "complete": self.complete,
            "new_outputs": self.new_outputs,
            "new_scores": self.new_scores,
            "new_failures": self.new_failures,
            "failures": [
                {"sample_id": f.sample_id, "template": f.template, "stage": f.stage,
                 "scorer": f.scorer, "error_type": f.error_type, "message": f.message}
                for f in self.failures
            ],
            "means": [
                {"template": m.template, "scorer": m.scorer,
                 "mean": None if math.isnan(m.mean) else m.mean, "n": m.n,
                 "n_failed": m.n_failed, "n_total": m.n_total,
                 "mean_with_failures": None if math.isnan(m.mean_with_failures)
                 else m.mean_with_failures}
                for m in self.means
            ],
            "config": dict(self.info.config),
            "code_version": self.info.code_version,
            "model_hashes": dict(self.info.model_hashes),
        }


# -- the runner ----------------------------------------------------------------------------


class _RateColumn(ProgressColumn):
    """Items per second (rich's own speed column formats bytes)."""

    def render(self, task: ProgressTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text("? it/s" if speed is None else f"{speed:.2f} it/s", style="progress.data.speed")


class _Breaker:
    """Stops the run when one stage keeps failing the same way; see the module docstring."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._streaks: dict[str, tuple[str, int, str]] = {}

    def ok(self, stage: str) -> None:
        self._streaks.pop(stage, None)

    def failed(self, stage: str, exc: BaseException, committed: int, run_id: str) -> None:
        kind = type(exc).__name__
        previous = self._streaks.get(stage)
        count = previous[1] + 1 if previous is not None and previous[0] == kind else 1
        first = previous[2] if previous is not None and previous[0] == kind else str(exc)
        self._streaks[stage] = (kind, count, first)
        if self.limit and count >= self.limit:
            what = "responding" if stage == "respond" else f"scoring with {stage[6:]!r}"
            raise SystemicFailureError(
                f"run {run_id} stopped: the last {count} attempts at {what} all failed with "
                f"{kind}: {first.splitlines()[0] if first else kind}",
                hint=f"nothing is lost ({committed} result(s) committed this time). Fix the "
                "cause, then re-run the same command to resume; failed items are retried. "
                "--max-consecutive-failures 0 disables this stop.",
            )


@dataclass
class _Counts:
    outputs: int = 0
    scores: int = 0
    failures: int = 0


def _select_templates(benchmark: Benchmark, templates: Sequence[str] | None) -> list[str]:
    chosen = list(dict.fromkeys(templates)) if templates else list(benchmark.default_templates)
    unknown = [t for t in chosen if t not in benchmark.templates]
    if unknown:
        raise EvaluationError(
            f"benchmark {benchmark.name!r} has no template {', '.join(map(repr, unknown))}",
            hint=f"its templates: {', '.join(benchmark.templates)}.",
        )
    if not chosen:
        raise EvaluationError(f"no templates selected for benchmark {benchmark.name!r}",
                              hint=f"pass --templates, e.g. {benchmark.templates[0]}."
                              if benchmark.templates else None)
    return chosen


def _select_samples(benchmark: Benchmark, limit: int | None) -> list[Sample]:
    if limit is not None and limit < 1:
        raise EvaluationError(f"--limit must be at least 1, got {limit}",
                              hint="omit it to run every sample.")
    samples = list(islice(benchmark.samples(), limit))
    seen: set[str] = set()
    for sample in samples:
        if sample.id in seen:
            raise EvaluationError(
                f"benchmark {benchmark.name!r} yields sample id {sample.id!r} twice",
                hint="sample ids key the results and must be unique; fix the loader.",
            )
        seen.add(sample.id)
    return samples


async def evaluate(
    benchmark: Benchmark,
    system: System,
    *,
    llm: LLM,
    store: ResultsStore,
    scorers: Sequence[Scorer],
    model_spec: str,
    judge: LLM | None = None,
    judge_spec: str | None = None,
    templates: Sequence[str] | None = None,
    limit: int | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
    concurrency: int | None = None,
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    label: str = "",
    console: Console | None = None,
    simulator: LLM | None = None,
) -> RunSummary:
    """Run (or resume) ``system`` on ``benchmark`` and commit every result to ``store``.

    Args:
        benchmark: The benchmark (its first ``limit`` samples x ``templates``).
        system: The system under test, built around ``llm``.
        llm: The system's model client: its identity keys the run, its concurrency sizes
            the number of items in flight.
        store: Where results are committed.
        scorers: Scorers to run on every output (names must be unique).
        model_spec: The model spec as the user gave it (recorded, displayed).
        judge: The judge model client, part of the run identity (``None``: no judge).
        judge_spec: The judge spec as given (recorded).
        templates: Template ids (default: the benchmark's default templates).
        limit: Only the first ``limit`` samples (default: all).
        benchmark_options: Options the benchmark was built with (part of the identity).
        concurrency: Items in flight (default: twice the model client's concurrency).
        max_consecutive_failures: See the module docstring; ``0`` never stops.
        label: Display name for reports (default ``system/model``).
        console: Where to draw the progress bar (``None``: no progress display).
        simulator: The simulated user's model, required for a
            :class:`~freshwiki.benchmarks.Dialogue` benchmark (part of its identity).

    Raises:
        EvaluationError: bad templates/limit/scorers, or a systemic failure.
        SystemSetupError: the system cannot work at all.
    """
    chosen_templates = _select_templates(benchmark, templates)
    samples = _select_samples(benchmark, limit)
    names = [s.name for s in scorers]
    if len(set(names)) != len(names):
        raise EvaluationError(f"scorer names repeat: {', '.join(names)}",
                              hint="name each scorer once.")
    width = concurrency if concurrency is not None else 2 * llm.concurrency
    if width < 1:
        raise EvaluationError(f"--concurrency must be at least 1, got {width}")

    dialogue = benchmark if isinstance(benchmark, Dialogue) else None
    if dialogue is not None and simulator is None:
        raise EvaluationError(f"benchmark {benchmark.name!r} is a dialogue and needs a "
                              "simulated user's model", hint="pass simulator=LLM.")
    await resolve_identities(llm, judge, simulator if dialogue is not None else None)
    identity = run_identity(benchmark, system, llm, judge, benchmark_options,
                            simulator if dialogue is not None else None, scorers)
    run_id = make_run_id(identity)
    config = {
        **identity,
        "data_location": _with_system_location(data_location(benchmark, benchmark_options),
                                               system),
        "model_spec": model_spec,
        "judge_spec": judge_spec,
        "templates": chosen_templates,
        "scorers": names,
        "limit": limit,
        "breakdowns": list(benchmark.breakdowns),
    }
    hashes = {"model": llm.backend.model_id}
    if judge is not None:
        hashes["judge"] = judge.backend.model_id
    if dialogue is not None and simulator is not None:
        hashes["simulator"] = simulator.backend.model_id
    store.open_run(RunInfo(
        run_id=run_id, benchmark=benchmark.name, system=system.name, model=model_spec,
        config=config, code_version=code_version(), model_hashes=hashes,
        created_at=_placeholder_time(), updated_at=_placeholder_time(),
        label=label or f"{system.name}/{model_spec}",
    ))

    done_outputs = store.done_outputs(run_id)
    done_scores = store.done_scores(run_id)

    def complete(sample: Sample, template: str) -> bool:
        return (sample.id, template) in done_outputs and all(
            (sample.id, template, n) in done_scores for n in names
        )

    # The benchmark, and a system that can answer only some pairs, narrow the work set.
    scopes = [x for x in (benchmark, system) if isinstance(x, ScopedTemplates)]
    work = [(i, s, t) for i, s in enumerate(samples) for t in chosen_templates
            if all(scope.applies(s, t) for scope in scopes)]
    pending = [(i, s, t) for i, s, t in work if not complete(s, t)]
    already_done = len(work) - len(pending)
    counts = _Counts()
    breaker = _Breaker(max_consecutive_failures)

    def fail(stage: str, sample: Sample, template: str, exc: Exception,
             scorer: str | None = None) -> None:
        store.record_failure(run_id, sample.id, template, stage, exc, scorer=scorer)
        counts.failures += 1
        breaker.failed(stage if scorer is None else f"score:{scorer}", exc,
                       counts.outputs + counts.scores, run_id)

    async def process(index: int, sample: Sample, template: str) -> None:
        has_output = (sample.id, template) in done_outputs
        todo = [s for s in scorers if (sample.id, template, s.name) not in done_scores]
        try:
            task: Task = benchmark.render(sample, template)
        except Exception as exc:
            if not has_output:
                fail("respond", sample, template, exc)
            for scorer in todo:
                fail("score", sample, template, exc, scorer.name)
            return
        output: Output | None
        if has_output:
            output = store.get_output(run_id, sample.id, template)
            assert output is not None  # committed outputs are never deleted
        else:
            try:
                if dialogue is not None and simulator is not None:
                    answer = await dialogue.converse(task, system.respond, simulator)
                else:
                    answer = await system.respond(task)
            except SystemSetupError:
                raise
            except Exception as exc:
                fail("respond", sample, template, exc)
                return
            output, inserted = store.commit_output(run_id, sample, template, answer,
                                                   sample_index=index)
            counts.outputs += int(inserted)
            breaker.ok("respond")
        for scorer in todo:
            try:
                score = await scorer.score(task, output)
                inserted = store.commit_score(run_id, sample.id, template, scorer.name, score)
            except SystemSetupError:
                raise
            except Exception as exc:
                fail("score", sample, template, exc, scorer.name)
                continue
            counts.scores += int(inserted)
            breaker.ok(f"score:{scorer.name}")

    progress = _progress(console) if console is not None else None
    bar = None
    if progress is not None:
        progress.start()
        bar = progress.add_task(f"run {run_id}", total=len(work),
                                completed=already_done, failed=0)
    queue = iter(pending)

    async def worker() -> None:
        for index, sample, template in queue:
            await process(index, sample, template)
            if progress is not None and bar is not None:
                progress.update(bar, advance=1, failed=counts.failures)

    workers = [asyncio.create_task(worker()) for _ in range(min(width, max(len(pending), 1)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        if progress is not None:
            progress.stop()

    return _summarise(store, run_id, samples, chosen_templates, names, already_done, counts,
                      [(s, t) for _, s, t in work])


def _with_system_location(location: dict[str, Any], system: System) -> dict[str, Any]:
    """``location`` plus the system's own ``data_location()`` (under ``system``), if any.

    A system that reads data (``replay``'s answers file) is identified by its content in
    ``describe()``; where that data was read from is recorded here, outside the identity.
    """
    locate = getattr(system, "data_location", None)
    if callable(locate):
        location = {**location, "system": dict(locate())}
    return location


def _placeholder_time() -> dt.datetime:
    """Creation times are set by the store; RunInfo needs a value to be built."""
    return dt.datetime.now(dt.UTC)


def _progress(console: Console) -> Progress:
    # Narrow enough for the 80 columns rich assumes when stderr is not a terminal.
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=16),
        MofNCompleteColumn(),
        _RateColumn(),
        TextColumn("[red]{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(compact=True),
        console=console,
        transient=False,
    )


def _summarise(
    store: ResultsStore,
    run_id: str,
    samples: Sequence[Sample],
    templates: Sequence[str],
    scorers: Sequence[str],
    already_done: int,
    counts: _Counts,
    pairs: Sequence[tuple[Sample, str]],
) -> RunSummary:
    results = store.load_run(run_id)
    ids = [s.id for s in samples]
    items = work_set_items(results, sample_ids=ids, templates=templates, scorers=scorers)
    id_set = set(ids)
    failures = tuple(
        f for f in results.failures
        if f.sample_id in id_set and f.template in templates
        and (f.stage == "respond" or f.scorer in scorers)
    )
    means = []
    for template in templates:
        for scorer in scorers:
            values = [i.value for i in items if i.template == template and i.scorer == scorer]
            failed = sum(1 for _, t in failed_keys(failures, scorer) if t == template)
            means.append(ScoreMean(template, scorer,
                                   sum(values) / len(values) if values else float("nan"),
                                   len(values), failed))
    done_outputs = store.done_outputs(run_id)
    done_scores = store.done_scores(run_id)
    complete = sum(
        1 for s, t in pairs
        if (s.id, t) in done_outputs and all((s.id, t, n) in done_scores for n in scorers)
    )
    return RunSummary(
        info=results.info, items=len(pairs), already_done=already_done,
        complete=complete, new_outputs=counts.outputs, new_scores=counts.scores,
        new_failures=counts.failures, failures=failures, means=tuple(means),
        sample_ids=tuple(ids),
    )


DEFAULT_JUDGE = "default"
"""``judge=DEFAULT_JUDGE`` means the strongest available model, even the one under test
(:func:`~freshwiki.evaluation._judge_choice.default_judge`)."""


async def run_evaluation(
    benchmark: str | Benchmark,
    *,
    system: str = "vanilla",
    model: str | None = None,
    judge: str | None = DEFAULT_JUDGE,
    templates: Sequence[str] | None = None,
    limit: int | None = None,
    scorers: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
    concurrency: int | None = None,
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    label: str = "",
    settings: Settings | None = None,
    store_path: Path | None = None,
    cache: bool | None = None,
    console: Console | None = None,
) -> RunSummary:
    """Evaluate a system on a benchmark by name: the Python form of ``freshwiki eval``.

    >>> summary = await run_evaluation("wikicontradict", system="vanilla",   # doctest: +SKIP
    ...                                model="local:qwen2.5-coder-1.5b", templates=["4"],
    ...                                limit=20)
    >>> summary.info.run_id, summary.complete, summary.means            # doctest: +SKIP

    Args:
        benchmark: A registered benchmark name, or a benchmark object.
        system: A registered system name.
        model: Model spec of the system (default: ``settings.model``).
        judge: Judge model spec; ``"default"`` picks one (the configured model unless it is
            the model under test or a weaker named model, else the strongest installed named
            model, which may be the model under test); ``None`` or ``"none"`` runs without a
            judge (scorers that need one are left out).
        templates: Template ids (default: the benchmark's defaults).
        limit: Only the first ``limit`` samples.
        scorers: Scorer names (default: the benchmark's scorers for this judge).
        options: System options (``k``, ``index`` for ``rag``).
        benchmark_options: Options for the benchmark factory (with a benchmark name).
        concurrency: Items in flight (default: twice the model client's concurrency).
        max_consecutive_failures: Stop after this many same-type failures in a row (0: never).
        label: Display name for reports.
        settings: Resolved settings (default: loaded from file and environment).
        store_path: Results database (default: ``home/runs/runs.sqlite``).
        cache: Override ``settings.cache`` for the LLM response cache.
        console: Draw a progress bar there (``None``: none).
    """
    load_plugins()
    settings = settings or load_settings().settings
    bench = (load_benchmark(benchmark, settings, benchmark_options)
             if isinstance(benchmark, str) else benchmark)
    model_spec = model or settings.model
    judge_spec = judge
    if judge == DEFAULT_JUDGE:
        choice = default_judge(model_spec, settings)
        judge_spec = choice.spec
        if console is not None:
            console.print(f"judge: {choice.spec} ({choice.reason}; --judge to choose)",
                          markup=False, highlight=False)
    if judge_spec is not None and judge_spec.strip().lower() == "none":
        judge_spec = None
    llm = open_llm(model_spec, settings=settings, cache=cache)
    judge_llm: LLM | None = None
    simulator: LLM | None = None
    opened: list[LLM] = []

    def reuse_or_open(spec: str) -> LLM:
        # The same model in two roles shares one client, so one semaphore bounds both roles
        # (and a local model is loaded once).
        for spec_given, client in ((model_spec, llm), (judge_spec, judge_llm)):
            if client is not None and spec == spec_given:
                return client
        client = open_llm(spec, settings=settings, cache=cache)
        opened.append(client)
        return client

    chosen: list[Scorer] = []
    try:
        if judge_spec is not None:
            judge_llm = reuse_or_open(judge_spec)
        if isinstance(bench, Dialogue):
            simulator = reuse_or_open(bench.simulator_spec or model_spec)
        chosen = ([load_scorer(name, judge_llm) for name in scorers] if scorers
                  else list(bench.scorers(judge_llm)))
        sut = load_system(system, llm, settings, options)
        try:
            with ResultsStore(store_path or default_results_path(settings)) as store:
                return await evaluate(
                    bench, sut, llm=llm, store=store, scorers=chosen, model_spec=model_spec,
                    judge=judge_llm, judge_spec=judge_spec, templates=templates, limit=limit,
                    benchmark_options=benchmark_options, concurrency=concurrency,
                    max_consecutive_failures=max_consecutive_failures, label=label,
                    console=console, simulator=simulator,
                )
        finally:
            await sut.aclose()
    finally:
        for holder in (*chosen, bench):
            close = getattr(holder, "aclose", None)
            if callable(close):
                await close()
        await llm.aclose()
        for client in opened:
            await client.aclose()
