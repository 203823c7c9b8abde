"""Test doubles for GrowOVER: snapshots from paragraph lists, a chosen-vector encoder, and
scripted generation replies that read the prompt and answer from the sentences shown."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
import numpy.typing as npt

from freshwiki.changes.snapshots import Snapshot, SnapshotSentence
from freshwiki.llm import Message

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" '
        'xml:lang="en"><siteinfo><sitename>Wikipedia</sitename><namespaces>'
        '<namespace key="0" /></namespaces></siteinfo>')
"""The opening of a MediaWiki export, for history files written by tests."""
DIM = 128
EXPERIMENTS = Path(__file__).resolve().parents[3] / "experiments"


def experiment_script(name: str) -> ModuleType:
    """Import ``experiments/NAME.py`` freshly (the scripts are not a package and import their
    sibling ``_provenance``, so the folder goes on the path first)."""
    if str(EXPERIMENTS) not in sys.path:
        sys.path.insert(0, str(EXPERIMENTS))
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def snap(paragraphs: Sequence[Sequence[str]], *, page_id: int = 7, title: str = "Alpha",
         revision: int = 1, when: dt.datetime = T0) -> Snapshot:
    """A snapshot whose paragraphs hold exactly these sentences."""
    sentences = []
    texts = []
    for p, members in enumerate(paragraphs):
        offset = 0
        for pos, text in enumerate(members):
            sentences.append(SnapshotSentence(text, p, (), pos, offset, offset + len(text)))
            offset += len(text) + 1
        texts.append(" ".join(members))
    return Snapshot(page_id, title, revision, when, tuple(sentences), tuple(texts))


def axis(k: int) -> npt.NDArray[np.float32]:
    v = np.zeros(DIM, dtype=np.float32)
    v[k] = 1.0
    return v


class Encoder:
    """``vectors`` fixes some texts' vectors; ``pairs`` gives (a, b, cosine) on two fresh axes;
    every other text gets an axis of its own (orthogonal to everything)."""

    def __init__(self, vectors: dict[str, npt.NDArray[np.float32]] | None = None,
                 pairs: Sequence[tuple[str, str, float]] = (), first_free: int = 64) -> None:
        self.vectors = dict(vectors or {})
        self._next = first_free
        for a, b, cos in pairs:
            self.vectors[a] = axis(self._next)
            self.vectors[b] = (cos * axis(self._next)
                               + np.sqrt(1 - cos * cos) * axis(self._next + 1)).astype(np.float32)
            self._next += 2

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = []
        for t in texts:
            if t not in self.vectors:
                self.vectors[t] = axis(self._next)
                self._next += 1
            v = self.vectors[t]
            rows.append(v / np.linalg.norm(v))
        if not rows:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack(rows).astype(np.float32)


_SHOWN = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
_NUMBER = re.compile(r"\d+")


def shown_sentences(messages: Sequence[Message]) -> list[str]:
    """The numbered sentences of the first user message (the generation prompt)."""
    prompt = next(m.content for m in messages if m.role == "user")
    return [text for _, text in _SHOWN.findall(prompt)]


def kind_of(messages: Sequence[Message]) -> str:
    prompt = next(m.content for m in messages if m.role == "user")
    if "[OLD]" in prompt:
        return "changed"
    return "dialogue" if "conversation" in prompt else "qa"


def answering(qa_evidence: Callable[[list[str]], tuple[int, int]] | None = None
              ) -> Callable[[Sequence[Message]], str]:
    """A reply for any generation prompt, copied from what it shows.

    QA: the first number of the first sentence (evidence 1-1 unless ``qa_evidence`` says);
    dialogue: one turn per shown sentence (at least three, citing sentence 1 when fewer);
    changed: the first number of [OLD] and of [NEW].
    """

    def reply(messages: Sequence[Message]) -> str:
        kind = kind_of(messages)
        prompt = next(m.content for m in messages if m.role == "user")
        if kind == "changed":
            old = re.search(r"\[OLD\] (.*)", prompt)
            new = re.search(r"\[NEW\] (.*)", prompt)
            assert old and new
            return json.dumps({"question": "How many?",
                               "old_answer": _NUMBER.findall(old.group(1))[0],
                               "new_answer": _NUMBER.findall(new.group(1))[0]})
        shown = shown_sentences(messages)
        if kind == "dialogue":
            count = max(3, min(4, len(shown)))
            turns = [{"user": f"Tell me about part {k}?",
                      "expert": shown[min(k, len(shown) - 1)],
                      "evidence": [min(k, len(shown) - 1) + 1]} for k in range(count)]
            return json.dumps({"turns": turns})
        start, end = qa_evidence(shown) if qa_evidence else (1, 1)
        numbers = _NUMBER.findall(shown[start - 1]) if 1 <= start <= len(shown) else []
        answer = numbers[0] if numbers else shown[0].split()[0]
        return json.dumps({"question": f"What number about {shown[0][:30]}?",
                           "answer": answer, "evidence_start": start, "evidence_end": end})

    return reply


def revision(rid: int, when: str, text: str) -> str:
    """One ``<revision>`` element of a history export."""
    return (f"<revision><id>{rid}</id><timestamp>{when}</timestamp>"
            f"<contributor><username>U</username><id>1</id></contributor>"
            f'<text xml:space="preserve">{text}</text></revision>')


def page(pid: int, title: str, *revisions: str) -> str:
    """One main-namespace ``<page>`` with its revisions."""
    return f"<page><title>{title}</title><ns>0</ns><id>{pid}</id>{''.join(revisions)}</page>"
