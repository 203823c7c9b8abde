"""The two HelloFresh benchmarks the runner sees, their scorer, and their registration."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from freshwiki.benchmarks._files import file_sha256
from freshwiki.benchmarks.hellofresh._data import (
    DatasetError,
    Item,
    attach_controls,
    load_edit_items,
    load_note_items,
)
from freshwiki.benchmarks.hellofresh._parse import parse_answer
from freshwiki.benchmarks.hellofresh._prompts import (
    OUR_TEMPLATES,
    PAPER_TEMPLATES,
    paper_instruction,
)
from freshwiki.errors import FreshwikiError
from freshwiki.llm import Message
from freshwiki.prompting import render_prompt
from freshwiki.seams import Output, Sample, Score, Scorer, Task

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

TEMPLATES: Final[tuple[str, ...]] = (*PAPER_TEMPLATES, *OUR_TEMPLATES)
"""Every phrasing: the paper's five (the default) and our older five (``p1``..``p5``)."""

MAX_NEW_TOKENS: Final = 15
"""The paper's cap (§5.2): enough for "Yes", "No, because" or the opening of a refusal."""

SCORER: Final = "hellofresh-correct"

NOTES_FILE: Final = Path("notes") / "balanced-month-seed0.jsonl"
"""The default notes dataset, under ``Settings.home`` (what ``notes build`` writes)."""
EDITS_FILE: Final = Path("edits") / "balanced-week-seed0.jsonl"
"""The default edits dataset, under ``Settings.home`` (what ``edits build`` writes)."""


class UnknownTemplateError(FreshwikiError):
    """A template id HelloFresh does not define."""


class CorrectScorer:
    """Scorer ``hellofresh-correct``: the parsed answer, and whether it is the gold one.

    ``label`` is the parsed answer (``yes``/``no``/``none``/``blocked``) so the analysis can
    rebuild precision, recall and the majority vote from stored results; ``value`` is 1.0
    exactly when it equals the gold answer, so the report's mean is the accuracy.
    """

    name = SCORER

    async def score(self, task: Task, output: Output) -> Score:
        """Parse ``output`` and compare with the sample's gold answer.

        Raises:
            FreshwikiError: the sample carries no yes/no gold answer (not a HelloFresh sample).
        """
        gold = task.sample.metadata.get("label")
        if gold not in ("yes", "no"):
            raise FreshwikiError(
                f"sample {task.sample.id} has no yes/no gold label (metadata label={gold!r})",
                hint="use the hellofresh-correct scorer with the hellofresh benchmarks only.",
            )
        parsed = parse_answer(output.text)
        return Score(
            value=1.0 if parsed == gold else 0.0,
            label=parsed,
            explanation=f"parsed {parsed!r}, gold {gold!r}",
            data={"parsed": parsed, "gold": gold},
        )


class HelloFresh:
    """Is the post misleading and the note helpful / is the edit correct? Asked five ways.

    The default phrasings are the paper's (:data:`PAPER_TEMPLATES`); ``p1``..``p5`` are our
    older ones, which ask for a prediction of the community's verdict instead.

    Attributes:
        name: ``hellofresh-notes`` or ``hellofresh-edits``.
        kind: ``notes`` or ``edits`` (the template folder).
        path: The dataset file.
        sha256: Its content hash.
    """

    templates: tuple[str, ...] = TEMPLATES
    default_templates: tuple[str, ...] = PAPER_TEMPLATES
    """The paper's five: the majority vote and the deployment simulation need every phrasing."""

    def __init__(self, name: str, kind: str, path: Path, items: Sequence[Item], *,
                 control_seed: int = 0, options: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.kind = kind
        self.path = path
        self.sha256 = file_sha256(path)
        self.control_seed = control_seed
        self._options = dict(options or {})
        self._items = {item.id: item for item in items}
        self._samples = tuple(attach_controls(items, control_seed))
        self.breakdowns: tuple[str, ...] = (
            ("period", "vote_quartile") if kind == "notes" else ("period", "user_type"))

    location_options: tuple[str, ...] = ("path",)
    """Options that only say where the data lives; its content hash identifies it instead."""

    def describe(self) -> Mapping[str, Any]:
        """What identifies the data (and the control pairing), for the run's identity.

        The file is named by its content hash, never its path, so the same file elsewhere (a
        second checkout, another machine) is the same data; the path is in
        :meth:`data_location`.
        """
        return {"sha256": self.sha256, "samples": len(self._samples),
                "control_seed": self.control_seed, **self._options}

    def data_location(self) -> Mapping[str, str]:
        """Where the data was read from: shown with a run, not part of its identity."""
        return {"path": str(self.path)}

    def samples(self) -> Iterator[Sample]:
        """Every item in file order (the dataset builders write them by time)."""
        return iter(self._samples)

    def render(self, sample: Sample, template: str) -> Task:
        """``sample`` asked with phrasing ``template``; ``query`` is what a search starts from.

        Raises:
            UnknownTemplateError: ``template`` is neither one of the paper's nor p1..p5.
            DatasetError: ``sample`` is not one of this benchmark's.
        """
        if template not in TEMPLATES:
            raise UnknownTemplateError(f"{self.name} has no template {template!r}",
                                       hint=f"choose among: {', '.join(TEMPLATES)}.")
        item = self._items.get(sample.id)
        if item is None:
            raise DatasetError(f"sample {sample.id!r} is not in {self.path}",
                               hint=f"render only samples that {self.name} yielded.")
        if template in PAPER_TEMPLATES:
            instruction = paper_instruction(self.kind, template).text
            prompt = render_prompt(f"benchmarks/hellofresh/templates/{self.kind}/paper.j2",
                                   **item.fields, instruction=instruction)
        else:
            prompt = render_prompt(f"benchmarks/hellofresh/templates/{self.kind}/{template}.j2",
                                   **item.fields)
        return Task(sample=sample, template=template, messages=(Message.user(prompt),),
                    query=item.subject, max_tokens=MAX_NEW_TOKENS, temperature=0.0)

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """The deterministic parser-scorer; no judge is needed."""
        del judge
        return [CorrectScorer()]


def _int_option(options: Mapping[str, Any], key: str, default: int) -> int:
    raw = options.get(key, default)
    try:
        return int(str(raw))
    except ValueError:
        raise DatasetError(f"benchmark option {key}={raw!r} is not a whole number",
                           hint=f"pass e.g. --benchmark-option {key}={default}.") from None


def _path(settings: Settings, options: Mapping[str, Any], default: Path) -> Path:
    raw = options.get("path")
    return Path(str(raw)).expanduser() if raw else settings.home / default


def _check_options(name: str, options: Mapping[str, Any], known: Sequence[str]) -> None:
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise DatasetError(f"benchmark {name!r} has no option {', '.join(map(repr, unknown))}",
                           hint=f"its options: {', '.join(known)}.")


def notes_factory(settings: Settings, options: Mapping[str, Any]) -> HelloFresh:
    """Build ``hellofresh-notes`` from its options.

    Options: ``path`` (default ``HOME/notes/balanced-month-seed0.jsonl``), ``period``
    (``month``, ``week`` or ``year``; default ``month``), ``control_seed`` (default 0).
    """
    _check_options("hellofresh-notes", options, ("path", "period", "control_seed"))
    period = str(options.get("period", "month"))
    path = _path(settings, options, NOTES_FILE)
    return HelloFresh("hellofresh-notes", "notes", path, load_note_items(path, period),
                      control_seed=_int_option(options, "control_seed", 0),
                      options={"period": period})


def edits_factory(settings: Settings, options: Mapping[str, Any]) -> HelloFresh:
    """Build ``hellofresh-edits`` from its options.

    Options: ``path`` (default ``HOME/edits/balanced-week-seed0.jsonl``), ``control_seed``
    (default 0). The period is the one the balanced file was built with.
    """
    _check_options("hellofresh-edits", options, ("path", "control_seed"))
    path = _path(settings, options, EDITS_FILE)
    return HelloFresh("hellofresh-edits", "edits", path, load_edit_items(path),
                      control_seed=_int_option(options, "control_seed", 0))
