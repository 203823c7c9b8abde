"""What differs between two runs' identities: the answer to "why is this a new run?".

Two runs of "the same command" get different ids when anything in their identity differs
(:func:`~freshwiki.evaluation._runner.run_identity`): data, options, weights, judge, or a
module or prompt template. Comparing the stored configurations key by key, down to single
modules and template files, names the cause instead of leaving the user to compare two
JSON blobs by eye.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from freshwiki.evaluation._types import RunInfo

_WORK_KEYS = frozenset({"templates", "scorers", "limit", "breakdowns", "model_spec",
                        "judge_spec", "data_location"})
"""Config keys that describe the work set, how the user spelled a model or where the data
was read from (``data_location``: paths, which are never identity), not identity."""


@dataclass(frozen=True)
class Difference:
    """One key whose value differs between two runs.

    Attributes:
        key: Dotted path into the run configuration (``code.freshwiki.systems.rag``,
            ``prompts.freshwiki/systems/prompts/rag_context.j2``, ``system_config.k``), or a
            run attribute (``code_version``, ``model_hashes.judge``).
        a: The value in the first run (``None``: absent).
        b: The value in the second run (``None``: absent).
        identity: Whether the key is part of the run identity (a difference there is why
            the two runs have different ids); work-set keys and provenance are not.
    """

    key: str
    a: Any
    b: Any
    identity: bool

    @property
    def kind(self) -> str:
        """``added`` (only in b), ``removed`` (only in a) or ``changed``."""
        if self.a is None:
            return "added"
        if self.b is None:
            return "removed"
        return "changed"


def _flatten(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for key in sorted(value, key=str):
            yield from _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def diff_runs(a: RunInfo, b: RunInfo) -> list[Difference]:
    """Every configuration key (flattened) whose value differs between runs ``a`` and ``b``.

    Identity keys come first (they explain the different ids), then work-set keys and
    provenance (code version, model hashes, label). Runs stored before code fingerprints
    existed show the whole ``code`` and ``prompts`` tables as added.
    """
    left = dict(_flatten(dict(a.config), ""))
    right = dict(_flatten(dict(b.config), ""))
    out: list[Difference] = []
    for key in sorted(set(left) | set(right)):
        va, vb = left.get(key), right.get(key)
        if va != vb:
            out.append(Difference(key, va, vb, key.split(".")[0] not in _WORK_KEYS))
    extra: dict[str, tuple[str | None, str | None]] = {
        "benchmark": (a.benchmark, b.benchmark), "system": (a.system, b.system),
        "label": (a.label, b.label), "code_version": (a.code_version, b.code_version)}
    for name in sorted(set(a.model_hashes) | set(b.model_hashes)):
        extra[f"model_hashes.{name}"] = (a.model_hashes.get(name), b.model_hashes.get(name))
    for key, (va, vb) in extra.items():
        if va != vb and key not in left and key not in right:
            out.append(Difference(key, va, vb, False))
    out.sort(key=lambda d: (not d.identity, d.key))
    return out
