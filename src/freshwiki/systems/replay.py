"""The replay system: each task is answered with a recorded text instead of a model's call.

Why it exists: a judge (or any scorer) is validated by scoring answers that people have
labelled and comparing its verdicts with the labels (``freshwiki runs agree``). Those answers
were written by hand, or produced long ago by runs whose store is on another machine, so no
stored run holds them. Replaying them through the runner makes them an ordinary run: rendered
by the benchmark exactly as a run renders them, scored by the benchmark's scorers with the
chosen judge, stored, resumable and exportable, and then ``runs agree RUN --labels FILE``
measures the judge on them. Nothing is re-implemented beside the runner, so the judge's
figures are the figures of the code a real run uses.

The answers are a JSONL file (option ``answers=PATH``), one a line; the WikiContradict label
files (``validation/real_labels.jsonl``, ``human_labels.jsonl``) already are one::

    {"sample_id": "wc-009-q1", "template": "5", "response": "the recorded answer",
     "model": "local:qwen2.5-coder-1.5b", "system": "vanilla", "run_id": "9a3e67cc04a0"}

``sample_id``, ``template`` and ``response`` are required; ``model``, ``system`` and
``run_id`` (what produced the answer) are optional and are stored in the output's trace
(``trace["producer"]``) and, for ``model``, as the output's model. Other fields (a label, a
reason) are ignored: the system never sees a label.

**One answer per (sample, template).** A run holds one output per sample and template, so
answers of several producers to the same prompt cannot share a run. Option
``filter=FIELD=VALUE[,FIELD=VALUE...]`` keeps only the lines whose fields have those values
(e.g. ``filter=run_id=9a3e67cc04a0`` or ``filter=model=local:qwen2.5-coder-0.5b,system=rag``),
so each producer's answers become one run. Two kept lines for the same pair are an error
unless their texts are the same.

**Pairs without an answer are skipped, not failed.** The system tells the runner which
(sample, template) pairs it can answer (:meth:`ReplaySystem.applies`, the
:class:`~freshwiki.seams.ScopedTemplates` protocol), and the runner leaves the others out of
the work set: 40 hand-written answers spread over 253 questions are a run of 40 items, not 40
answers and 466 failures (which would also trip the runner's systemic-failure stop). A task
asked of it directly for a pair it has no answer for raises :class:`NoRecordedAnswerError`,
which the runner would record as that item's failure.

**Identity by content.** :meth:`ReplaySystem.describe` holds the SHA-256 of the kept answers
(sample, template, text and producer fields, in a canonical order), never the file's path: the
same answers in another checkout or under another name are the same run, an edited answer is
a new one, and a changed label (ignored here) changes nothing. Where they were read from is
recorded beside the identity (:meth:`ReplaySystem.data_location`).

**The model is not called.** A run still names a model, and its identity enters the run id.
Give the judge's spec as both model and judge: one client serves both roles, and the run
needs no weights but the judge's (the producer's may not be installed where the answers are
replayed, and they decide nothing here). The producer is in the answers' content and traces;
to judge with the judge the runner would choose for a run of the producer, ask
``freshwiki.evaluation.default_judge(PRODUCER, settings)`` and pass its spec.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError
from freshwiki.seams import Output, Sample, System, Task
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

DEFAULTS: Mapping[str, Any] = {"answers": "", "filter": ""}

TEXT_FIELD = "response"
"""The field holding the recorded answer (the name the labels files of ``runs agree`` use)."""

PRODUCER_FIELDS: tuple[str, ...] = ("model", "system", "run_id")
"""Optional fields saying what produced an answer; copied into the output's trace."""


class NoRecordedAnswerError(FreshwikiError):
    """The replay system was asked a (sample, template) its answers file does not hold."""


@dataclass(frozen=True)
class RecordedAnswer:
    """One recorded answer.

    Attributes:
        sample_id: The benchmark sample it answers.
        template: The template it answers.
        text: The answer, replayed exactly.
        producer: The producer fields the line gave (:data:`PRODUCER_FIELDS`).
        line: Its line in the file (for messages only; not identity).
    """

    sample_id: str
    template: str
    text: str
    producer: Mapping[str, str]
    line: int


def parse_filter(spec: str) -> tuple[tuple[str, str], ...]:
    """``"FIELD=VALUE,FIELD=VALUE"`` → ((field, value), ...); ``""`` → no condition.

    Raises:
        SystemSetupError: a condition without ``=`` or with an empty field name.
    """
    conditions: list[tuple[str, str]] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        field, sep, value = part.partition("=")
        if not sep or not field.strip():
            raise SystemSetupError(
                f"system 'replay': filter condition {part!r} is not FIELD=VALUE",
                hint="e.g. --option filter=run_id=9a3e67cc04a0 or "
                "filter=model=local:qwen2.5-coder-0.5b,system=rag.")
        conditions.append((field.strip(), value.strip()))
    return tuple(conditions)


def read_answers(path: Path, conditions: tuple[tuple[str, str], ...] = ()
                 ) -> dict[tuple[str, str], RecordedAnswer]:
    """The answers of ``path`` whose fields meet every condition, by (sample id, template).

    Raises:
        SystemSetupError: the file is missing or unreadable, a line is not a JSON object with
            string ``sample_id``, ``template`` and ``response`` (naming file and line), two
            kept lines answer the same pair with different texts, or no line is kept.
    """
    if not path.is_file():
        raise SystemSetupError(f"system 'replay': no answers file {path}",
                               hint="give --option answers=PATH, a JSONL file of "
                               "{sample_id, template, response} lines.")
    kept: dict[tuple[str, str], RecordedAnswer] = {}
    lines = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        lines += 1
        try:
            data = json.loads(line)
        except ValueError:
            raise SystemSetupError(f"{path}:{number}: not JSON",
                                   hint="one JSON object a line.") from None
        if not isinstance(data, dict):
            raise SystemSetupError(f"{path}:{number}: not a JSON object",
                                   hint="one JSON object a line.")
        for name in ("sample_id", "template", TEXT_FIELD):
            if not isinstance(data.get(name), str):
                raise SystemSetupError(
                    f"{path}:{number}: {name} is missing or not a string",
                    hint=f"every line needs sample_id, template and {TEXT_FIELD}.")
        if any(str(data.get(field, "")) != value for field, value in conditions):
            continue
        producer = {f: data[f] for f in PRODUCER_FIELDS if isinstance(data.get(f), str)}
        answer = RecordedAnswer(data["sample_id"], data["template"], data[TEXT_FIELD],
                                producer, number)
        key = (answer.sample_id, answer.template)
        if key in kept and kept[key].text != answer.text:
            raise SystemSetupError(
                f"{path}:{number}: {key[0]}/{key[1]} has another answer at line "
                f"{kept[key].line}; a run holds one answer per sample and template",
                hint="keep one producer's answers per run with --option filter=FIELD=VALUE "
                "(e.g. filter=run_id=RUN or filter=model=MODEL,system=SYSTEM).")
        kept.setdefault(key, answer)
    if not kept:
        shown = ",".join(f"{f}={v}" for f, v in conditions)
        raise SystemSetupError(
            f"system 'replay': no answer in {path} ({lines} lines)"
            + (f" matches filter {shown}" if conditions else ""),
            hint="check the filter's field names and values against the file.")
    return kept


def answers_digest(answers: Mapping[tuple[str, str], RecordedAnswer]) -> str:
    """SHA-256 of the answers' content: pairs, texts and producers, in sorted order.

    Line numbers, the file's path and every other field (labels, reasons) are left out, so
    only a change to what the system outputs changes the digest.
    """
    canonical = json.dumps(
        [[a.sample_id, a.template, a.text, dict(sorted(a.producer.items()))]
         for _, a in sorted(answers.items())],
        ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ReplaySystem:
    """Answers each task with its recorded text; see the module docstring.

    Args:
        answers: The recorded answers by (sample id, template), from :func:`read_answers`.
        source: Where they were read from (recorded with the run, not identity).
        filter_spec: The filter that kept them, as given (recorded, not identity).
    """

    name = "replay"

    def __init__(self, answers: Mapping[tuple[str, str], RecordedAnswer], *,
                 source: str = "", filter_spec: str = "") -> None:
        self.answers = dict(answers)
        self.source = source
        self.filter_spec = filter_spec
        self.sha256 = answers_digest(self.answers)

    def describe(self) -> Mapping[str, Any]:
        """The answers' content hash and count: the only thing that decides the outputs."""
        return {"answers": {"sha256": self.sha256, "count": len(self.answers)}}

    def data_location(self) -> Mapping[str, str]:
        """Where the answers were read from, and the filter: shown with a run, not identity."""
        return {"answers": self.source, "filter": self.filter_spec}

    def applies(self, sample: Sample, template: str) -> bool:
        """Whether an answer is recorded for ``sample`` under ``template`` (else skipped)."""
        return (sample.id, template) in self.answers

    async def respond(self, task: Task) -> Output:
        """The recorded text for the task's sample and template.

        Raises:
            NoRecordedAnswerError: none is recorded (the runner never asks: see
                :meth:`applies`).
        """
        answer = self.answers.get((task.sample.id, task.template))
        if answer is None:
            raise NoRecordedAnswerError(
                f"no recorded answer for {task.sample.id}/{task.template} in "
                f"{self.source or 'the answers'}",
                hint="record one, or run only the pairs the file answers (the runner does).")
        return Output(text=answer.text, model=answer.producer.get("model", ""),
                      trace={"replayed": True, "producer": dict(answer.producer)})

    async def aclose(self) -> None:
        """Holds nothing open (the file was read when the system was built)."""


def replay_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``replay``: recorded answers instead of the model (options answers=PATH, filter=...)."""
    values = read_options("replay", options, DEFAULTS)
    if not values["answers"]:
        raise SystemSetupError("system 'replay' needs option answers=PATH",
                               hint="--option answers=FILE.jsonl, one {sample_id, template, "
                               "response} a line.")
    path = Path(values["answers"]).expanduser()
    answers = read_answers(path, parse_filter(values["filter"]))
    return ReplaySystem(answers, source=str(path), filter_spec=values["filter"])
