"""What the simulated-chat judges' two hand checks share: sampling arguments, provenance.

The factuality and the conversationality check each have a ``sample`` sub-command with the
same arguments, and each writes a result with the same kind of provenance.

Both draw items from runs in seeded batches, excluding earlier batches, and both write a result
measured out of sample on real conversations, labelled by the project maintainers.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from _provenance import data_provenance, write_result

CONVERSATIONS = ("simulated conversations about the WikiChat topic lists "
                 "(../shared/data/wikipedia/topics)")
"""Where the checked items come from (for the result's provenance)."""
LABELLER = ("the project maintainers (helper sessions of an AI assistant, not independent "
            "human annotation)")


def check_parser(doc: str, noun: str, n: int, sample: Callable[[argparse.Namespace], int]
                 ) -> tuple[argparse.ArgumentParser, Any]:
    """The script's parser and its sub-command group, with ``sample`` already added."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    add_sample_command(sub, noun, n, sample)
    return parser, sub


def add_sample_command(sub: Any, noun: str, n: int,
                       func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    """The ``sample`` sub-command: run ids, ``--n``, ``--seed``, ``--exclude``, ``--out``."""
    p: argparse.ArgumentParser = sub.add_parser("sample", help=f"draw the {noun} to read "
                                                "(seeded)")
    p.add_argument("run_ids", nargs="+")
    p.add_argument("--n", type=int, default=n)
    p.add_argument("--seed", type=int, default=35)
    p.add_argument("--exclude", type=Path, action="append", default=[],
                   help=f"an earlier batch file whose {noun} are not drawn again (repeatable)")
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=func)
    return p


def write_check(out: Path, payload: Mapping[str, Any], *, items: str, sources: str,
                console: Console) -> None:
    """Write a check's result with its provenance: real data, out of sample, measured."""
    data = data_provenance(
        {"real": 1.0}, sample=f"out of sample (no part of the judge was fitted to these {items})",
        sources=f"{sources}; labels by {LABELLER}")
    write_result(out, payload, data=data)
    console.print(f"-> {out}")


def scored_items(store: Any, run_ids: Iterable[str], scorer: str
                 ) -> Iterator[tuple[str, str, Any, dict[str, Any]]]:
    """Each item ``scorer`` scored in ``run_ids``: (run id, system label, item, trace)."""
    for run_id in run_ids:
        run = store.load_run(run_id)
        system = run.info.label or f"{run.info.system}/{run.info.model}"
        traces = {(sample_id, template): trace
                  for sample_id, template, _, _, trace in store.traces(run.info.run_id)}
        for item in run.items:
            if item.scorer == scorer:
                yield run.info.run_id, system, item, traces.get((item.sample_id,
                                                                 item.template), {})


def read_rows(paths: Sequence[Path], problem: Callable[[dict[str, Any]], str | None]
              ) -> list[dict[str, Any]]:
    """The JSON rows of ``paths``; a row ``problem`` finds fault with stops at its line."""
    rows = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            fault = problem(row)
            if fault:
                raise SystemExit(f"{path}:{n}: {fault}")
            rows.append(row)
    return rows
