"""Registries by name, and the three ways a name gets into one.

Benchmarks, systems and scorers are chosen by name on the command line (``--system rag``), so
each kind has a :class:`Registry`. A name resolves, in this order, to:

1. a factory registered in this process with :meth:`Registry.register` (the decorator a module
   named in ``FRESHWIKI_PLUGINS`` uses, or a test);
2. a **built-in**: a ``"module:attr"`` string in the registry's table, imported only when that
   name is first looked up. The table is data, so the registry never imports the packages that
   implement the built-ins: no import circle, and ``freshwiki --help`` loads none of them;
3. a **package entry point** in the registry's group (``freshwiki.benchmarks``,
   ``freshwiki.systems``, ``freshwiki.scorers``): a third-party distribution declares
   ``name = "module:attr"`` in its metadata and is found once it is installed.

Modules named in ``FRESHWIKI_PLUGINS`` (comma-separated) are imported before the first lookup
that misses, so their decorators have run by then.

Lives at the bottom of the layers (it imports nothing but :mod:`freshwiki.errors`), so every
layer that keeps a registry can use it.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Generic, TypeVar

from freshwiki.errors import FreshwikiError

PLUGINS_ENV = "FRESHWIKI_PLUGINS"

F = TypeVar("F", bound=Callable[..., object])


class PluginError(FreshwikiError):
    """A plug-in module, entry point or built-in reference cannot be loaded."""


class UnknownNameError(FreshwikiError):
    """A name no registry knows (the base of each registry's own error)."""


def plugin_modules(environ: Mapping[str, str] | None = None) -> list[str]:
    """The module names ``FRESHWIKI_PLUGINS`` lists, in order, blanks dropped."""
    env = os.environ if environ is None else environ
    return [n.strip() for n in env.get(PLUGINS_ENV, "").split(",") if n.strip()]


def import_plugins(environ: Mapping[str, str] | None = None) -> list[str]:
    """Import the modules named in ``FRESHWIKI_PLUGINS`` so their registrations run.

    Importing a module twice is free (Python caches it), so every registry may call this.

    Returns:
        The module names imported.

    Raises:
        PluginError: a module cannot be imported (naming it and why).
    """
    names = plugin_modules(environ)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise PluginError(
                f"{PLUGINS_ENV}: cannot import plugin module {name!r} "
                f"({type(exc).__name__}: {exc})",
                hint="name importable modules, comma-separated (is it on PYTHONPATH?), or "
                f"unset {PLUGINS_ENV}.",
            ) from exc
    return names


def load_reference(reference: str, *, what: str) -> object:
    """The object a ``"package.module:attr"`` string names (``attr`` may be dotted).

    Raises:
        PluginError: naming ``what`` (e.g. "benchmark 'x'"), the reference and the cause.
    """
    module_name, _, attr = reference.partition(":")
    try:
        value: object = importlib.import_module(module_name)
        for part in attr.split(".") if attr else ():
            value = getattr(value, part)
    except Exception as exc:
        raise PluginError(
            f"{what}: cannot load {reference!r} ({type(exc).__name__}: {exc})",
            hint="the reference must be 'importable.module:attribute'; if it comes from an "
            "installed plug-in, reinstall or uninstall that package.",
        ) from exc
    return value


class Registry(Generic[F]):
    """Factories of one kind, by name: registered, built-in (lazy) and from entry points.

    Args:
        kind: What the factories build, for messages (``"benchmark"``).
        group: The package entry-point group third-party factories are declared in.
        builtins: Name -> ``"module:attr"`` of each built-in factory.
        unknown: The error raised for a name nobody provides.
    """

    def __init__(self, kind: str, group: str, builtins: Mapping[str, str],
                 unknown: type[UnknownNameError] = UnknownNameError) -> None:
        self.kind = kind
        self.group = group
        self.builtins = dict(builtins)
        self.unknown = unknown
        self._registered: dict[str, F] = {}
        self._entry_points: dict[str, metadata.EntryPoint] | None = None

    def register(self, name: str) -> Callable[[F], F]:
        """A decorator registering a factory under ``name`` (it wins over a built-in)."""

        def decorate(factory: F) -> F:
            self._registered[name] = factory
            return factory

        return decorate

    def names(self) -> list[str]:
        """Every name available: registered, built-in and installed entry points, sorted."""
        import_plugins()
        return sorted({*self._registered, *self.builtins, *self._installed()})

    def get(self, name: str) -> F:
        """The factory for ``name``.

        Raises:
            UnknownNameError: (the registry's subclass) naming the known names.
            PluginError: the name is known but its module or entry point cannot be loaded.
        """
        import_plugins()
        if name in self._registered:
            return self._registered[name]
        if name in self.builtins:
            factory = load_reference(self.builtins[name], what=f"built-in {self.kind} {name!r}")
        elif name in self._installed():
            entry = self._installed()[name]
            where = f" (package {entry.dist.name})" if entry.dist is not None else ""
            try:
                factory = entry.load()
            except Exception as exc:
                raise PluginError(
                    f"{self.kind} {name!r}: cannot load entry point {entry.value!r}{where} "
                    f"({type(exc).__name__}: {exc})",
                    hint=f"reinstall or uninstall the package that declares it in the "
                    f"{self.group!r} entry-point group.",
                ) from exc
        else:
            raise self.unknown(
                f"unknown {self.kind} {name!r}",
                hint=f"choose one of: {', '.join(self.names())}.",
            )
        if not callable(factory):
            raise PluginError(f"{self.kind} {name!r}: {factory!r} is not callable",
                              hint="point the reference at a factory function or class.")
        self._registered[name] = factory  # type: ignore[assignment]
        return self._registered[name]

    def _installed(self) -> Mapping[str, metadata.EntryPoint]:
        """Entry points of the group, read once per process (scanning metadata is slow)."""
        if self._entry_points is None:
            found: Iterable[metadata.EntryPoint] = metadata.entry_points(group=self.group)
            self._entry_points = {entry.name: entry for entry in found}
        return self._entry_points

    def forget_installed(self) -> None:
        """Read the entry points again on the next lookup (after installing a package)."""
        self._entry_points = None
