"""Data flows one way: a lower layer never imports a higher one (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "freshwiki"

LAYERS: dict[str, int] = {
    # shared foundations
    "__init__": 0, "errors": 0, "records": 0, "config": 0, "prompting": 0,
    "llm": 1, "corpus": 2, "retrieval": 3, "chat": 4, "changes": 5, "benchmarks": 6,
    "systems": 7, "evaluation": 8, "serve": 9, "cli": 10,
}


def layer_of(module: str) -> tuple[str, int]:
    """``freshwiki.chat.verify`` -> ("chat", 4); ``freshwiki.cli_notes`` -> ("cli", 10)."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if top.startswith("cli"):
        top = "cli"
    if top not in LAYERS:
        raise AssertionError(f"{module}: no layer assigned; add it to LAYERS and the docs")
    return top, LAYERS[top]


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every freshwiki module ``path`` imports, anywhere in the file (TYPE_CHECKING too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__" and node.args
              and isinstance(node.args[0], ast.Constant)):
            names = [str(node.args[0].value)]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] == "freshwiki"]
    return found


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    module = ".".join(("freshwiki", *path.relative_to(PACKAGE).with_suffix("").parts))
    own, rank = layer_of(module)
    upward = [f"line {line}: {name} ({layer_of(name)[0]})"
              for line, name in imported_modules(path) if layer_of(name)[1] > rank]
    assert not upward, f"{module} ({own}) imports a higher layer: {'; '.join(upward)}"


def test_the_checker_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from freshwiki.serve import app\n"
                      "def f():\n    import freshwiki.evaluation._runner\n")
    assert [n for _, n in imported_modules(sample)] == [
        "freshwiki.serve", "freshwiki.evaluation._runner"]
