"""The system-under-test seam: a :class:`System` turns a benchmark :class:`Task` into an output.

Systems are found by name, so ``--system rag`` needs no runner change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.benchmarks import Output, Task
    from freshwiki.config import Settings
    from freshwiki.llm import LLM


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

_SYSTEMS: dict[str, SystemFactory] = {}


class UnknownSystemError(FreshwikiError):
    """A system name nobody registered."""


class SystemSetupError(FreshwikiError):
    """A system cannot answer anything (its index is missing, an option is invalid).

    Unlike an error raised for one task, the runner does not record it per sample: it stops
    the run at once, because every remaining sample would fail the same way.
    """


def read_options(
    system: str, options: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """``defaults`` updated with ``options``, each coerced to its default's type.

    Unknown keys are an error rather than ignored: ``--option kk=3`` silently doing nothing
    would produce a run that looks like it tested something it did not.

    Raises:
        SystemSetupError: naming the system, the option and the accepted ones.
    """
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        accepted = ", ".join(f"{k} (default {v!r})" for k, v in defaults.items()) or "none"
        raise SystemSetupError(
            f"system {system!r} has no option {', '.join(map(repr, unknown))}",
            hint=f"options of {system!r}: {accepted}.",
        )
    values = dict(defaults)
    for key, raw in options.items():
        kind = type(defaults[key])
        try:
            if kind is bool and not isinstance(raw, bool):
                raise ValueError("expected true or false")
            if isinstance(raw, bool) and kind is not bool:
                raise ValueError("got a boolean")
            # int(str(...)) so that 3.5 is refused instead of silently becoming 3.
            values[key] = raw if isinstance(raw, kind) else kind(str(raw))
        except (TypeError, ValueError) as exc:
            raise SystemSetupError(
                f"system {system!r}: option {key}={raw!r} is not a {kind.__name__} ({exc})",
                hint=f"pass e.g. --option {key}={defaults[key]!r}.",
            ) from None
    return values


def register_system(name: str) -> Callable[[SystemFactory], SystemFactory]:
    """Register a system factory under ``name`` (decorator)."""

    def decorate(factory: SystemFactory) -> SystemFactory:
        _SYSTEMS[name] = factory
        return factory

    return decorate


def system_names() -> list[str]:
    """Registered system names, sorted."""
    _load_builtin()
    return sorted(_SYSTEMS)


def load_system(
    name: str, llm: LLM, settings: Settings, options: Mapping[str, Any] | None = None
) -> System:
    """Build the system registered as ``name`` around ``llm``.

    Raises:
        UnknownSystemError: naming the known systems.
    """
    _load_builtin()
    try:
        factory = _SYSTEMS[name]
    except KeyError:
        raise UnknownSystemError(
            f"unknown system {name!r}", hint=f"choose one of: {', '.join(sorted(_SYSTEMS))}."
        ) from None
    return factory(llm, settings, options or {})


def _load_builtin() -> None:
    """Import the built-in systems so their ``register_system`` decorators run."""
    import freshwiki.systems.grounded
    import freshwiki.systems.rag
    import freshwiki.systems.ralm
    import freshwiki.systems.rilm
    import freshwiki.systems.search_agent
    import freshwiki.systems.vanilla
    import freshwiki.systems.zero_shot  # noqa: F401
