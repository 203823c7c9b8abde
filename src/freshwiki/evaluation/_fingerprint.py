"""Code and prompt fingerprints: which source a run's outputs and scores came from.

A run id must change when anything that decides its outputs changes, and that includes the
code and the prompt templates, not only data, options and weights: editing the rag prompt and
re-running the same command must not silently reuse yesterday's answers. A git commit would
be too coarse (any edit anywhere, even a README, would start every run anew) and is missing
in an installed wheel, so the fingerprint is taken from the source itself:

* **Modules involved.** Starting from the modules that define the benchmark, the system and
  the scorers, every module they import is followed (statically, from the ``import``
  statements, including those inside functions, since freshwiki imports lazily), within
  ``freshwiki`` and within the starting module's own top-level package (a plug-in's). That is
  the code that can run on the way from a sample to a score.
* **Normalised.** Each module is hashed from its syntax tree with docstrings dropped (comments
  never reach the tree), so rewording documentation does not start a new run; changing a
  statement does.
* **Prompts and data beside the code.** Every non-Python file in the folders of those modules
  (Jinja2 prompt templates, JSON schemas, word lists, instruction files), hashed byte for
  byte, except files that cannot change an output or a score (:data:`NOT_RUN_INPUTS`).

**What is left out, and why.** Reference labels kept beside a benchmark (WikiContradict's
``validation/*labels*.jsonl``) are read only to measure how well a scorer agrees with people
(κ, per-class precision and recall); no system or scorer reads them while a run responds or
scores. Fingerprinting them made correcting one human label start every
WikiContradict run anew, so files named ``*labels*`` are excluded by name. The rule is a name
pattern, not a folder, so a label file moved elsewhere stays out, and it is narrow on purpose:
templates (``*.j2``), schemas, word lists and instruction files never match it, so every file
that does decide outputs is still fingerprinted (``tests/evaluation/test_run_identity.py``
checks the whole package against that). A file that must decide scores should not be named
``*labels*``. For the same reason a folder's ``README.md`` is left out: it documents the
labels beside it, no code reads it, and adding a paragraph about a new labels file used to
start every run of that benchmark anew.

The result maps each module and each file to a short digest, so ``freshwiki runs diff`` can
say *which* module or prompt differs between two runs, not only that something does.
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType

DIGEST_LENGTH = 16
"""Hex digits kept per module or file: 64 bits, plenty to tell versions apart."""

_SKIP_SUFFIXES = frozenset({".py", ".pyc", ".pyo", ".so", ".pyd", ".typed"})

NOT_RUN_INPUTS: tuple[str, ...] = ("*labels*", "README.md")
"""File-name patterns (:func:`fnmatch.fnmatch`, case-sensitive) of files beside the code that
decide no output or score: reference labels read only for agreement analysis, and the README
that documents them (see the module docstring). Matching files are left out of the
fingerprint."""


@dataclass(frozen=True)
class Fingerprint:
    """Digests of the modules and the non-Python files a run depends on.

    Attributes:
        modules: Dotted module name → digest of its docstring-free syntax tree.
        files: Path relative to its top-level package's parent (``freshwiki/chat/prompts/
            compose.j2``) → digest of its bytes.
    """

    modules: Mapping[str, str]
    files: Mapping[str, str]

    @property
    def digest(self) -> str:
        """One digest over everything, for display."""
        h = hashlib.sha256()
        for kind, table in (("m", self.modules), ("f", self.files)):
            for name in sorted(table):
                h.update(f"{kind}:{name}={table[name]}\n".encode())
        return h.hexdigest()[:DIGEST_LENGTH]


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return tree


@lru_cache(maxsize=1024)
def _source_digest(path: str, mtime_ns: int, size: int) -> tuple[str, tuple[str, ...]]:
    """Digest of a module's normalised tree and the absolute module names it imports.

    Keyed by modification time and size so a long-lived process (a server) notices edits.
    Relative imports are returned with leading dots and resolved by the caller.
    """
    text = Path(path).read_bytes()
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError:
        return hashlib.sha256(text).hexdigest()[:DIGEST_LENGTH], ()
    imports: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            imports.append(base)
            # ``from pkg import name`` may name a submodule: try both, keep what exists.
            imports.extend(f"{base}.{alias.name}" if node.module else f"{base}{alias.name}"
                           for alias in node.names if alias.name != "*")
    dump = ast.dump(_strip_docstrings(tree), annotate_fields=False)
    return hashlib.sha256(dump.encode()).hexdigest()[:DIGEST_LENGTH], tuple(imports)


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:DIGEST_LENGTH]


def _module_origin(name: str) -> tuple[Path, bool] | None:
    """The source file of module ``name`` and whether it is a package, without importing it.

    Looked up on disk below its top-level package (which is imported: it holds the start
    modules), so following an import never runs a package's ``__init__`` as a side effect.
    """
    top, *rest = name.split(".")
    root = sys.modules.get(top)
    root_file = getattr(root, "__file__", None)
    if root_file is None:
        return None
    base = Path(root_file).parent.joinpath(*rest)
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if base.with_suffix(".py").is_file() and rest:
        return base.with_suffix(".py"), False
    return None


def _resolve(reference: str, importer: str, importer_is_package: bool) -> str:
    level = len(reference) - len(reference.lstrip("."))
    if not level:
        return reference
    parts = importer.split(".")
    base = parts if importer_is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    rest = reference[level:]
    return ".".join([*base, rest] if rest else base)


def module_names(objects: Iterable[object]) -> list[str]:
    """The defining modules of ``objects`` (instances, classes or functions)."""
    names: list[str] = []
    for obj in objects:
        for candidate in (getattr(obj, "__module__", None), type(obj).__module__):
            if isinstance(candidate, str) and candidate not in names and candidate != "builtins":
                names.append(candidate)
    return names


def fingerprint(start: Iterable[str | ModuleType]) -> Fingerprint:
    """Fingerprint the modules in ``start`` and everything they import (see module doc).

    Args:
        start: Module names (or modules) to begin from.
    """
    roots = {"freshwiki"}
    queue: list[str] = []
    for item in start:
        name = item.__name__ if isinstance(item, ModuleType) else item
        roots.add(name.split(".")[0])
        queue.append(name)
    modules: dict[str, str] = {}
    files: dict[str, str] = {}
    folders: dict[Path, Path] = {}
    seen: set[str] = set()
    while queue:
        name = queue.pop()
        if name in seen or name.split(".")[0] not in roots:
            continue
        seen.add(name)
        found = _module_origin(name)
        if found is None:
            continue
        path, is_package = found
        stat = path.stat()
        digest, imports = _source_digest(str(path), stat.st_mtime_ns, stat.st_size)
        modules[name] = digest
        top = sys.modules.get(name.split(".")[0])
        top_file = getattr(top, "__file__", None)
        anchor = Path(top_file).parent.parent if top_file else path.parent
        folders.setdefault(path.parent, anchor)
        queue.extend(_resolve(ref, name, is_package) for ref in imports)
    for folder, anchor in folders.items():
        for file in sorted(_data_files(folder)):
            try:
                key = file.relative_to(anchor).as_posix()
            except ValueError:
                key = file.as_posix()
            files[key] = _file_digest(file)
    return Fingerprint(modules=dict(sorted(modules.items())), files=dict(sorted(files.items())))


def _data_files(folder: Path) -> Iterable[Path]:
    """Non-Python files in ``folder`` and its subfolders that are not packages themselves.

    Subpackages are left to their own modules (they are fingerprinted if imported), so a
    module does not drag in every file of a large package below it.
    """
    for entry in folder.iterdir():
        if entry.is_dir():
            if entry.name.startswith((".", "__pycache__")) or (entry / "__init__.py").exists():
                continue
            yield from _data_files(entry)
        elif (entry.suffix not in _SKIP_SUFFIXES and not entry.name.startswith(".")
              and not is_not_run_input(entry.name)):
            yield entry


def is_not_run_input(name: str) -> bool:
    """Whether a file called ``name`` is left out of the fingerprint (:data:`NOT_RUN_INPUTS`)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in NOT_RUN_INPUTS)
