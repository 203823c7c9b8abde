"""RiLM: a retrieval-interactive LM whose answers pass a certainty gate.

A classifier over the answering model's own features (hidden states of local models,
logprob summaries over HTTP) says whether an answer is ``reliable``, ``misleading`` or
``uncertain``; an answer the gate does not trust triggers a re-retrieval steered by the
answer, and the more trusted of the two answers is returned. The gate is trained on labels
a GrowOVER run of a retrieving system provides (``freshwiki growover train-gate``; see
:mod:`freshwiki.evaluation._gate_training`): an unchanged fact whose evidence was retrieved is
``reliable``, a changed fact whose evidence was missed ``misleading``, a new fact whose
evidence was missed ``uncertain``.

``freshwiki eval growover --system rilm --option gate=PATH`` runs it; see
:mod:`freshwiki.systems.rilm._system` for the flow and options, and
:mod:`freshwiki.systems.rilm._gate` for the gate file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError
from freshwiki.seams import System
from freshwiki.systems._options import SystemSetupError, read_options
from freshwiki.systems.rilm._gate import (
    CLASSES,
    MISLEADING,
    RELIABLE,
    UNCERTAIN,
    CertaintyGate,
    GateError,
    GateMismatchError,
    GateReport,
    train_gate,
)
from freshwiki.systems.rilm._system import (
    Gate,
    Pass,
    PromptBuilder,
    RiLMSystem,
    Searcher,
    SearcherFor,
    TextEncoder,
    load_gate_for,
    omega_for,
    rerank,
    retrieved_trace,
)

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM
    from freshwiki.seams import Task

DEFAULTS: Mapping[str, Any] = {
    "gate": "", "k": 5, "threshold": 0.5, "omega_scale": 1.0, "candidates": 0,
}


class GrowOverSearchers:
    """The snapshot index of a GrowOVER task's sample, each opened once (as ``ralm`` does).

    Args:
        settings: Where the embedding cache lives.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        from freshwiki.retrieval import SnapshotIndexes

        self._indexes = SnapshotIndexes(settings=settings)

    def __call__(self, task: Task) -> Searcher:
        """The index of ``task.sample``'s snapshot (``metadata["index"]``, GrowOVER's contract).

        Raises:
            SystemSetupError: the sample names no index, or it cannot be opened: every task of
                that snapshot would fail the same way.
        """
        path = task.sample.metadata.get("index")
        try:
            if not path:
                raise FreshwikiError(f"sample {task.sample.id} names no snapshot index",
                                     hint="only GrowOVER samples carry metadata['index'].")
            return self._indexes.get(str(path))
        except FreshwikiError as exc:
            raise SystemSetupError(
                f"system 'rilm': no snapshot index for sample {task.sample.id} ({exc.message})",
                hint="run rilm on the growover benchmark; rebuild the dataset's snapshot "
                "(`freshwiki growover build` resumes and re-indexes) if its index is gone.",
            ) from exc

    def close(self) -> None:
        """Close the indexes opened."""
        self._indexes.close()


def rilm_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    values = read_options("rilm", options, DEFAULTS)
    if not values["gate"]:
        raise SystemSetupError(
            "system 'rilm' needs a certainty gate",
            hint="train one on a finished GrowOVER run of a retrieving system of this model "
            "(`freshwiki growover train-gate RUN_ID --out gate.json`), then pass "
            "--option gate=gate.json.",
        )
    gate, gate_id = load_gate_for(llm, Path(values["gate"]).expanduser())
    searchers = GrowOverSearchers(settings)
    return RiLMSystem(
        llm, gate, searchers, k=values["k"], threshold=values["threshold"],
        omega_scale=values["omega_scale"], candidates=values["candidates"], gate_id=gate_id,
        close=searchers.close,
    )


__all__ = [
    "CLASSES",
    "DEFAULTS",
    "MISLEADING",
    "RELIABLE",
    "UNCERTAIN",
    "CertaintyGate",
    "Gate",
    "GateError",
    "GateMismatchError",
    "GateReport",
    "GrowOverSearchers",
    "Pass",
    "PromptBuilder",
    "RiLMSystem",
    "Searcher",
    "SearcherFor",
    "TextEncoder",
    "load_gate_for",
    "omega_for",
    "rerank",
    "retrieved_trace",
    "train_gate",
]
