"""The import rules of docs/architecture.md, checked on the source.

1. Data flows one way: a lower layer never imports a higher one.
2. No import circle between freshwiki modules, counting imports inside functions and under
   ``TYPE_CHECKING`` (a circle that only works because one side imports late is still a
   circle: the next edit that moves the import up breaks start-up).
3. No module imports another package's private module or name (``freshwiki.x._y`` is for
   ``freshwiki.x`` and its subpackages only).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "freshwiki"

LAYERS: dict[str, int] = {
    # shared foundations
    "__init__": 0, "errors": 0, "records": 0, "config": 0, "prompting": 0, "plugins": 0,
    "stats": 0,
    "corpus": 1, "retrieval": 2, "llm": 3, "changes": 4, "chat": 5,
    # the seam types systems, benchmarks and the runner meet at; stored runs as analyses read
    # them (apart from the seams so that run ids, which fingerprint the code a benchmark
    # imports, do not change with the report side)
    "seams": 6, "results": 6,
    "systems": 7, "benchmarks": 8, "evaluation": 9, "serve": 10, "cli": 11,
}


def layer_of(module: str) -> tuple[str, int]:
    """``freshwiki.chat.verify`` -> ("chat", 5); ``freshwiki.cli.notes`` -> ("cli", 11)."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top.startswith("__"):  # freshwiki.__version__: a name of the root package
        top = "__init__"
    if top not in LAYERS:
        raise AssertionError(f"{module}: no layer assigned; add it to LAYERS and the docs")
    return top, LAYERS[top]


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``src/freshwiki/chat/__init__.py`` -> ``freshwiki.chat``."""
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, module: str | None = None,
                   package: str = "freshwiki") -> list[tuple[int, str]]:
    """Every ``package`` name ``path`` imports, anywhere in the file (functions, TYPE_CHECKING).

    ``from a.b import c`` gives ``a.b.c`` (a submodule or a name in ``a.b``); relative imports
    are resolved against ``module``, the file's own module name.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if module is None:
                    raise AssertionError(f"{path}: relative import needs the module name")
                anchor = module.split(".")
                if path.name != "__init__.py":
                    anchor = anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__" and node.args
              and isinstance(node.args[0], ast.Constant)):
            names = [str(node.args[0].value)]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] == package]
    return found


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """The names a module of the package imports (a name in a module counts as the module)."""
    return imported_names(path, module_name(path) if path.is_relative_to(PACKAGE) else None)


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def import_graph(paths: Iterable[Path], root: Path) -> dict[str, dict[str, int]]:
    """Module -> {imported module: first line}, names resolved to the module that holds them."""
    known = {module_name(p, root): p for p in paths}

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {}
    for module, path in known.items():
        edges = graph.setdefault(module, {})
        for line, name in imported_names(path, module, root.name):
            target = resolve(name)
            if target and target != module:
                edges.setdefault(target, line)
    return graph


def circles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph.get(start, {})))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, {}))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def private_crossings(module: str, names: Iterable[tuple[int, str]]) -> list[str]:
    """Imports of a private module or name owned by a package ``module`` is not inside."""
    bad = []
    for line, name in names:
        parts = name.split(".")
        for i, part in enumerate(parts):
            if part.startswith("_") and not part.startswith("__"):
                owner = ".".join(parts[:i])
                if module != owner and not module.startswith(owner + "."):
                    bad.append(f"line {line}: {name} (private to {owner})")
                break
    return bad


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    module = module_name(path)
    own, rank = layer_of(module)
    upward = [f"line {line}: {name} ({layer_of(name)[0]})"
              for line, name in imported_modules(path) if layer_of(name)[1] > rank]
    assert not upward, f"{module} ({own}) imports a higher layer: {'; '.join(upward)}"


def test_no_import_circles() -> None:
    graph = import_graph(modules(), PACKAGE)
    found = circles(graph)
    described = []
    for component in found:
        members = set(component)
        edges = [f"{a} -> {b} (line {graph[a][b]})" for a in component for b in graph[a]
                 if b in members]
        described.append(f"{len(component)} modules: " + "; ".join(edges))
    assert not found, "import circles:\n" + "\n".join(described)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_another_packages_private_parts(path: Path) -> None:
    module = module_name(path)
    bad = private_crossings(module, imported_modules(path))
    assert not bad, f"{module} imports private parts of another package: {'; '.join(bad)}"


def test_the_checker_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from freshwiki.serve import app\n"
                      "def f():\n    import freshwiki.evaluation._runner\n")
    assert [n for _, n in imported_modules(sample)] == [
        "freshwiki.serve.app", "freshwiki.evaluation._runner"]


def _write(root: Path, files: Mapping[str, str]) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths


def test_the_circle_finder_sees_a_circle_closed_inside_a_function(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    paths = _write(root, {
        "__init__.py": "",
        "a.py": "from pkg.b import thing\n",
        "b.py": "def thing():\n    from pkg import a\n",
        "c.py": "from pkg.b import thing\n",
        "sub/__init__.py": "from pkg.sub.d import x\n",
        "sub/d.py": "from . import e\n",
        "sub/e.py": "from ..sub import d\n",
    })
    graph = import_graph(paths, root)
    assert graph["pkg.b"] == {"pkg.a": 2}
    assert graph["pkg.sub.d"] == {"pkg.sub.e": 1}
    assert circles(graph) == [["pkg.a", "pkg.b"], ["pkg.sub.d", "pkg.sub.e"]]


def test_the_private_check_allows_a_package_its_own_private_modules() -> None:
    names = [(1, "freshwiki.chat._calls.TurnCalls"), (2, "freshwiki.chat.verify._chosen"),
             (3, "freshwiki.evaluation._store"), (4, "freshwiki.retrieval.LazyIndex")]
    # A private module is private to its package; a private name, to its module.
    assert private_crossings("freshwiki.chat.factcheck", names) == [
        "line 2: freshwiki.chat.verify._chosen (private to freshwiki.chat.verify)",
        "line 3: freshwiki.evaluation._store (private to freshwiki.evaluation)"]
    assert private_crossings("freshwiki.chat.verify", names) == [
        "line 3: freshwiki.evaluation._store (private to freshwiki.evaluation)"]
    assert private_crossings("freshwiki.benchmarks.simulated_chat._factuality", names) == [
        "line 1: freshwiki.chat._calls.TurnCalls (private to freshwiki.chat)",
        "line 2: freshwiki.chat.verify._chosen (private to freshwiki.chat.verify)",
        "line 3: freshwiki.evaluation._store (private to freshwiki.evaluation)"]
