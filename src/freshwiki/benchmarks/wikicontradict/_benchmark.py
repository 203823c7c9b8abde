"""The WikiContradict benchmark object the runner sees, and its registration."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.benchmarks.wikicontradict._data import (
    EXPECTED_QUESTIONS,
    DatasetError,
    load_wikicontradict,
)
from freshwiki.benchmarks.wikicontradict._judge import JudgeScorer
from freshwiki.benchmarks.wikicontradict._match import MatchScorer
from freshwiki.benchmarks.wikicontradict._revisions import (
    NO_REVISIONS,
    Revisions,
    RevisionsError,
    builtin_revisions,
    load_revisions,
    revised_samples,
)
from freshwiki.benchmarks.wikicontradict._templates import TEMPLATES, template_spec
from freshwiki.llm import Message
from freshwiki.prompting import render_prompt
from freshwiki.seams import Sample, Scorer, Task

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

DATASET_FILE = Path("wikicontradict") / "wikicontradict.json"
"""Where the dataset sits inside ``Settings.data_dir``."""

MAX_NEW_TOKENS = 250
"""The paper's generation cap (greedy decoding)."""


@dataclass(frozen=True)
class Selection:
    """A reproducible subset of the questions: ``size`` of them, chosen by ``seed``.

    ``--limit`` takes the first questions in file order, which cluster on the file's first
    items; a validation or a cheap run wants questions from across the file instead, and the
    same ones every time and on every machine.
    """

    size: int
    seed: int = 0


def select_questions(samples: Sequence[Sample], selection: Selection) -> tuple[Sample, ...]:
    """The ``selection.size`` questions of ``samples`` that ``selection.seed`` picks, in file order.

    Each question is ranked by the SHA-256 of ``"<seed>:<sample id>"`` and the lowest ranks are
    taken. Why a hash and not :mod:`random`: the choice depends on nothing but the seed and the
    ids (not on the Python version or the file's length), and a larger size with the same seed
    keeps every question of a smaller one, so a selection can be widened and its run resumed.

    Raises:
        DatasetError: the size is below 1 or above the number of questions.
    """
    if not 1 <= selection.size <= len(samples):
        raise DatasetError(
            f"benchmark option sample={selection.size} is outside 1..{len(samples)}, the "
            "number of questions loaded",
            hint=f"choose a sample size from 1 to {len(samples)}.",
        )

    def rank(sample: Sample) -> str:
        return hashlib.sha256(f"{selection.seed}:{sample.id}".encode()).hexdigest()

    chosen = {s.id for s in sorted(samples, key=rank)[: selection.size]}
    return tuple(s for s in samples if s.id in chosen)


class WikiContradict:
    """WikiContradict (Hou et al., 2024): 253 questions over contradictory Wikipedia passages.

    Templates 5.3 and 5.4 show conflict-free revisions of the passages, which exist only for
    some questions (``revisions``); :meth:`applies` tells the runner which, so a run of those
    templates covers exactly the revised questions among the samples it takes.

    Attributes:
        path: The dataset file the samples came from.
        sha256: Its content hash, so a run records exactly which data it used.
        revisions: The passage revisions for 5.3 / 5.4 (default: the shipped ones;
            :data:`NO_REVISIONS`: none, so those templates apply to no sample).
    """

    name = "wikicontradict"
    templates: tuple[str, ...] = tuple(TEMPLATES)
    default_templates: tuple[str, ...] = ("4", "5")
    """The two-passage pair the paper's headline result contrasts: the same context without and
    with the warning that it may contradict itself. Templates 1-3 are controls (what the model
    knows, and that it can read each passage alone) and 5.1/5.2 are ablations; all cost the same
    per call, so running the two that answer the benchmark's question halves the bill."""
    breakdowns: tuple[str, ...] = ("contradiction", "scope", "question_type")

    def __init__(self, path: Path, samples: Sequence[Sample],
                 revisions: Revisions | None = None, *,
                 selection: Selection | None = None) -> None:
        self.path = path
        self.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        self.selection = selection
        loaded = tuple(samples)
        self._samples = loaded if selection is None else select_questions(loaded, selection)
        self.revisions = builtin_revisions() if revisions is None else revisions
        # Revisions are checked against every loaded question (they name questions of the
        # whole file), then kept for the selected ones.
        kept = {s.id for s in self._samples}
        self._revised = {sample_id: revised
                         for sample_id, revised in revised_samples(loaded, self.revisions).items()
                         if sample_id in kept}

    @classmethod
    def from_file(cls, path: Path, *, expected: int | None = EXPECTED_QUESTIONS,
                  revisions: Revisions | None = None,
                  selection: Selection | None = None) -> WikiContradict:
        """Load and validate the dataset at ``path`` (see :func:`load_wikicontradict`)."""
        return cls(path, load_wikicontradict(path, expected=expected), revisions,
                   selection=selection)

    location_options: tuple[str, ...] = ("path", "revisions")
    """Options that only say where data lives (``revisions=none`` shows in the revisions'
    content: no hash, no questions); content hashes identify the data instead."""

    def describe(self) -> Mapping[str, Any]:
        """What identifies the data, for the run's identity: content hashes, never paths.

        The same files in another checkout or on another machine are the same data, so
        neither the dataset's path nor the revisions file's is here (:meth:`data_location`
        has them). The selection is named only when there is one.
        """
        described: dict[str, Any] = {
            "sha256": self.sha256, "samples": len(self._samples),
            "revisions": {"sha256": self.revisions.sha256, "questions": len(self._revised)},
        }
        if self.selection is not None:
            described["selection"] = {"sample": self.selection.size,
                                      "seed": self.selection.seed}
        return described

    def data_location(self) -> Mapping[str, str]:
        """Where the data was read from: shown with a run, not part of its identity."""
        return {"path": str(self.path), "revisions": self.revisions.source}

    def applies(self, sample: Sample, template: str) -> bool:
        """Whether ``template`` is asked of ``sample``.

        The revised templates (5.3, 5.4) are asked only of questions whose passages have a
        revision; every other template is asked of every question.
        """
        return not template_spec(template).revised or sample.id in self._revised

    def samples(self) -> Iterator[Sample]:
        """Every question in file order (item index, then question number)."""
        return iter(self._samples)

    def render(self, sample: Sample, template: str) -> Task:
        """The paper's template ``template`` filled with ``sample``.

        Raises:
            UnknownTemplateError: ``template`` is not one of :attr:`templates`.
        """
        spec = template_spec(template)
        if spec.revised:
            if sample.id not in self._revised:
                raise RevisionsError(
                    f"template {template} shows revised passages, and sample {sample.id} has "
                    "no revision",
                    hint="run it only on revised questions (the runner does, by applies()), "
                    "or add a revision for this item to the revisions file.",
                )
            sample = self._revised[sample.id]
        prompt = render_prompt(
            f"benchmarks/wikicontradict/templates/{spec.file}",
            question=sample.input,
            passages=[sample.documents[i] for i in spec.passages],
        )
        return Task(
            sample=sample,
            template=template,
            messages=(Message.user(prompt),),
            query=sample.input,
            max_tokens=MAX_NEW_TOKENS,
            temperature=0.0,
        )

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """The deterministic matcher always; the LLM judge when a judge model is given."""
        found: list[Scorer] = [MatchScorer()]
        if judge is not None:
            found.append(JudgeScorer(judge))
        return found


def wikicontradict_benchmark(settings: Settings, options: Mapping[str, Any]) -> WikiContradict:
    """Build from option ``path``, by default the dataset in ``Settings.data_dir``.

    Option ``expected`` (an int, or ``none``) overrides the 253-question check, for a
    deliberately cut-down copy of the file. Option ``revisions`` names a revisions file for
    templates 5.3 / 5.4 (default: the shipped one; ``none``: no revisions). Options ``sample``
    (a number of questions) and ``seed`` (an int, default 0) keep a reproducible subset of the
    questions from across the file (:func:`select_questions`).
    """
    raw_path = options.get("path")
    path = Path(str(raw_path)).expanduser() if raw_path else settings.data_dir / DATASET_FILE
    expected_opt = options.get("expected", EXPECTED_QUESTIONS)
    if expected_opt is None or str(expected_opt).lower() == "none":
        expected: int | None = None
    else:
        try:
            expected = int(expected_opt)
        except ValueError:
            raise DatasetError(
                f"benchmark option expected={expected_opt!r} is not a number",
                hint="give the number of questions the file holds, or 'none'.",
            ) from None
    raw_revisions = options.get("revisions")
    revisions: Revisions | None = None
    if raw_revisions is not None and str(raw_revisions).lower() == "none":
        revisions = NO_REVISIONS
    elif raw_revisions is not None:
        revisions = load_revisions(Path(str(raw_revisions)).expanduser())
    selection: Selection | None = None
    if "sample" in options:
        selection = Selection(_int_option(options, "sample"),
                              _int_option(options, "seed") if "seed" in options else 0)
    elif "seed" in options:
        raise DatasetError(
            "benchmark option seed= chooses questions only together with sample=N",
            hint="add --benchmark-option sample=N (the number of questions to keep).",
        )
    return WikiContradict.from_file(path, expected=expected, revisions=revisions,
                                    selection=selection)


def _int_option(options: Mapping[str, Any], key: str) -> int:
    value = options[key]
    try:
        return int(str(value))
    except ValueError:
        raise DatasetError(
            f"benchmark option {key}={value!r} is not a whole number",
            hint=f"give {key} as an integer, e.g. --benchmark-option {key}=20.",
        ) from None
