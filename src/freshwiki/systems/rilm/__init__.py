"""RiLM and RaLM-best: GrowOVER's certainty gate over (query, document) prompts (§4).

A classifier over the answering model's last hidden state after a prompt holding the question
and one document says whether an answer from that document would be ``reliable``,
``misleading`` or ``uncertain``. ``ralm-best`` answers from the document the classifier rates
most reliable; ``rilm`` adopts that answer only when the classifier's verdict is ``reliable``,
else re-retrieves with the answer weighted by its reliability and keeps the more reliable of
the two answers. The gate is trained on the labels a GrowOVER run of ``ralm`` provides, on the
first update month only (``freshwiki growover train-gate``; see
:mod:`freshwiki.systems.rilm.training`): a (query, document) pair of an unchanged fact
whose document holds the evidence is ``reliable``, of a changed fact whose document does not
``misleading``, of a new fact whose document does not ``uncertain``. QA and dialogue each have
their own gate, as in the paper.

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
    ARR_MODES,
    BEST_NAME,
    METHODS,
    NAME,
    TAU,
    Candidate,
    Gate,
    GateFor,
    Pass,
    PromptBuilder,
    RiLMSystem,
    Searcher,
    SearcherFor,
    TextEncoder,
    arr_vector,
    arr_vectors,
    load_gate_for,
    retrieved_trace,
)

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM
    from freshwiki.seams import Task

DEFAULTS: Mapping[str, Any] = {
    "gate": "", "dialogue_gate": "", "k": 3, "tau": TAU, "method": "dense", "arr": "paper",
}
BEST_DEFAULTS: Mapping[str, Any] = {"gate": "", "dialogue_gate": "", "k": 3, "method": "dense"}


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


class GatesByKind:
    """The QA gate for QA samples, the dialogue gate for dialogue turns (trained apart).

    Args:
        system: The system's name, for messages.
        gates: Gate per sample kind (``qa``, ``dialogue``); a kind may be missing.
    """

    def __init__(self, system: str, gates: Mapping[str, CertaintyGate]) -> None:
        self.system = system
        self.gates = dict(gates)

    def __call__(self, task: Task) -> Gate:
        """The gate of ``task.sample``'s kind (``metadata["kind"]``, QA when absent).

        Raises:
            SystemSetupError: no gate was given for that kind.
        """
        kind = str(task.sample.metadata.get("kind") or "qa")
        gate = self.gates.get(kind)
        if gate is None:
            option = "gate" if kind == "qa" else f"{kind}_gate"
            raise SystemSetupError(
                f"system {self.system!r} has no certainty gate for {kind} samples "
                f"({task.sample.id})",
                hint=f"train one on a {kind} run (`freshwiki growover train-gate RUN_ID --out "
                f"PATH`) and pass --option {option}=PATH.")
        return gate


def _gates(system: str, llm: LLM, values: Mapping[str, Any]) -> tuple[GatesByKind, str]:
    if not values["gate"] and not values["dialogue_gate"]:
        raise SystemSetupError(
            f"system {system!r} needs a certainty gate",
            hint="train one on the first update month of a GrowOVER run of ralm with this "
            "model (`freshwiki growover train-gate RUN_ID --out gate.json`), then pass "
            "--option gate=gate.json (dialogue: --option dialogue_gate=PATH).",
        )
    gates: dict[str, CertaintyGate] = {}
    ids = []
    for kind, option in (("qa", "gate"), ("dialogue", "dialogue_gate")):
        if values[option]:
            gate, gate_id = load_gate_for(llm, Path(values[option]).expanduser(),
                                          system=system)
            gates[kind] = gate
            ids.append(gate_id if kind == "qa" else f"dialogue:{gate_id}")
    return GatesByKind(system, gates), ",".join(ids)


def rilm_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``rilm``: decision gate, adaptive re-retrieval and final pick (GrowOVER §4)."""
    values = read_options(NAME, options, DEFAULTS)
    gates, gate_id = _gates(NAME, llm, values)
    searchers = GrowOverSearchers(settings)
    return RiLMSystem(llm, gates, searchers, k=values["k"], tau=values["tau"],
                      method=values["method"], arr=str(values["arr"]), gate_id=gate_id,
                      close=searchers.close)


def ralm_best_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``ralm-best``: answer from the document the certainty classifier rates most reliable."""
    values = read_options(BEST_NAME, options, BEST_DEFAULTS)
    gates, gate_id = _gates(BEST_NAME, llm, values)
    searchers = GrowOverSearchers(settings)
    return RiLMSystem(llm, gates, searchers, k=values["k"], method=values["method"],
                      re_retrieve=False, name=BEST_NAME, gate_id=gate_id,
                      close=searchers.close)


__all__ = [
    "ARR_MODES",
    "BEST_DEFAULTS",
    "BEST_NAME",
    "CLASSES",
    "DEFAULTS",
    "METHODS",
    "MISLEADING",
    "NAME",
    "RELIABLE",
    "TAU",
    "UNCERTAIN",
    "Candidate",
    "CertaintyGate",
    "Gate",
    "GateError",
    "GateFor",
    "GateMismatchError",
    "GateReport",
    "GatesByKind",
    "GrowOverSearchers",
    "Pass",
    "PromptBuilder",
    "RiLMSystem",
    "Searcher",
    "SearcherFor",
    "TextEncoder",
    "arr_vector",
    "arr_vectors",
    "load_gate_for",
    "ralm_best_system",
    "retrieved_trace",
    "rilm_system",
    "train_gate",
]
