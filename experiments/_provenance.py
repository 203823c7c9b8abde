"""Where a figure comes from: the header every result file under ``experiments/results/`` has.

A figure in the README is only as good as what it rests on, so every script writes the same
keys beside its numbers: the command that measured it, the commit (and whether ``src/`` had
uncommitted changes), the machine, the date, and the data it rests on — how much of it is
real, constructed (real text edited by a rule) or synthetic (generated), whether the method
was evaluated in or out of sample, and whether the figure is measured or projected.

``write_result`` writes to a temporary file and renames it, so a crash never leaves a
half-written result behind.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
KINDS = ("real", "constructed", "synthetic")


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


def header(*, data: Mapping[str, Any], command: str | None = None) -> dict[str, Any]:
    """The keys every result file starts with."""
    dirty = _git("status", "--porcelain", "--", "src")
    return {
        "command": command or " ".join(["python", *sys.argv]),
        "commit": _git("rev-parse", "HEAD"),
        "src_uncommitted_changes": bool(dirty),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "data": dict(data),
    }


def write_result(path: Path, payload: Mapping[str, Any], *, data: Mapping[str, Any],
                 command: str | None = None) -> Path:
    """Write ``header(...) | payload`` as JSON to ``path`` atomically; returns the path."""
    if "data" in payload:
        raise ValueError("the payload's 'data' key would hide the provenance block; rename it")
    path.parent.mkdir(parents=True, exist_ok=True)
    head = header(data=data, command=command)
    body = {**head, **payload}
    if isinstance(payload.get("machine"), Mapping):  # the script's own machine facts join ours
        body["machine"] = {**head["machine"], **payload["machine"]}
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps(body, indent=2, ensure_ascii=False, default=str) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)
    return path
