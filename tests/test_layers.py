"""The import rules of docs/architecture.md, checked on the source.

1. Data flows one way: a lower layer never imports a higher one.
2. No import circle between freshwiki modules, counting imports inside functions and under
   ``TYPE_CHECKING`` (a circle that only works because one side imports late is still a
   circle: the next edit that moves the import up breaks start-up).
3. No module imports another package's private module or name (``freshwiki.x._y`` is for
   ``freshwiki.x`` and its subpackages only); nor does any script in ``experiments/``.
4. A registry's ``"module:attr"`` targets (imported lazily, so rule 1 cannot see them) sit in
   the registry's own layer.
5. The generic evaluation modules (runner, store, types, report) import nothing that belongs to
   one benchmark or system.
"""

from __future__ import annotations

import ast
import re
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


# -- the experiment scripts ---------------------------------------------------------------------

EXPERIMENTS = PACKAGE.parents[1] / "experiments"


def experiment_scripts() -> list[Path]:
    return sorted(EXPERIMENTS.glob("*.py"))


@pytest.mark.parametrize("path", experiment_scripts(), ids=lambda p: p.name)
def test_no_experiment_imports_a_private_module_or_name(path: Path) -> None:
    # A script is outside every package: any private part it reaches for is a crossing.
    bad = private_crossings("experiments", imported_names(path))
    assert not bad, (f"experiments/{path.name} imports private parts (give them a public "
                     f"name in their package): {'; '.join(bad)}")


def test_the_experiment_check_sees_a_planted_private_import(tmp_path: Path) -> None:
    script = tmp_path / "measure.py"
    script.write_text("from freshwiki.retrieval import HybridIndex\n"
                      "def main():\n    from freshwiki.retrieval._bm25 import Hits\n"
                      "from freshwiki.retrieval.parts import Hits as H\n")
    assert private_crossings("experiments", imported_names(script)) == [
        "line 3: freshwiki.retrieval._bm25.Hits (private to freshwiki.retrieval)"]
    assert len(experiment_scripts()) > 20  # the real scripts are seen


# -- registry targets -------------------------------------------------------------------------

TARGET = re.compile(r"^freshwiki(\.[A-Za-z_]\w*)+:[A-Za-z_][\w.]*$")
"""A ``"module:attr"`` reference, as the registries' built-in tables hold them."""


def registry_targets(source: str) -> list[tuple[int, str]]:
    """Every ``"freshwiki.module:attr"`` string in ``source``, f-strings included when they are
    built from the module's own string constants (``f"{_PACKAGE}:factory"``)."""
    tree = ast.parse(source)
    constants = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    found = []
    for node in ast.walk(tree):
        text: str | None = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif (isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name)
                      and value.value.id in constants):
                    parts.append(constants[value.value.id])
                else:
                    break
            else:
                text = "".join(parts)
        if text is not None and TARGET.match(text):
            found.append((node.lineno, text))
    return found


def misplaced_targets(module: str, source: str) -> list[str]:
    """Targets of ``module``'s registry tables that sit in another layer than ``module``."""
    own = layer_of(module)[0]
    return [f"line {line}: {target} ({layer_of(target.partition(':')[0])[0]})"
            for line, target in registry_targets(source)
            if layer_of(target.partition(":")[0])[0] != own]


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_registry_targets_sit_in_their_own_layer(path: Path) -> None:
    # A built-in table is imported lazily, so the import rules above never see it: a systems
    # registry naming an evaluation factory would be an upward import in disguise.
    module = module_name(path)
    bad = misplaced_targets(module, path.read_text(encoding="utf-8"))
    assert not bad, f"{module} registers targets of another layer: {'; '.join(bad)}"


def test_the_registry_check_sees_the_tables_and_a_planted_target() -> None:
    real = (PACKAGE / "benchmarks" / "_registry.py").read_text(encoding="utf-8")
    assert ("freshwiki.benchmarks.growover:growover_benchmark"
            in {t for _, t in registry_targets(real)})  # an f-string of the table
    planted = ('_PKG = "freshwiki.evaluation"\n'
               'TABLE = {"mine": "freshwiki.systems.rag:rag_system",\n'
               '         "theirs": f"{_PKG}._runner:evaluate",\n'
               '         "low": "freshwiki.retrieval:open_search_index"}\n')
    assert misplaced_targets("freshwiki.systems._registry", planted) == [
        "line 3: freshwiki.evaluation._runner:evaluate (evaluation)",
        "line 4: freshwiki.retrieval:open_search_index (retrieval)"]


# -- generic evaluation modules ---------------------------------------------------------------

GENERIC = ("_runner", "_store", "_types", "_report")
"""The evaluation modules every benchmark and system goes through."""


def specific_packages() -> set[str]:
    """Modules that belong to one benchmark or system: every built-in registry target's module
    (a factory, a scorer, an analysis) below its registry's package."""
    found = set()
    for registry in ("benchmarks", "systems"):
        source = (PACKAGE / registry / "_registry.py").read_text(encoding="utf-8")
        for _, target in registry_targets(source):
            module = target.partition(":")[0]
            # freshwiki.benchmarks.growover.analysis -> freshwiki.benchmarks.growover
            found.add(".".join(module.split(".")[:3]))
    return found


def registered_words() -> set[str]:
    """Every built-in benchmark, scorer and system name as a word of a module name
    (``simulated-chat`` -> ``simulated_chat`` and ``simulated``; ``chat-factuality`` ->
    ``chat_factuality`` and ``chat``)."""
    from freshwiki.benchmarks import BUILTIN_BENCHMARKS, BUILTIN_SCORERS
    from freshwiki.systems import BUILTIN_SYSTEMS

    words = set()
    for name in [*BUILTIN_BENCHMARKS, *BUILTIN_SCORERS, *BUILTIN_SYSTEMS]:
        word = name.replace("-", "_")
        words |= {word, word.split("_")[0]}
    return words


def specific_imports(names: Iterable[tuple[int, str]], specific: set[str],
                     words: set[str]) -> list[str]:
    """Imports of a benchmark's or a system's own modules, or of a name or module named after
    one (``evaluation._growover``, ``evaluation._chat_analysis``)."""
    bad = []
    for line, name in names:
        owned = any(name == p or name.startswith(p + ".") for p in specific)
        parts = [part.strip("_") for part in name.split(".")[2:]]
        named = any(part == w or part.startswith(w + "_") for part in parts for w in words)
        if owned or named:
            bad.append(f"line {line}: {name}")
    return bad


@pytest.mark.parametrize("name", GENERIC)
def test_generic_evaluation_modules_import_nothing_specific(name: str) -> None:
    path = PACKAGE / "evaluation" / f"{name}.py"
    bad = specific_imports(imported_modules(path), specific_packages(), registered_words())
    assert not bad, (f"freshwiki.evaluation.{name} imports benchmark- or system-specific "
                     f"modules: {'; '.join(bad)}")


def test_the_generic_check_sees_planted_specific_imports(tmp_path: Path) -> None:
    specific = specific_packages()
    assert {"freshwiki.benchmarks.growover", "freshwiki.systems.rilm",
            "freshwiki.systems.analysis"} <= specific
    report = tmp_path / "_report.py"
    report.write_text("from freshwiki.benchmarks import benchmark_analysis\n"
                      "from freshwiki.benchmarks.growover.analysis import rilm_sections\n"
                      "from freshwiki.evaluation._growover import rilm_sections as r\n"
                      "from freshwiki.evaluation._stats import summarize\n"
                      "def f():\n    import freshwiki.systems.rilm\n")
    words = registered_words()
    assert {"growover", "wikicontradict", "hellofresh", "grounded", "rilm", "chat"} <= words
    assert specific_imports(imported_names(report), specific, words) == [
        "line 2: freshwiki.benchmarks.growover.analysis.rilm_sections",
        "line 3: freshwiki.evaluation._growover.rilm_sections",
        "line 6: freshwiki.systems.rilm"]
    # what the report imported before the analyses moved out of evaluation/
    before = tmp_path / "old_report.py"
    before.write_text("from freshwiki.evaluation._chat_analysis import analyse_chat\n"
                      "from freshwiki.evaluation._classification import analyse\n")
    # _chat_analysis is named after the chat scorers; _classification after no benchmark,
    # which is why such analyses live in their benchmark's folder, where "owned" sees them.
    assert specific_imports(imported_names(before), specific, words) == [
        "line 1: freshwiki.evaluation._chat_analysis.analyse_chat"]
