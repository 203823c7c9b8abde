"""Generation calls: a QA pair, a dialogue, a changed-fact question, each under a JSON schema.

The model sees the sentences numbered from 1 and names its evidence by those numbers; every
answer is validated before it becomes an instance (numbers inside the shown range, answers
short and copied from the evidence, a changed question's two answers actually different).
An answer that fails is re-asked once with the problem stated; if it fails again the attempt
becomes a :class:`Failed` with the reason and the model's raw output, which the dataset
records as a skip, so a bad evidence range can never turn into a wrongly grounded instance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshwiki.benchmarks.growover._text import answer_tokens, contains_answer, normalize_answer
from freshwiki.changes.snapshots import Snapshot
from freshwiki.llm import LLM, LLMOutputError, LLMRefusalError, Message
from freshwiki.prompting import render_prompt

PROMPTS = "benchmarks/growover/prompts"
MAX_ANSWER_WORDS = 8
MIN_TURNS, MAX_TURNS = 3, 4

QA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "minLength": 1, "maxLength": 300},
        "answer": {"type": "string", "minLength": 1, "maxLength": 80},
        "evidence_start": {"type": "integer"},
        "evidence_end": {"type": "integer"},
    },
    "required": ["question", "answer", "evidence_start", "evidence_end"],
    "additionalProperties": False,
}

DIALOGUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "turns": {
            "type": "array", "minItems": MIN_TURNS, "maxItems": MAX_TURNS,
            "items": {
                "type": "object",
                "properties": {
                    "user": {"type": "string", "minLength": 1, "maxLength": 300},
                    "expert": {"type": "string", "minLength": 1, "maxLength": 500},
                    "evidence": {"type": "array", "minItems": 1, "maxItems": 6,
                                 "items": {"type": "integer"}},
                },
                "required": ["user", "expert", "evidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["turns"],
    "additionalProperties": False,
}

CHANGED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "minLength": 1, "maxLength": 300},
        "old_answer": {"type": "string", "minLength": 1, "maxLength": 80},
        "new_answer": {"type": "string", "minLength": 1, "maxLength": 80},
    },
    "required": ["question", "old_answer", "new_answer"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Failed:
    """A generation attempt that gave nothing usable.

    Attributes:
        reason: Why, in words (the last validation problem, or the LLM error).
        raw: The model's last raw output, for the skip record.
    """

    reason: str
    raw: str = ""


@dataclass(frozen=True)
class GeneratedQA:
    """A validated QA pair; ``evidence`` holds snapshot sentence indices."""

    question: str
    answer: str
    evidence: tuple[int, ...]


@dataclass(frozen=True)
class GeneratedTurn:
    """A validated dialogue turn; ``evidence`` holds snapshot sentence indices."""

    user: str
    expert: str
    evidence: tuple[int, ...]


@dataclass(frozen=True)
class GeneratedDialogue:
    """A validated dialogue."""

    turns: tuple[GeneratedTurn, ...]


@dataclass(frozen=True)
class GeneratedChange:
    """A validated changed-fact question."""

    question: str
    old_answer: str
    new_answer: str


@dataclass
class Generator:
    """Asks the model for instances and validates what comes back.

    Args:
        llm: The generating model (its concurrency bounds parallel calls).
        retries: Re-asks after an invalid answer (GrowOVER-style one retry).
        tag: Call-log label.
    """

    llm: LLM
    retries: int = 1
    tag: str = "growover-generate"
    calls: int = field(default=0, init=False)

    async def _ask(self, prompt: str, schema: dict[str, Any], name: str, max_tokens: int,
                   check: Callable[[Any], Any]) -> Any:
        """Chat under ``schema``; ``check`` returns the value or raises ``ValueError``."""
        messages = [Message.system(render_prompt(f"{PROMPTS}/system.j2")), Message.user(prompt)]
        problem = ""
        raw = ""
        for _attempt in range(self.retries + 1):
            self.calls += 1
            try:
                result = await self.llm.chat(messages, json_schema=schema, schema_name=name,
                                             max_tokens=max_tokens, tag=self.tag)
            except (LLMOutputError, LLMRefusalError) as exc:
                return Failed(f"the model gave no usable JSON ({type(exc).__name__}: "
                              f"{str(exc)[:200]})")
            raw = result.text
            try:
                return check(result.parsed)
            except (ValueError, KeyError, TypeError) as exc:
                problem = str(exc) if isinstance(exc, ValueError) else f"malformed: {exc!r}"
            messages = [*messages, Message.assistant(raw),
                        Message.user(render_prompt(f"{PROMPTS}/retry.j2", problem=problem))]
        return Failed(problem, raw)

    async def qa(self, snapshot: Snapshot, indices: Sequence[int]) -> GeneratedQA | Failed:
        """One QA pair grounded in the sentences ``indices`` of ``snapshot``."""
        shown = list(indices)
        prompt = render_prompt(f"{PROMPTS}/qa.j2", title=snapshot.title,
                               section=_section(snapshot, shown),
                               sentences=[snapshot.sentences[i].text for i in shown])

        def check(parsed: Any) -> GeneratedQA:
            start, end = int(parsed["evidence_start"]), int(parsed["evidence_end"])
            evidence = _range(start, end, len(shown))
            answer = str(parsed["answer"]).strip()
            question = str(parsed["question"]).strip()
            _short(answer, "answer")
            if not question:
                raise ValueError("the question is empty")
            texts = " ".join(snapshot.sentences[shown[k]].text for k in evidence)
            if not contains_answer(texts, answer):
                raise ValueError(f"the answer {answer!r} is not written in sentences "
                                 f"{start}-{end}")
            return GeneratedQA(question, answer, tuple(shown[k] for k in evidence))

        result: GeneratedQA | Failed = await self._ask(prompt, QA_SCHEMA, "growover_qa", 200,
                                                       check)
        return result

    async def dialogue(self, snapshot: Snapshot, indices: Sequence[int]
                       ) -> GeneratedDialogue | Failed:
        """A 3-4 turn dialogue grounded in the sentences ``indices`` of ``snapshot``."""
        shown = list(indices)
        prompt = render_prompt(f"{PROMPTS}/dialogue.j2", title=snapshot.title,
                               section=_section(snapshot, shown), min_turns=MIN_TURNS,
                               max_turns=MAX_TURNS,
                               sentences=[snapshot.sentences[i].text for i in shown])

        def check(parsed: Any) -> GeneratedDialogue:
            turns = []
            for number, turn in enumerate(parsed["turns"], start=1):
                numbers = [int(n) for n in turn["evidence"]]
                bad = [n for n in numbers if not 1 <= n <= len(shown)]
                if bad:
                    raise ValueError(f"turn {number} cites sentence(s) {bad}, outside 1-"
                                     f"{len(shown)}")
                user, expert = str(turn["user"]).strip(), str(turn["expert"]).strip()
                if not user or not expert:
                    raise ValueError(f"turn {number} has an empty message")
                turns.append(GeneratedTurn(user, expert,
                                           tuple(sorted({shown[n - 1] for n in numbers}))))
            if not MIN_TURNS <= len(turns) <= MAX_TURNS:
                raise ValueError(f"{len(turns)} turns, not {MIN_TURNS}-{MAX_TURNS}")
            return GeneratedDialogue(tuple(turns))

        result: GeneratedDialogue | Failed = await self._ask(
            prompt, DIALOGUE_SCHEMA, "growover_dialogue", 700, check)
        return result

    async def changed(self, title: str, old: str, new: str) -> GeneratedChange | Failed:
        """A question the old sentence and the new sentence answer differently."""
        prompt = render_prompt(f"{PROMPTS}/changed.j2", title=title, old=old, new=new)

        def check(parsed: Any) -> GeneratedChange:
            question = str(parsed["question"]).strip()
            before, after = str(parsed["old_answer"]).strip(), str(parsed["new_answer"]).strip()
            _short(before, "old_answer")
            _short(after, "new_answer")
            if not question:
                raise ValueError("the question is empty")
            if normalize_answer(before) == normalize_answer(after):
                raise ValueError(f"old_answer and new_answer are the same ({after!r})")
            if not contains_answer(old, before):
                raise ValueError(f"old_answer {before!r} is not written in [OLD]")
            if not contains_answer(new, after):
                raise ValueError(f"new_answer {after!r} is not written in [NEW]")
            return GeneratedChange(question, before, after)

        result: GeneratedChange | Failed = await self._ask(prompt, CHANGED_SCHEMA,
                                                           "growover_changed", 200, check)
        return result


def _range(start: int, end: int, size: int) -> range:
    if not (1 <= start <= size and 1 <= end <= size):
        raise ValueError(f"evidence {start}-{end} is outside the sentences shown (1-{size})")
    if start > end:
        raise ValueError(f"evidence_start {start} is after evidence_end {end}")
    return range(start - 1, end)


def _short(answer: str, name: str) -> None:
    words = len(answer_tokens(answer))
    if words == 0:
        raise ValueError(f"{name} is empty")
    if words > MAX_ANSWER_WORDS:
        raise ValueError(f"{name} has {words} words; give a short entity "
                         f"(at most {MAX_ANSWER_WORDS})")


def _section(snapshot: Snapshot, indices: Sequence[int]) -> str:
    return " > ".join(snapshot.sentences[indices[0]].section_path) if indices else ""
