"""``--only LABEL`` for the scripts that tabulate an eval set's runs.

A long eval set is tabulated while one of its runs is still going in another process; the
scripts then run (resume) and read only the finished runs, named by their labels. One helper
so the figure scripts agree on what an unknown label does: stop, naming the labels there are.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from freshwiki.evaluation import EvalSet


def only_runs(eval_set: EvalSet, labels: Sequence[str] | None, path: Path,
              parser: argparse.ArgumentParser) -> EvalSet:
    """``eval_set`` with only the runs labelled ``labels`` (all of them when ``None``).

    Raises:
        SystemExit: through ``parser.error``, for a label no run of ``path`` has.
    """
    if not labels:
        return eval_set
    known = {planned.label for planned in eval_set.runs}
    unknown = sorted(set(labels) - known)
    if unknown:
        parser.error(f"--only {', '.join(unknown)}: no run of {path} has that label (its "
                     f"labels: {', '.join(sorted(str(x) for x in known))})")
    return dataclasses.replace(eval_set, runs=tuple(
        planned for planned in eval_set.runs if planned.label in labels))
