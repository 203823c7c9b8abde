"""The seams benchmarks, systems, scorers and the runner meet at.

A benchmark is data: it yields :class:`Sample` s and renders each one through a named template
into a :class:`Task`. A :class:`System` turns a task into an :class:`Output`; a :class:`Scorer`
turns (task, output) into a :class:`Score`. The runner (``freshwiki.evaluation``) only ever sees
these types, so a new benchmark or system needs no change to the runner.

They live in one module below both ``systems/`` and ``benchmarks/`` (and above ``llm/``, whose
:class:`~freshwiki.llm.Message` and :class:`~freshwiki.llm.Usage` they carry): systems read
tasks without importing any benchmark, and scorers read outputs without importing any system.
``freshwiki.benchmarks`` and ``freshwiki.systems`` re-export them under their old names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from freshwiki.llm import Message, Usage

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM


@dataclass(frozen=True)
class Document:
    """A context passage a template may show the model (e.g. one side of a contradiction)."""

    title: str
    text: str
    source: str | None = None
    """Where it came from (URL, passage id), for citations and reports."""


@dataclass(frozen=True)
class Sample:
    """One benchmark item, independent of how it is prompted.

    Attributes:
        id: Stable across runs and versions of the loader: results are keyed by it.
        input: The question (or other input) as a user would ask it.
        targets: Gold answers; a contradiction sample has two, one per side.
        documents: Context passages templates may include.
        metadata: JSON-serialisable facts used to break results down (taxonomy, type, date...).
    """

    id: str
    input: str
    targets: tuple[str, ...] = ()
    documents: tuple[Document, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    """A sample rendered by one template: exactly what a system receives.

    Attributes:
        sample: The sample it came from.
        template: The template id (e.g. ``"4"``, ``"5.1"``).
        messages: The chat messages to send.
        query: What a retrieving system should search for (usually the bare question).
        max_tokens: Generation cap the benchmark prescribes.
        temperature: 0.0 means greedy decoding.
    """

    sample: Sample
    template: str
    messages: tuple[Message, ...]
    query: str
    max_tokens: int = 250
    temperature: float = 0.0


@dataclass(frozen=True)
class Output:
    """What a system produced for a task.

    Attributes:
        text: The final answer text.
        usage: Tokens spent, summed over every LLM call the system made.
        latency_s: Wall-clock seconds for the whole task.
        cache_hit: Whether every LLM call was served from the response cache.
        model: The model identifier the backend reported.
        trace: JSON-serialisable details (retrieved passages, intermediate calls) for reports.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    cache_hit: bool = False
    model: str = ""
    trace: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Score:
    """One scorer's judgement of one output.

    Attributes:
        value: In [0, 1]; means and confidence intervals are computed over it.
        label: A class name when the scorer classifies
            (``correct``/``partially_correct``/``incorrect``).
        explanation: Why, in words (a judge's rationale, which answers matched).
        data: JSON-serialisable extras (matched answers, raw judge JSON).
    """

    value: float
    label: str | None = None
    explanation: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Scorer(Protocol):
    """Scores an output. ``name`` is unique in the scorer registry and names result columns."""

    name: str

    async def score(self, task: Task, output: Output) -> Score:
        """Judge ``output`` for ``task``; raise on failure (the runner records it per sample)."""
        ...


@runtime_checkable
class Benchmark(Protocol):
    """A dataset plus templates plus scorers.

    Attributes:
        name: Registry name (``wikicontradict``).
        templates: Every template id, in display order.
        default_templates: Templates run when the user names none.
        breakdowns: Sample-metadata keys reports group results by.
    """

    name: str
    templates: tuple[str, ...]
    default_templates: tuple[str, ...]
    breakdowns: tuple[str, ...]

    def samples(self) -> Iterator[Sample]:
        """Every sample in a stable order (``--limit N`` takes the first N)."""
        ...

    def render(self, sample: Sample, template: str) -> Task:
        """The task a system receives for ``sample`` under ``template``."""
        ...

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """Default scorers; those needing a model are left out when ``judge`` is ``None``."""
        ...


@runtime_checkable
class ScopedTemplates(Protocol):
    """A benchmark some of whose templates are asked of only some samples.

    Optional beside :class:`Benchmark`: the runner asks ``applies`` for every sample x
    template and leaves out the pairs it refuses, so they are neither answered nor counted as
    missing. WikiContradict's templates 5.3 and 5.4 need hand-revised passages, which exist for
    some questions only; rendering them for the others would only record failures.

    A :class:`System` may implement it too, and the runner then asks both: the ``replay``
    system answers only the pairs it holds a recorded answer for.
    """

    def applies(self, sample: Sample, template: str) -> bool:
        """Whether ``template`` is asked of ``sample``."""
        ...


Respond = Callable[[Task], Awaitable[Output]]
"""A system's :meth:`~freshwiki.systems.System.respond`, as a dialogue benchmark calls it."""


@runtime_checkable
class Dialogue(Protocol):
    """A benchmark whose items are conversations, driven turn by turn by a simulated user.

    A single-turn benchmark hands the runner one :class:`Task` per item; a dialogue cannot,
    because each user turn depends on the system's previous reply. So the runner gives the
    dialogue the system's ``respond`` and a model to play the user, and the dialogue returns
    one :class:`Output` for the whole conversation (its turns in ``trace["turns"]``), which is
    committed and scored like any other output. Systems need no change: every turn is an
    ordinary task whose messages are the conversation so far.

    Attributes:
        simulator_spec: Model spec of the simulated user; ``None`` means the system's model.
            It is part of the run identity (through the model's weights hash).
    """

    simulator_spec: str | None

    async def converse(self, task: Task, respond: Respond, simulator: LLM) -> Output:
        """Hold the conversation that ``task`` (from :meth:`Benchmark.render`) starts."""
        ...


BenchmarkFactory = Callable[["Settings", Mapping[str, Any]], Benchmark]
"""Builds a benchmark from settings and user options (e.g. a dataset path)."""

ScorerFactory = Callable[["LLM | None"], Scorer]
"""Builds a scorer given the judge model (``None`` when no judge was configured)."""


@runtime_checkable
class System(Protocol):
    """Something that answers benchmark tasks.

    Attributes:
        name: Registry name (``vanilla``, ``rag``).
    """

    name: str

    def describe(self) -> Mapping[str, Any]:
        """Everything that determines its outputs besides the model (k, index name, ...).

        The runner stores it with the run and keys resumption on it, so changing an option
        starts a new run instead of mixing answers from two configurations.
        """
        ...

    async def respond(self, task: Task) -> Output:
        """Answer one task; raise on failure (the runner records the error per sample)."""
        ...

    async def aclose(self) -> None:
        """Release what the system holds (indexes, files). The LLM is closed by its owner."""
        ...


SystemFactory = Callable[["LLM", "Settings", Mapping[str, Any]], System]
"""Builds a system from the model client under test, settings and user options."""
