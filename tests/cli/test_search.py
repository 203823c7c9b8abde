"""`freshwiki corpus ingest` → `freshwiki index build` → `freshwiki search`, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def fw(home: Path, *args: str, env: dict[str, str] | None = None
       ) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("freshwiki"))
    return subprocess.run([exe, "--home", str(home), *args], capture_output=True, text=True,
                          timeout=600, env=env)


def ingested(shared_data: Path, tmp_path: Path, kind: str, count: int) -> dict[str, str]:
    """The first ``count`` real leads of a topic file, ingested into ``tmp_path/home``."""
    leads = json.loads((shared_data / f"wikipedia/topics/{kind}_articles_en.json").read_text())
    subset = dict(list(leads.items())[:count])
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps(subset))
    done = fw(tmp_path / "home", "corpus", "ingest", str(topics), "--workers", "1")
    assert done.returncode == 0, done.stderr
    return subset


def test_ingest_index_and_search_real_leads(shared_data: Path, tmp_path: Path) -> None:
    subset = ingested(shared_data, tmp_path, "recent", 40)
    home = tmp_path / "home"
    built = fw(home, "index", "build")
    assert built.returncode == 0, built.stderr
    assert "passages=" in built.stdout
    # A distinctive sentence of one lead, checked by hand, finds that article first.
    title, text = next((t, x) for t, x in subset.items() if len(x.split()) > 30)
    query = " ".join(text.split()[:12])
    found = fw(home, "search", query, "-k", "3", "--json")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["hits"][0]["title"] == title
    assert data["attribution"] == "Text from Wikipedia, CC BY-SA 4.0."
    only = fw(home, "search", query, "--title", "No Such Article", "--json")
    assert json.loads(only.stdout)["hits"] == []
    bad = fw(home, "search", query, "--time", "yesterday")
    assert bad.returncode == 2 and "recent" in bad.stderr
    missing = fw(home, "search", query, "--name", "nope")
    assert missing.returncode == 2 and "freshwiki index build --name nope" in missing.stderr


def test_an_index_built_with_the_int8_runtime_is_searched_with_it(shared_data: Path,
                                                                   tmp_path: Path) -> None:
    subset = ingested(shared_data, tmp_path, "tail", 30)
    home = tmp_path / "home"
    env = {**os.environ, "FRESHWIKI_MODELS_DIR": str(tmp_path / "models")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return fw(home, *args, env=env)

    bad = run("index", "build", "--name", "fast", "--embedder-runtime", "fp8")
    assert bad.returncode == 2 and "unknown embedder runtime 'fp8'" in bad.stderr
    assert "onnx-int8" in bad.stderr  # the error names the runtimes there are
    built = run("index", "build", "--name", "fast", "--embedder-runtime", "onnx-int8")
    assert built.returncode == 0, built.stderr
    assert "making the ONNX embedders" in built.stderr  # the one-off export says so
    manifest = json.loads((home / "indexes" / "fast" / "index.json").read_text())
    assert manifest["embedder"]["name"] == "all-MiniLM-L6-v2+onnx-int8"
    # The setting says torch; the index's own runtime embeds the query all the same.
    title, text = next((t, x) for t, x in subset.items() if len(x.split()) > 30)
    query = " ".join(text.split()[:12])
    found = run("search", query, "--name", "fast", "--method", "dense", "-k", "3", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["title"] == title
    assert not (home / "cache" / "embeddings" / "all-MiniLM-L6-v2.sqlite").exists()


def test_index_build_on_ray_embeds_there_and_indexes_every_passage(shared_data: Path,
                                                                    tmp_path: Path) -> None:
    ingested(shared_data, tmp_path, "head", 25)
    home = tmp_path / "home"
    # RAY_ADDRESS=local: a new local instance, never a cluster left running on this machine
    env = {**os.environ, "RAY_ADDRESS": "local", "FRESHWIKI_MODELS_DIR": str(tmp_path / "m")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return fw(home, *args, env=env)

    bad = run("index", "build", "--engine", "spark")
    assert bad.returncode == 2 and "use local or ray" in bad.stderr
    built = run("index", "build", "--engine", "ray")
    assert built.returncode == 0, built.stderr
    passages = int(built.stdout.split("passages=")[1].split(",")[0])
    assert f"embedded {passages} passages on Ray; 0 were cached already" in built.stdout
    assert "embedded here" not in built.stdout  # nothing was left for the local embedder
    again = run("index", "build", "--engine", "ray", "--overwrite")
    assert again.returncode == 0
    assert f"embedded 0 passages on Ray; {passages} were cached already" in again.stdout
