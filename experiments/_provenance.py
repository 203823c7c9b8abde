"""Where a figure comes from: the header every result file under ``experiments/results/`` has.

A figure in the README is only as good as what it rests on, so every script writes the same
keys beside its numbers: the command that measured it, the commit (and whether ``src/`` had
uncommitted changes), the machine, the date, and the data it rests on — how much of it is
real, constructed (real text edited by a rule) or synthetic (generated), whether the method
was evaluated in or out of sample, and whether the figure is measured or projected.

``write_result`` writes to a temporary file and renames it, so a crash never leaves a
half-written result behind. It refuses to write from a dirty tree (uncommitted changes under
``src/`` or ``experiments/``, the code and the inputs a figure rests on; the result folders
themselves excepted), because such a figure names a commit that did not produce it. Every
script accepts ``--allow-dirty`` to write one anyway: this module takes the flag off
``sys.argv`` when it is imported (so no script's own parser has to know it), and the file then
says ``"allow_dirty": true``, which ``experiments/figures.py`` marks in every table that cites
it. A re-report (``--report-only`` or ``--resume``) keeps the command that generated the
outputs, read from the file it replaces, under ``generated_by``, beside its own ``command``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshwiki.errors import FreshwikiError

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
KINDS = ("real", "constructed", "synthetic")
ALLOW_DIRTY_FLAG = "--allow-dirty"
REPORT_FLAGS = ("--report-only", "--resume")
"""Flags that make a script re-report outputs an earlier command generated."""
WATCHED = ("src", "experiments")
"""What a figure rests on: the library, the scripts and their inputs (``experiments/data``)."""
NOT_INPUTS = ("experiments/results", "experiments/runs")
"""Where scripts write: a figure being rewritten there is not a change of its inputs."""


def _take_flag(argv: list[str], flag: str) -> bool:
    """Remove every ``flag`` from ``argv`` in place; whether there was one."""
    found = flag in argv
    argv[:] = [arg for arg in argv if arg != flag]
    return found


ARGV = list(sys.argv)
"""The command line as typed, ``--allow-dirty`` included (the command recorded in the file)."""
ALLOW_DIRTY = _take_flag(sys.argv, ALLOW_DIRTY_FLAG)


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError):
        pass
    return None


def machine() -> dict[str, Any]:
    """Cores, memory, CPU model, Python: enough to tell two machines' figures apart."""
    return {"cores": os.cpu_count(), "memory_gib": _memory_gib(), "cpu": _cpu_model(),
            "python": platform.python_version(), "platform": platform.platform()}


def data_provenance(shares: Mapping[str, float], *, sample: str, figure: str = "measured",
                    sources: str = "", **extra: Any) -> dict[str, Any]:
    """The ``data`` block: shares of real / constructed / synthetic data and the protocol.

    Args:
        shares: Share of the evaluated items per kind (keys from ``KINDS``; summing to 1).
        sample: ``"out of sample"``, ``"in sample"`` or ``"n/a"`` (no trained or tuned part),
            with a few words on why when it is not obvious.
        figure: ``"measured"`` or ``"projected"`` (and how it was projected).
        sources: Where the data comes from (paths under ``../shared/data`` and licences).
        extra: Anything else worth keeping (counts, seeds).

    Raises:
        ValueError: unknown kinds or shares that do not sum to 1.
    """
    unknown = set(shares) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown data kinds {sorted(unknown)}; use {KINDS}")
    if abs(sum(shares.values()) - 1.0) > 1e-6:
        raise ValueError(f"data shares must sum to 1, got {dict(shares)}")
    return {"shares": {k: round(float(shares.get(k, 0.0)), 4) for k in KINDS},
            "sample": sample, "figure": figure, "sources": sources, **extra}


def uncommitted_paths(root: Path | None = None) -> list[str]:
    """Paths under ``src/`` or ``experiments/`` that differ from the commit (new files too).

    The result and run folders are left out: a script rewriting its own result file is not
    a change of what the figure rests on.
    """
    excludes = [f":(exclude){part}" for part in NOT_INPUTS]
    try:
        proc = subprocess.run(["git", "-C", str(root or ROOT), "status", "--porcelain", "--",
                               *WATCHED, *excludes],
                              capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return [line[3:] for line in proc.stdout.splitlines() if line.strip()]


def header(*, data: Mapping[str, Any], command: str | None = None) -> dict[str, Any]:
    """The keys every result file starts with."""
    dirty = uncommitted_paths()
    return {
        "command": command or shlex.join(["python", *ARGV]),
        "commit": _git("rev-parse", "HEAD"),
        "src_uncommitted_changes": bool(dirty),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "data": dict(data),
    }


def is_report_only(command: str) -> bool:
    """Whether ``command`` re-reports outputs instead of generating them all itself."""
    return any(flag in command.split() for flag in REPORT_FLAGS)


def carried_generated_by(previous: Path, command: str) -> dict[str, Any] | None:
    """The generating command a re-report keeps: from the file it is about to replace.

    A file that already carries ``generated_by`` passes it on; one written by a generating
    command is itself the generation. A fresh run (no report flag) generates its own outputs
    and needs no such key.
    """
    if not is_report_only(command) or not previous.is_file():
        return None
    try:
        before = json.loads(previous.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(before, dict):
        return None
    if isinstance(before.get("generated_by"), dict):
        return dict(before["generated_by"])
    old = before.get("command")
    if isinstance(old, str) and old and not is_report_only(old):
        return {"command": old, "commit": before.get("commit", ""),
                "date": before.get("date", "")}
    return None


def write_result(path: Path, payload: Mapping[str, Any], *, data: Mapping[str, Any],
                 command: str | None = None, allow_dirty: bool | None = None,
                 generated_by: Mapping[str, Any] | None = None) -> Path:
    """Write ``header(...) | payload`` as JSON to ``path`` atomically; returns the path.

    Args:
        path: The result file.
        payload: The script's figures.
        data: The ``data`` block (``data_provenance``).
        command: The command to record, when not the script's own command line.
        allow_dirty: Write even from a dirty tree; ``None`` reads ``--allow-dirty`` from the
            command line.
        generated_by: The command that generated the outputs, when the script knows it
            better than the file it replaces does.

    Raises:
        FreshwikiError: the tree has uncommitted changes under ``src/`` or ``experiments/``
            and ``--allow-dirty`` was not given.
        ValueError: the payload has a ``data`` key.
    """
    if "data" in payload:
        raise ValueError("the payload's 'data' key would hide the provenance block; rename it")
    allowed = ALLOW_DIRTY if allow_dirty is None else allow_dirty
    dirty = uncommitted_paths()
    if dirty and not allowed:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise FreshwikiError(
            f"refusing to write {path}: the tree has uncommitted changes ({shown}), so the "
            f"commit it would record did not produce this figure",
            hint="commit (or stash) them and run again, or add --allow-dirty to record the "
                 "figure marked as coming from uncommitted source")
    path.parent.mkdir(parents=True, exist_ok=True)
    head = header(data=data, command=command)
    if dirty:
        head["allow_dirty"] = True
        head["uncommitted_paths"] = dirty[:50]
    carried = dict(generated_by) if generated_by else carried_generated_by(path,
                                                                           head["command"])
    if carried:
        head["generated_by"] = carried
    body = {**head, **payload}
    if isinstance(payload.get("machine"), Mapping):  # the script's own machine facts join ours
        body["machine"] = {**head["machine"], **payload["machine"]}
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps(body, indent=2, ensure_ascii=False, default=str) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)
    return path
