"""The zero-shot system: one greedy call with the benchmark's prompt, a few tokens of answer.

HelloFresh's first regime: the model classifies from the item alone (the note, the edit),
with no search and no examples. It differs from ``vanilla`` in what it guarantees rather than
in what it sends: decoding is always greedy and the answer is capped at ``max_tokens``
(default 15, the HelloFresh paper's cap; the task's own cap when smaller), so a chatty model
cannot spend minutes explaining a one-word answer and every phrasing costs the same. The cap is in
:meth:`ZeroShotSystem.describe`, so changing it starts a new run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freshwiki.llm import LLM
from freshwiki.seams import Output, System, Task
from freshwiki.systems._options import SystemSetupError, read_options

if TYPE_CHECKING:
    from freshwiki.config import Settings

DEFAULTS: Mapping[str, Any] = {"max_tokens": 15}


class ZeroShotSystem:
    """Sends the task's messages as rendered, once, greedily; see the module docstring.

    Args:
        llm: The model that classifies.
        max_tokens: Upper bound on the answer's length (the task's cap applies when smaller).
    """

    name = "zero-shot"

    def __init__(self, llm: LLM, *, max_tokens: int = 15) -> None:
        if max_tokens < 1:
            raise SystemSetupError(
                f"system 'zero-shot': max_tokens must be at least 1, got {max_tokens}",
                hint="pass e.g. --option max_tokens=15.")
        self.llm = llm
        self.max_tokens = max_tokens

    def describe(self) -> Mapping[str, Any]:
        """The answer cap: the only thing besides the model that shapes the output."""
        return {"max_tokens": self.max_tokens}

    async def respond(self, task: Task) -> Output:
        """One chat call with ``task.messages`` at temperature 0."""
        result = await self.llm.chat(
            task.messages, max_tokens=min(task.max_tokens, self.max_tokens), temperature=0.0,
            tag=f"eval:{self.name}",
        )
        return Output(
            text=result.text, usage=result.usage, latency_s=result.latency_s,
            cache_hit=result.cache_hit, model=result.model,
            trace={"finish_reason": result.finish_reason, "refused": result.refused},
        )

    async def aclose(self) -> None:
        """Holds nothing; the LLM belongs to the caller."""


def zero_shot_system(llm: LLM, settings: Settings, options: Mapping[str, Any]) -> System:
    """``zero-shot``: the model answers from its own knowledge (option max_tokens)."""
    values = read_options("zero-shot", options, DEFAULTS)
    return ZeroShotSystem(llm, max_tokens=values["max_tokens"])
