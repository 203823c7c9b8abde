"""Eval sets: a TOML file of benchmarks x systems x models x options, run as one.

Orchestration used to live in scripts (a loop over systems and datasets calling the runner);
a file says the same thing declaratively, can be checked without a model, and is committed
beside the results it produces, as inspect_ai's ``eval_set`` and lm-evaluation-harness's task
files do. ``freshwiki eval-set run FILE`` expands it into runs and gives each to
:func:`~freshwiki.evaluation._runner.run_evaluation`, so every run is the ordinary resumable,
fingerprinted run ``freshwiki eval`` would make with the same arguments: re-running the file
resumes every run, and a run it shares with a hand-typed ``freshwiki eval`` is the same run.

The format (``docs/evaluation.md`` has the full table)::

    description = "what the set reproduces"

    [defaults]                       # any run field, for every [[runs]] entry that omits it
    model = "local:qwen2.5-coder-1.5b"

    [[runs]]
    benchmark = "wikicontradict"     # or benchmarks = [...]
    system = "vanilla"               # or systems = [...]
    templates = ["1", "4", "5"]
    limit = 49
    judge = "default"                # a spec, "default" or "none"
    options = { k = 4 }              # system options (as --option)
    benchmark_options = { path = "./data/x.jsonl" }
    meta = { dataset = "notes" }     # free text, echoed in the summary

Each entry expands to the product of its benchmarks, systems and models. An option value that
begins with ``./`` or ``../`` is a path relative to the file (so a committed set works from any
checkout); ``{home}/`` and ``{data}/`` begin paths in the freshwiki home and data folder.

Everything is checked before any run starts (:func:`check_eval_set`): unknown fields,
wrong types, unknown benchmarks, systems, scorers, templates, model kinds and options. An
error names the file, the line and the field; ``tomllib`` reports no line numbers for values,
so the line is found in the text (:func:`_key_lines`).
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from freshwiki.benchmarks import benchmark_names, load_benchmark, scorer_names
from freshwiki.config import Settings, load_settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation._runner import (
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
    EvaluationError,
    RunSummary,
    load_plugins,
    run_evaluation,
)
from freshwiki.evaluation._stats import GroupSummary, summarize
from freshwiki.evaluation._store import ResultsStore, default_results_path, work_set_items
from freshwiki.llm import backend_kinds, open_llm
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.systems import load_system, system_names


class EvalSetError(EvaluationError):
    """An eval-set file that cannot be run: its message names the file, line and field."""


_TOP = ("description", "defaults", "runs")
_PLURAL = {"benchmarks": "benchmark", "systems": "system", "models": "model"}
_FIELDS: Mapping[str, str] = {
    # field -> kind: str, str-list, int, bool, table, str-table
    "benchmark": "str", "benchmarks": "str-list",
    "system": "str", "systems": "str-list",
    "model": "str", "models": "str-list",
    "templates": "str-list", "limit": "int", "judge": "str", "scorers": "str-list",
    "options": "table", "benchmark_options": "table", "label": "str",
    "concurrency": "int", "max_consecutive_failures": "int", "cache": "bool",
    "meta": "str-table",
}


@dataclass(frozen=True)
class PlannedRun:
    """One run of an eval set: the arguments of one :func:`run_evaluation` call.

    Attributes:
        benchmark: Benchmark name.
        system: System name.
        model: Model spec (``None``: the configured model).
        templates: Template ids (``None``: the benchmark's defaults).
        limit: Only the first ``limit`` samples (``None``: all).
        judge: Judge spec, ``"default"`` (the runner's choice) or ``None`` (no judge).
        scorers: Scorer names (``None``: the benchmark's).
        options: System options, paths resolved.
        benchmark_options: Benchmark options, paths resolved.
        label: Display name (``""``: system/model); ``{benchmark}``, ``{system}``,
            ``{model}`` and ``{meta key}`` are filled in.
        concurrency: Items in flight (``None``: the runner's default).
        max_consecutive_failures: The runner's systemic-failure stop.
        cache: Override the response-cache setting (``None``: the setting).
        meta: Free text from the file (e.g. ``dataset``), echoed in the summary.
        line: The line of the ``[[runs]]`` entry it comes from.
        entry: The entry's index in the file (0-based).
    """

    benchmark: str
    system: str
    model: str | None = None
    templates: tuple[str, ...] | None = None
    limit: int | None = None
    judge: str | None = "default"
    scorers: tuple[str, ...] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    benchmark_options: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    concurrency: int | None = None
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES
    cache: bool | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    line: int = 0
    entry: int = 0

    def key(self) -> str:
        """What makes two planned runs the same work (line and entry left out)."""
        data = {k: v for k, v in self.to_json().items() if k not in ("line", "entry", "meta")}
        return json.dumps(data, sort_keys=True, default=str)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable view (``eval-set check --json``)."""
        return {
            "benchmark": self.benchmark, "system": self.system, "model": self.model,
            "templates": None if self.templates is None else list(self.templates),
            "limit": self.limit, "judge": self.judge,
            "scorers": None if self.scorers is None else list(self.scorers),
            "options": dict(self.options), "benchmark_options": dict(self.benchmark_options),
            "label": self.label, "concurrency": self.concurrency,
            "max_consecutive_failures": self.max_consecutive_failures, "cache": self.cache,
            "meta": dict(self.meta), "line": self.line, "entry": self.entry,
        }


@dataclass(frozen=True)
class EvalSet:
    """A parsed, expanded eval-set file.

    Attributes:
        path: The file.
        description: Its ``description`` ("" when none).
        runs: The runs, in file order (entry by entry, benchmarks x systems x models).
    """

    path: Path
    description: str
    runs: tuple[PlannedRun, ...]


@dataclass(frozen=True)
class EvalSetResult:
    """One run of an eval set, done.

    Attributes:
        planned: The run as the file asked for it.
        summary: The runner's summary.
        groups: Mean and 95 % bootstrap interval (resampling samples) per scorer x template
            over the run's work set (:func:`~freshwiki.evaluation._stats.summarize`, as the
            report computes them).
    """

    planned: PlannedRun
    summary: RunSummary
    groups: tuple[GroupSummary, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The runner's summary plus the plan's meta and templates and the intervals."""
        return {**self.summary.to_json(), "meta": dict(self.planned.meta),
                "templates": list(dict.fromkeys(m.template for m in self.summary.means)),
                "entry": self.planned.entry, "line": self.planned.line,
                "intervals": [{"scorer": g.get("scorer"), "template": g.get("template"),
                               "n": g.n, "mean": g.mean,
                               "ci": None if g.ci is None else [g.ci.low, g.ci.high]}
                              for g in self.groups]}


# -- locating keys in the text ---------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r'^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\')'
                  r'(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\'))*)\s*=')
_INLINE_KEY = re.compile(r'[{,]\s*([A-Za-z0-9_-]+|"[^"]*")\s*=')


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', dotted)]


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line (1-based) of every key of a TOML text, by its path.

    A path is the table names and keys leading to the key, with an array of tables'
    entry index as a string: ``("runs", "2", "options", "k")``. Inline tables on the key's
    line add their keys too. This reads only headers and ``key =`` at the start of a line,
    which is all a TOML key can be; it is used only to place an error message, after
    ``tomllib`` has accepted the text.
    """
    lines: dict[tuple[str, ...], int] = {}
    arrays: dict[tuple[str, ...], int] = {}
    current: tuple[str, ...] = ()
    in_multiline = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.count('"""') % 2 or line.count("'''") % 2:
            in_multiline = not in_multiline
            if not in_multiline:
                continue
        elif in_multiline:
            continue
        header = _HEADER.match(line)
        if header and not _KEY.match(line):
            names = tuple(_parts(header.group(2)))
            path: tuple[str, ...] = ()
            for i, name in enumerate(names):
                path = (*path, name)
                is_last = i == len(names) - 1
                if header.group(1) == "[[" and is_last:
                    arrays[path] = arrays.get(path, -1) + 1
                    path = (*path, str(arrays[path]))
                elif path in arrays:
                    path = (*path, str(arrays[path]))
            current = path
            lines.setdefault(current, number)
            continue
        key = _KEY.match(line)
        if key:
            path = (*current, *_parts(key.group(1)))
            lines.setdefault(path, number)
            rest = line[key.end():]
            if rest.lstrip().startswith("{"):
                for inner in _INLINE_KEY.finditer(rest):
                    lines.setdefault((*path, inner.group(1).strip('"')), number)
    return lines


class _Locator:
    """Turns a field path into ``FILE:LINE: field`` for messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = _key_lines(text)

    def line(self, where: Sequence[str]) -> int:
        keys = tuple(where)
        while keys:
            if keys in self.lines:
                return self.lines[keys]
            keys = keys[:-1]
        return 1

    def error(self, where: Sequence[str], message: str, hint: str | None = None,
              ) -> EvalSetError:
        name = ".".join(f"[{p}]" if p.isdigit() else p for p in where).replace(".[", "[")
        return EvalSetError(f"{self.path}:{self.line(where)}: {name}: {message}",
                            hint=hint or "fix the eval-set file; `freshwiki eval-set check "
                            "FILE` checks it without a model.")


# -- parsing ---------------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def _check_kind(loc: _Locator, where: list[str], kind: str, value: Any) -> None:
    want = {"str": "a string", "str-list": "an array of strings", "int": "an integer",
            "bool": "true or false", "table": "a table", "str-table": "a table of strings"}[kind]
    ok = {
        "str": isinstance(value, str),
        "str-list": isinstance(value, list) and all(isinstance(v, str) for v in value),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "table": isinstance(value, dict),
        "str-table": isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
    }[kind]
    if not ok:
        raise loc.error(where, f"is {_type_name(value)} ({json.dumps(value, default=str)[:60]})"
                        f", not {want}")
    if kind == "str-list" and not value:
        raise loc.error(where, "is an empty array")


def _resolve_value(value: Any, base: Path, settings: Settings) -> Any:
    """Option values: ``./x`` and ``../x`` relative to the file; ``{home}/``, ``{data}/``."""
    if isinstance(value, str):
        if value.startswith(("./", "../")):
            return str((base / value).resolve())
        for prefix, root in (("{home}/", settings.home), ("{data}/", settings.data_dir)):
            if value.startswith(prefix):
                return str(Path(root) / value[len(prefix):])
        return value
    if isinstance(value, list):
        return [_resolve_value(v, base, settings) for v in value]
    if isinstance(value, dict):
        return {k: _resolve_value(v, base, settings) for k, v in value.items()}
    return value


def _entry_fields(loc: _Locator, where: list[str], table: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _FIELDS:
            raise loc.error([*where, key], "is not a run field",
                            hint=f"run fields: {', '.join(_FIELDS)}.")
        _check_kind(loc, [*where, key], _FIELDS[key], value)
        if key in ("limit", "concurrency") and value < 1:
            raise loc.error([*where, key], f"must be at least 1, got {value}")
        if key == "max_consecutive_failures" and value < 0:
            raise loc.error([*where, key], f"must be 0 or more, got {value}")
        fields[key] = value
    for plural, single in _PLURAL.items():
        if plural in fields and single in fields:
            raise loc.error([*where, plural], f"give {single} or {plural}, not both")
    return fields


def load_eval_set(path: Path, *, settings: Settings | None = None) -> EvalSet:
    """Read and expand an eval-set file, checking its fields and their types.

    Names (benchmarks, systems, templates, options) are checked by :func:`check_eval_set`,
    which needs the registries and loads each benchmark once.

    Raises:
        EvalSetError: the file is missing, not TOML, or has an unknown field or a value of
            the wrong type (the message names the file, line and field).
    """
    settings = settings or load_settings().settings
    if not path.is_file():
        raise EvalSetError(f"no eval-set file {path}",
                           hint="give a TOML file such as experiments/evalsets/*.toml.")
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EvalSetError(f"{path}: not valid TOML: {exc}",
                           hint="fix the syntax at the line and column given.") from None
    loc = _Locator(path, text)
    for key in data:
        if key not in _TOP:
            raise loc.error([key], "is not an eval-set field",
                            hint=f"top-level fields: {', '.join(_TOP)}; a run's fields go in "
                            "[[runs]] or [defaults].")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise loc.error(["description"], f"is {_type_name(description)}, not a string")
    defaults_table = data.get("defaults", {})
    if not isinstance(defaults_table, dict):
        raise loc.error(["defaults"], f"is {_type_name(defaults_table)}, not a table")
    defaults = _entry_fields(loc, ["defaults"], defaults_table)
    entries = data.get("runs")
    if not isinstance(entries, list) or not entries:
        raise loc.error(["runs"], "the file has no [[runs]] entry" if entries is None
                        else f"is {_type_name(entries)}, not an array of [[runs]] tables",
                        hint="add at least one [[runs]] table with a benchmark.")
    base = path.resolve().parent
    planned: list[PlannedRun] = []
    seen: dict[str, PlannedRun] = {}
    for index, entry in enumerate(entries):
        where = ["runs", str(index)]
        if not isinstance(entry, dict):
            raise loc.error(where, f"is {_type_name(entry)}, not a table")
        own = _entry_fields(loc, where, entry)
        merged = dict(defaults)
        for key, value in own.items():  # an entry's `system` replaces the defaults' `systems`
            for plural, single in _PLURAL.items():
                if key in (plural, single):
                    merged.pop(plural, None)
                    merged.pop(single, None)
            merged[key] = value

        def axis(plural: str, single: str, required: bool, _merged: dict[str, Any] = merged,
                 _where: list[str] = where) -> list[str | None]:
            if plural in _merged:
                return list(_merged[plural])
            if single in _merged:
                return [_merged[single]]
            if required:
                raise loc.error([*_where, single], "is missing",
                                hint=f"each [[runs]] entry (or [defaults]) names a {single}.")
            return [None]

        benchmarks = axis("benchmarks", "benchmark", True)
        systems = axis("systems", "system", False)
        models = axis("models", "model", False)
        judge = merged.get("judge", "default")
        line = loc.line(where)
        for bench, system, model in itertools.product(benchmarks, systems, models):
            assert bench is not None
            run = PlannedRun(
                benchmark=bench, system=system or "vanilla", model=model,
                templates=tuple(merged["templates"]) if "templates" in merged else None,
                limit=merged.get("limit"),
                judge=None if judge.strip().lower() == "none" else judge,
                scorers=tuple(merged["scorers"]) if "scorers" in merged else None,
                options=_resolve_value(merged.get("options", {}), base, settings),
                benchmark_options=_resolve_value(merged.get("benchmark_options", {}), base,
                                                 settings),
                label=merged.get("label", ""),
                concurrency=merged.get("concurrency"),
                max_consecutive_failures=merged.get("max_consecutive_failures",
                                                    DEFAULT_MAX_CONSECUTIVE_FAILURES),
                cache=merged.get("cache"), meta=dict(merged.get("meta", {})),
                line=line, entry=index)
            key = run.key()
            if key in seen:
                raise loc.error(where, f"repeats the run of the entry at line {seen[key].line} "
                                f"({bench} · {run.system} · {model or 'configured model'})",
                                hint="list each run once (a run re-run only resumes).")
            seen[key] = run
            planned.append(run)
    return EvalSet(path=path, description=description, runs=tuple(planned))


# -- checking against the registries ---------------------------------------------------------


def _field_of(run: PlannedRun, single: str, eval_set: EvalSet, loc: _Locator) -> list[str]:
    """The path of a field of ``run``'s entry, as written (``system`` or ``systems``)."""
    entry = ["runs", str(run.entry)]
    for name in (single, f"{single}s"):
        if (*entry, name) in loc.lines:
            return [*entry, name]
        if ("defaults", name) in loc.lines:
            return ["defaults", name]
    return [*entry, single]


def check_eval_set(eval_set: EvalSet, *, settings: Settings | None = None) -> None:
    """Check every run of ``eval_set`` against what is installed, without a model.

    Benchmarks, systems and scorers must be registered; each benchmark is built once with
    its options (which checks them and the data); templates must be the benchmark's; each
    system is built with its options around a model that cannot answer (which checks the
    options and that, e.g., its index exists); model specs must name a known backend kind.

    Raises:
        EvalSetError: naming the file, the line and the field of the first problem.
    """
    settings = settings or load_settings().settings
    load_plugins()
    text = eval_set.path.read_text(encoding="utf-8")
    loc = _Locator(eval_set.path, text)
    benchmarks, systems, scorers = set(benchmark_names()), set(system_names()), set(
        scorer_names())
    kinds = set(backend_kinds())
    built: dict[str, Any] = {}
    checked_systems: set[str] = set()
    for run in eval_set.runs:
        if run.benchmark not in benchmarks:
            raise loc.error(_field_of(run, "benchmark", eval_set, loc),
                            f"no benchmark {run.benchmark!r}",
                            hint=f"benchmarks: {', '.join(sorted(benchmarks))}.")
        if run.system not in systems:
            raise loc.error(_field_of(run, "system", eval_set, loc),
                            f"no system {run.system!r}",
                            hint=f"systems: {', '.join(sorted(systems))}.")
        for name in run.scorers or ():
            if name not in scorers:
                raise loc.error(_field_of(run, "scorer", eval_set, loc),
                                f"no scorer {name!r}",
                                hint=f"scorers: {', '.join(sorted(scorers))}.")
        for spec, single in ((run.model, "model"), (run.judge, "judge")):
            if spec is None or spec == "default":
                continue
            kind = spec.split(":", 1)[0] if ":" in spec else ""
            if kind not in kinds:
                raise loc.error(_field_of(run, single, eval_set, loc),
                                f"{spec!r} names no model backend",
                                hint=f"a spec is KIND:NAME with KIND one of "
                                f"{', '.join(sorted(kinds))} (`freshwiki models list`).")
        bkey = json.dumps([run.benchmark, run.benchmark_options], sort_keys=True, default=str)
        if bkey not in built:
            try:
                built[bkey] = load_benchmark(run.benchmark, settings, run.benchmark_options)
            except FreshwikiError as exc:
                where = (_option_field(_field_of(run, "benchmark_option", eval_set, loc),
                                       run.benchmark_options, exc.message)
                         if run.benchmark_options else
                         _field_of(run, "benchmark", eval_set, loc))
                raise loc.error(where, exc.message, hint=exc.hint) from None
        bench = built[bkey]
        unknown = [t for t in run.templates or () if t not in bench.templates]
        if unknown:
            raise loc.error(_field_of(run, "template", eval_set, loc),
                            f"benchmark {run.benchmark!r} has no template "
                            f"{', '.join(map(repr, unknown))}",
                            hint=f"its templates: {', '.join(bench.templates)}.")
        skey = json.dumps([run.system, run.options], sort_keys=True, default=str)
        if skey not in checked_systems:
            _check_system(run, settings, loc,
                          _option_field(_field_of(run, "option", eval_set, loc), run.options)
                          if run.options else _field_of(run, "system", eval_set, loc))
            checked_systems.add(skey)
    for bench in built.values():
        close = getattr(bench, "aclose", None)
        if callable(close):
            import asyncio

            asyncio.run(close())


def _option_field(where: list[str], options: Mapping[str, Any],
                  message: str | None = None) -> list[str]:
    """The path of the option a message names (``where`` itself when it names none).

    ``message`` may be given later (:func:`_check_system` calls it with the error's).
    """
    if message is None:
        return where
    for key in options:
        if repr(key) in message or f"{key}=" in message or f" {key} " in message:
            return [*where, key]
    return where


def _check_system(run: PlannedRun, settings: Settings, loc: _Locator,
                  where: list[str]) -> None:
    """Build the system around a model with an empty script: options checked, nothing asked."""
    import asyncio

    llm = open_llm(backend=ScriptedBackend([]), settings=settings, cache=False)

    async def build() -> None:
        try:
            system = load_system(run.system, llm, settings, run.options)
            await system.aclose()
        finally:
            await llm.aclose()

    try:
        asyncio.run(build())
    except FreshwikiError as exc:
        raise loc.error(_option_field(where, run.options, exc.message) if run.options
                        else where, exc.message, hint=exc.hint) from None


def read_eval_set(path: Path, *, settings: Settings | None = None) -> EvalSet:
    """:func:`load_eval_set` then :func:`check_eval_set`: a set ready to run."""
    settings = settings or load_settings().settings
    eval_set = load_eval_set(path, settings=settings)
    check_eval_set(eval_set, settings=settings)
    return eval_set


def with_options(eval_set: EvalSet, system: str, **options: Any) -> EvalSet:
    """The set with ``options`` added to every run of ``system`` (a script's override)."""
    runs = tuple(replace(r, options={**r.options, **options}) if r.system == system else r
                 for r in eval_set.runs)
    return replace(eval_set, runs=runs)


# -- running ---------------------------------------------------------------------------------


def _label(run: PlannedRun) -> str:
    if not run.label:
        return ""
    try:
        return run.label.format(benchmark=run.benchmark, system=run.system,
                                model=run.model or "", **run.meta)
    except (KeyError, IndexError, ValueError):
        return run.label


async def run_eval_set(
    eval_set: EvalSet,
    *,
    settings: Settings | None = None,
    store_path: Path | None = None,
    console: Console | None = None,
    on_done: Callable[[EvalSetResult], None] | None = None,
) -> list[EvalSetResult]:
    """Run (or resume) every run of a checked eval set, one after the other.

    Each run goes through :func:`run_evaluation` exactly as ``freshwiki eval`` would send it,
    so it is stored, resumable and fingerprinted the same way; a run complete before is
    only summarised again (no model call is made for it).

    Args:
        eval_set: A set from :func:`read_eval_set` (checked).
        settings: Resolved settings (default: loaded).
        store_path: Results database (default: the home's).
        console: Progress bars and the judge line go there (``None``: none).
        on_done: Called after each run (a script writes its result file as it goes).
    """
    settings = settings or load_settings().settings
    results = []
    for number, run in enumerate(eval_set.runs, start=1):
        if console is not None:
            console.print(f"[{number}/{len(eval_set.runs)}] {run.benchmark} · {run.system} · "
                          f"{run.model or settings.model}", markup=False, highlight=False)
        summary = await run_evaluation(
            run.benchmark, system=run.system, model=run.model, judge=run.judge,
            templates=list(run.templates) if run.templates is not None else None,
            limit=run.limit, scorers=list(run.scorers) if run.scorers is not None else None,
            options=run.options, benchmark_options=run.benchmark_options,
            concurrency=run.concurrency, max_consecutive_failures=run.max_consecutive_failures,
            label=_label(run), settings=settings, store_path=store_path,
            cache=None if run.cache is None else (settings.cache and run.cache),
            console=console)
        with ResultsStore(store_path or default_results_path(settings)) as store:
            stored = store.load_run(summary.info.run_id)
        # This call's work set, not the stored run's (widened by earlier, larger calls).
        items = work_set_items(
            stored, sample_ids=summary.sample_ids,
            templates=list(dict.fromkeys(m.template for m in summary.means)),
            scorers=list(dict.fromkeys(m.scorer for m in summary.means)))
        result = EvalSetResult(run, summary, tuple(summarize(items, ("scorer", "template"))))
        results.append(result)
        if on_done is not None:
            on_done(result)
    return results


def summary_rows(results: Sequence[EvalSetResult]) -> list[dict[str, Any]]:
    """One row per run x scorer x template: the summary table of ``eval-set run``."""
    rows = []
    for result in results:
        info = result.summary.info
        failed: dict[tuple[str | None, str | None], int] = {
            (m.template, m.scorer): m.n_failed for m in result.summary.means}
        for group in result.groups:
            rows.append({
                "run_id": info.run_id, "benchmark": info.benchmark, "system": info.system,
                "model": info.model, "label": info.label, "meta": dict(result.planned.meta),
                "scorer": group.get("scorer"), "template": group.get("template"),
                "n": group.n, "n_failed": failed.get((group.get("template"), group.get("scorer")),
                                                     0),
                "mean": group.mean,
                "ci": None if group.ci is None else [group.ci.low, group.ci.high],
            })
    return rows
