"""The documentation site builds in strict mode, so a broken link fails the suite and CI.

The docs are a site built by MkDocs from ``docs/`` with the README as its home page. Links
between pages are checked only when the site is built, so the suite builds it: a page renamed
without its links, a heading reworded under an anchor that points to it, or a page left out of
the navigation fails here. The planted cases show that the strict build, not luck, is what
catches them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# What a page must not load from the web: it must read the same from file:// with no network.
FETCHED = re.compile(r'<(?:script|img|iframe)\b[^>]*\ssrc="(?:https?:)?//'
                     r'|<link\b[^>]*\srel="stylesheet"[^>]*\shref="(?:https?:)?//')


def build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the project's ``mkdocs.yml`` into ``site``."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict",
         "--config-file", str(project / "mkdocs.yml"), "--site-dir", str(site)],
        capture_output=True, text=True, timeout=300, cwd=project,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def copy_project(tmp_path: Path) -> Path:
    """What the docs build reads, copied so a test can break it without touching the repository."""
    project = tmp_path / "project"
    shutil.copytree(DOCS, project / "docs")
    (project / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "mkdocs_hooks.py", project / "scripts")
    for name in ("mkdocs.yml", "README.md"):
        shutil.copy2(ROOT / name, project / name)
    return project


def test_the_docs_build_strict_into_pages_that_read_offline(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = build(ROOT, site)
    assert result.returncode == 0, result.stderr

    pages = sorted(p.stem for p in DOCS.glob("*.md"))
    assert {"architecture", "chat", "results", "wikicontradict"} <= set(pages)
    for stem in pages:
        assert (site / f"{stem}.html").is_file(), f"docs/{stem}.md was not built"

    # The README is the home page, its `docs/...` links pointing at the built pages.
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="set-up-two-commands"' in home
    assert "lint, type-check and run the whole test suite" in home
    assert 'href="results.html"' in home
    assert 'href="docs/' not in home

    for page in site.rglob("*.html"):
        fetched = FETCHED.search(page.read_text(encoding="utf-8"))
        assert fetched is None, f"{page.name} loads {fetched.group(0) if fetched else ''}"


@pytest.mark.parametrize(("page", "planted", "named"), [
    ("docs/corpus.md", "[the results](resluts.md)", "resluts.md"),
    ("docs/corpus.md", "[the results](results.md#no-such-heading)", "no-such-heading"),
    ("README.md", "[a page](docs/no-such-page.md)", "no-such-page.md"),
])
def test_a_broken_link_fails_the_build(tmp_path: Path, page: str, planted: str,
                                       named: str) -> None:
    project = copy_project(tmp_path)
    target = project / page
    target.write_text(target.read_text(encoding="utf-8") + f"\nSee {planted}.\n",
                      encoding="utf-8")
    result = build(project, tmp_path / "site")
    assert result.returncode != 0
    assert named in result.stderr, result.stderr


def test_a_page_left_out_of_the_navigation_fails_the_build(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    (project / "docs" / "orphan.md").write_text("# Nobody links here\n", encoding="utf-8")
    result = build(project, tmp_path / "site")
    assert result.returncode != 0
    assert "orphan.md" in result.stderr, result.stderr


def test_the_readme_stays_a_front_door() -> None:
    """Reference, design notes and long tables belong in docs/, not in the README."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    # The set-up stays the two commands.
    assert "make run " in readme and "make test " in readme
