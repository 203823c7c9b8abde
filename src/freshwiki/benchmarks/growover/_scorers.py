"""The GrowOVER scorers: token F1, exact match, dialogue BLEU and retrieval hit@k.

Changed instances are scored against the *new* answer; the F1 and EM scorers also record
whether the output matched the old answer instead (label ``outdated``), which is the failure
a model with stale knowledge makes.

``growover-hit`` reads ``Output.trace["retrieved"]`` (a list of ``{"id": ...}`` in rank order,
as the rag/ralm systems write it) and the sample's ``metadata["evidence_passages"]``: a hit
when every evidence passage is among the retrieved ones (usually one passage holds all the
evidence sentences). A system that does not retrieve has no ``retrieved`` key: the scorer
then records value 0 with label ``no-retrieval`` and ``data.skipped = True`` (a score must be
a number, and nothing retrieved is indeed no hit), so tables of retrieval quality must filter
on that label; :func:`retrieval_scored` does.

RiLM's stages (GrowOVER Tables 7 and 3). A ``rilm`` output's trace holds the answer of each
pass (``first``, and ``second`` after re-retrieval), whether the gate adopted the first, and
the three re-retrievals (``arr``). The F1, EM and BLEU scorers score each pass's answer against
the same gold with the same rule as the returned one, under ``data["rilm"] = {"adopted",
"chosen", "first", "second"}``; the hit scorer stores whether each re-retrieval mode found
the evidence, under ``data["rilm"] = {"adopted", "arr": {mode: 0 or 1}}``. Scoring stays
here, in the benchmark: the system records only what it did, and the report's GrowOVER
section (``freshwiki.evaluation``) only counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from freshwiki.benchmarks.growover._text import exact_match, normalize_answer, token_f1
from freshwiki.seams import Output, Score, Task

NO_RETRIEVAL = "no-retrieval"
OUTDATED_F1 = 0.5
"""An answer is ``outdated`` when its F1 against the old answer is at least this and higher
than against the new one (or it matches the old answer exactly)."""

T = TypeVar("T")


def _answer(output: Output, task: Task) -> str:
    """The answer: a QA output's first line without a leading "Answer:"; a whole reply."""
    text = output.text.strip()
    if task.sample.metadata.get("kind") == "dialogue":
        return " ".join(text.split())
    first = text.splitlines()[0] if text else ""
    if first.lower().startswith("answer:"):
        first = first[len("answer:"):]
    return first.strip()


def _gold(task: Task) -> str:
    if not task.sample.targets:
        raise ValueError(f"sample {task.sample.id} has no target answer")
    return task.sample.targets[0]


def _outdated(task: Task, prediction: str, value: float, exact: bool) -> dict[str, Any]:
    old = task.sample.metadata.get("old_answer")
    if not old:
        return {}
    f1_old = token_f1(prediction, str(old))
    em_old = exact_match(prediction, str(old))
    outdated = (em_old and not exact) or (f1_old >= OUTDATED_F1 and f1_old > value)
    return {"old_answer": old, "f1_old": f1_old, "em_old": em_old, "outdated": outdated}


STAGES = ("first", "second")
"""RiLM's passes whose answers are scored besides the returned one."""
ARR_MODES = ("paper", "query", "append")
"""RiLM's re-retrieval modes in ``trace["arr"]`` (Eq. 2's ω, ω = 0, ω = 1)."""


def _rilm_stages(task: Task, output: Output,
                 value_of: Callable[[Output], float]) -> dict[str, Any]:
    """``{"rilm": ...}``: each pass's answer scored by ``value_of``; empty for other systems."""
    trace = output.trace
    if "adopted" not in trace or not isinstance(trace.get("first"), Mapping):
        return {}
    record: dict[str, Any] = {"adopted": bool(trace["adopted"]),
                              "chosen": trace.get("chosen")}
    for stage in STAGES:
        found = trace.get(stage)
        record[stage] = (value_of(Output(text=str(found.get("answer", ""))))
                         if isinstance(found, Mapping) else None)
    return {"rilm": record}


class F1Scorer:
    """SQuAD token F1 of the answer (a QA output's first line) against the gold (new) answer."""

    name = "growover-f1"

    async def score(self, task: Task, output: Output) -> Score:
        """F1 in [0, 1]; label ``outdated`` for a changed instance answered the old way."""
        prediction, gold = _answer(output, task), _gold(task)
        value = token_f1(prediction, gold)
        extra = _outdated(task, prediction, value, exact_match(prediction, gold))
        label = "outdated" if extra.get("outdated") else None
        stages = _rilm_stages(task, output, lambda o: token_f1(_answer(o, task), gold))
        return Score(value, label=label,
                     explanation=f"{normalize_answer(prediction)!r} vs {normalize_answer(gold)!r}",
                     data={"prediction": prediction, "gold": gold, **extra, **stages})


class EMScorer:
    """Exact match after normalisation against the gold (new) answer."""

    name = "growover-em"

    async def score(self, task: Task, output: Output) -> Score:
        """1.0 or 0.0; labels ``correct``, ``incorrect`` or ``outdated``."""
        prediction, gold = _answer(output, task), _gold(task)
        hit = exact_match(prediction, gold)
        extra = _outdated(task, prediction, float(hit), hit)
        label = "correct" if hit else ("outdated" if extra.get("outdated") else "incorrect")
        stages = _rilm_stages(task, output,
                              lambda o: float(exact_match(_answer(o, task), gold)))
        return Score(float(hit), label=label, data={"prediction": prediction, "gold": gold,
                                                    **extra, **stages})


class BleuScorer:
    """sacrebleu sentence BLEU of the whole reply against the gold expert reply, over 100."""

    name = "growover-bleu"

    async def score(self, task: Task, output: Output) -> Score:
        """BLEU / 100 (sacrebleu's default smoothing, ``exp``)."""
        import sacrebleu

        gold = _gold(task)

        def value_of(o: Output) -> float:
            return min(1.0, max(0.0, sacrebleu.sentence_bleu(o.text.strip(), [gold]).score
                                / 100.0))

        score = sacrebleu.sentence_bleu(output.text.strip(), [gold]).score
        return Score(value_of(output), explanation=f"BLEU {score:.2f}",
                     data={"gold": gold, **_rilm_stages(task, output, value_of)})


class HitScorer:
    """Whether the retrieved passages include every evidence passage (see module docstring)."""

    name = "growover-hit"

    async def score(self, task: Task, output: Output) -> Score:
        """1.0 hit, 0.0 miss, or 0.0 labelled ``no-retrieval`` (skipped)."""
        wanted = [str(p) for p in task.sample.metadata.get("evidence_passages", ())]
        retrieved = output.trace.get("retrieved")
        if retrieved is None:
            return Score(0.0, label=NO_RETRIEVAL, explanation="the system retrieved nothing",
                         data={"skipped": True, "reason": "no retrieval trace",
                               "evidence_passages": wanted})
        if not wanted:
            raise ValueError(f"sample {task.sample.id} has no evidence passage to look for")
        ids = [str(r["id"]) for r in retrieved]
        ranks = {pid: ids.index(pid) + 1 for pid in wanted if pid in ids}
        hit = len(ranks) == len(wanted)
        data: dict[str, Any] = {"k": len(ids), "ranks": ranks, "evidence_passages": wanted,
                                "retrieved": ids}
        arr = output.trace.get("arr")
        if "adopted" in output.trace and isinstance(arr, Mapping):
            data["rilm"] = {"adopted": bool(output.trace["adopted"]), "arr": {
                mode: float(set(wanted) <= {str(r["id"]) for r in arr[mode]})
                for mode in ARR_MODES if isinstance(arr.get(mode), list)}}
        return Score(float(hit), label="hit" if hit else "miss",
                     explanation=f"evidence at rank(s) {ranks}" if ranks else "evidence missed",
                     data=data)


def retrieval_scored(items: Iterable[T], label_of: Any = None) -> list[T]:
    """Items of ``growover-hit`` except the ``no-retrieval`` skips.

    Args:
        items: Scored items (anything with a ``label`` attribute, or use ``label_of``).
        label_of: Function giving an item's label (default: ``item.label``).
    """
    get = label_of or (lambda item: getattr(item, "label", None))
    return [i for i in items if get(i) != NO_RETRIEVAL]


def scorers_for(kind: str) -> Sequence[Any]:
    """The default scorers of a sample kind (QA: F1, EM, hit; dialogue: BLEU, F1, hit)."""
    if kind == "dialogue":
        return [BleuScorer(), F1Scorer(), HitScorer()]
    return [F1Scorer(), EMScorer(), HitScorer()]
