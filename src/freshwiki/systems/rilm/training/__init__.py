"""Training RiLM's certainty gate from the rows of a finished retrieving run.

A subpackage the ``rilm`` system never imports: the system only loads a trained gate, so the
run ids of rilm runs (which fingerprint the code the system imports) do not depend on how
gates are trained.
"""

from freshwiki.systems.rilm.training._pairs import (
    HIT_SCORER,
    LABELS,
    UPDATE_TYPES,
    Example,
    GateTraining,
    GateTrainingError,
    PairRow,
    PromptFor,
    TrainingSet,
    collect_examples,
    example_features,
    label_for,
    pair_rows,
    train_gate_from_rows,
)

__all__ = [
    "HIT_SCORER",
    "LABELS",
    "UPDATE_TYPES",
    "Example",
    "GateTraining",
    "GateTrainingError",
    "PairRow",
    "PromptFor",
    "TrainingSet",
    "collect_examples",
    "example_features",
    "label_for",
    "pair_rows",
    "train_gate_from_rows",
]
