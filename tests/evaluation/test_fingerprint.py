"""Code and prompt fingerprints: what an edit to a module or a template does to a run's id.

A throw-away package is written to disk, imported, edited and fingerprinted again; every
expectation follows from which file was edited and how.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from freshwiki.evaluation import fingerprint


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "fpkg"
    (root / "templates").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / "__init__.py").write_text('"""A package."""\n')
    (root / "entry.py").write_text(
        '"""Entry."""\nfrom fpkg import helper\nfrom .sub import deep\n\n\n'
        'def answer() -> int:\n    """Doc."""\n    return helper.VALUE + deep.DEPTH  # note\n')
    (root / "helper.py").write_text('"""Helper."""\nVALUE = 1\n')
    (root / "unused.py").write_text("IGNORED = 0\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "deep.py").write_text("import json\n\ndef f():\n    from ..lazy import x\n"
                                         "    return x\n\nDEPTH = 2\n")
    (root / "lazy.py").write_text("x = 3\n")
    (root / "templates" / "ask.j2").write_text("Question: {{ q }}\n")
    sys.path.insert(0, str(tmp_path))
    importlib.import_module("fpkg.entry")
    yield root
    sys.path.remove(str(tmp_path))
    for name in [n for n in sys.modules if n == "fpkg" or n.startswith("fpkg.")]:
        del sys.modules[name]


def test_the_import_closure_and_the_files_beside_it(package: Path) -> None:
    fp = fingerprint(["fpkg.entry"])
    # entry imports fpkg (the package), helper, sub and sub.deep; deep imports lazy inside a
    # function (relative, two levels up); json is outside the package; unused is never named.
    assert sorted(fp.modules) == ["fpkg", "fpkg.entry", "fpkg.helper", "fpkg.lazy", "fpkg.sub",
                                  "fpkg.sub.deep"]
    assert list(fp.files) == ["fpkg/templates/ask.j2"]


def test_docstrings_and_comments_do_not_count_statements_and_templates_do(
    package: Path,
) -> None:
    before = fingerprint(["fpkg.entry"])
    entry = package / "entry.py"
    entry.write_text(entry.read_text().replace('"""Doc."""', '"""Reworded at length."""')
                     .replace("# note", "# another note"))
    assert fingerprint(["fpkg.entry"]) == before

    (package / "helper.py").write_text('"""Helper."""\nVALUE = 2\n')
    changed = fingerprint(["fpkg.entry"])
    assert {m for m in before.modules if before.modules[m] != changed.modules[m]} == {
        "fpkg.helper"}
    assert changed.files == before.files and changed.digest != before.digest

    (package / "templates" / "ask.j2").write_text("Q: {{ q }}\n")
    edited = fingerprint(["fpkg.entry"])
    assert edited.modules == changed.modules
    assert edited.files["fpkg/templates/ask.j2"] != changed.files["fpkg/templates/ask.j2"]


def test_freshwiki_built_ins_cover_their_prompts() -> None:
    import freshwiki.benchmarks.wikicontradict
    import freshwiki.systems.rag  # noqa: F401

    fp = fingerprint(["freshwiki.systems.rag", "freshwiki.benchmarks.wikicontradict"])
    # The rag prompt, the benchmark's templates and its judge prompts are all keyed.
    for name in ("freshwiki/systems/prompts/rag_context.j2",
                 "freshwiki/benchmarks/wikicontradict/templates/two_passages.j2",
                 "freshwiki/benchmarks/wikicontradict/prompts/judge_item.j2"):
        assert name in fp.files
    # Retrieval and the LLM client decide outputs too; the server and the CLI do not.
    assert "freshwiki.retrieval" in fp.modules and "freshwiki.llm" in fp.modules
    assert not any(m.startswith(("freshwiki.cli", "freshwiki.serve", "freshwiki.evaluation"))
                   for m in fp.modules)
