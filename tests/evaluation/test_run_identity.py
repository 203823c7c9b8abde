"""Run identity means "same set-up": change what decides results → new id; move it → same id.

One pair of tests per input the issue names (an index, a GGUF file given by path, a served
model, a dataset file, files beside the code), then the goal: the same set-up in two checkouts
at different paths, computed in two separate processes, gets the same run id.

Every index here is built with a small deterministic embedder (no model weights), every model
is a fake (a GGUF header in a few bytes, ``/v1/models`` answered by a real HTTP server on
127.0.0.1), and no model is ever called: an identity is computed before any work.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from freshwiki.benchmarks import load_benchmark
from freshwiki.config import Settings
from freshwiki.evaluation import fingerprint, make_run_id, resolve_identities, run_identity
from freshwiki.evaluation._fingerprint import NOT_RUN_INPUTS
from freshwiki.llm import LLM, build_backend, models
from freshwiki.llm.backends.local import LocalBackend
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.records import Passage
from freshwiki.retrieval import HybridIndex, default_index_dir, index_content
from freshwiki.systems.rag import RagSystem
from freshwiki.systems.vanilla import VanillaSystem
from tests.systems.testkit import Tiny

REPO = Path(__file__).resolve().parents[2]
WIKICONTRADICT = "wikicontradict/wikicontradict.json"

# --------------------------------------------------------------------------------- helpers


class WordEmbedder:
    """Deterministic 16-d vectors from the words of a text: the dense half without weights."""

    name = "word-embedder"
    dimension = 16

    def _vector(self, text: str) -> np.ndarray[Any, Any]:
        v = np.zeros(self.dimension, dtype=np.float32)
        for word in text.lower().split():
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        return v / max(float(np.linalg.norm(v)), 1e-6)

    def embed_passages(self, passages: Sequence[Passage], *, progress: Any = None,
                       chunk_size: int = 512) -> np.ndarray[Any, Any]:
        return np.stack([self._vector(p.indexed_text) for p in passages]) if passages else \
            np.zeros((0, self.dimension), dtype=np.float32)

    def embed_query(self, query: str) -> np.ndarray[Any, Any]:
        return self._vector(query)

    @staticmethod
    def weights_identity() -> str:
        return "sha256:fixed-test-weights"


def passage(n: int, text: str) -> Passage:
    return Passage(id=f"p{n}", page_id=n, revision_id=100 + n, title=f"Article {n}",
                   section_path=(), text=text, timestamp=None)


PASSAGES = [passage(1, "The bridge opened in 1931 and carries four lanes."),
            passage(2, "The museum holds ten thousand paintings."),
            passage(3, "The river floods most springs."),
            passage(4, "The team won the cup twice.")]


def build(directory: Path, passages: Sequence[Passage], *, overwrite: bool = False) -> None:
    HybridIndex.build(passages, directory, embedder=WordEmbedder(),  # type: ignore[arg-type]
                      overwrite=overwrite).close()


def at_home(settings: Settings, home: Path) -> Settings:
    return dataclasses.replace(settings, home=home)


def rag_id(settings: Settings, llm: LLM | None = None) -> str:
    llm = llm or LLM(ScriptedBackend([], model_id="m"))
    return make_run_id(run_identity(Tiny(3), RagSystem(llm, settings, index_name="main"),
                                    llm, None))


def vanilla_id(llm: LLM) -> str:
    return make_run_id(run_identity(Tiny(3), VanillaSystem(llm), llm, None))


# ----------------------------------------------------------------------------------- index


def test_a_rebuilt_index_gets_a_new_id_and_a_copied_one_the_same(
    settings: Settings, tmp_path: Path,
) -> None:
    one = at_home(settings, tmp_path / "one")
    build(default_index_dir(one, "main"), PASSAGES)
    first = rag_id(one)
    assert rag_id(one) == first

    # The same index folder copied into another home (another machine, another checkout).
    two = at_home(settings, tmp_path / "elsewhere" / "two")
    shutil.copytree(default_index_dir(one, "main"), default_index_dir(two, "main"))
    assert rag_id(two) == first

    # Rebuilt under the same name with one passage's text changed: a new run.
    changed = [*PASSAGES[:3], passage(4, "The team won the cup three times.")]
    build(default_index_dir(one, "main"), changed, overwrite=True)
    assert rag_id(one) != first
    # Rebuilt with the original passages again: the first run's id again.
    build(default_index_dir(one, "main"), PASSAGES, overwrite=True)
    assert rag_id(one) == first


def test_the_index_digest_covers_passages_embedder_and_settings_not_the_build_steps(
    tmp_path: Path,
) -> None:
    whole = tmp_path / "whole"
    build(whole, PASSAGES)
    digest = index_content(whole)["digest"]
    # Built in two saves (an incremental add) it holds the same passages: the same digest.
    steps = tmp_path / "steps"
    build(steps, PASSAGES[:2])
    with HybridIndex.load(steps, embedder=WordEmbedder()) as index:  # type: ignore[arg-type]
        index.add(PASSAGES[2:])
        index.save()
    assert index_content(steps)["digest"] == digest
    # Another passage order, a dropped passage, another embedder weight: each a new digest.
    build(tmp_path / "order", [PASSAGES[1], PASSAGES[0], *PASSAGES[2:]])
    build(tmp_path / "fewer", PASSAGES[:3])
    other = tmp_path / "weights"

    class OtherWeights(WordEmbedder):
        @staticmethod
        def weights_identity() -> str:
            return "sha256:other-weights"

    HybridIndex.build(PASSAGES, other, embedder=OtherWeights()).close()  # type: ignore[arg-type]
    digests = {index_content(tmp_path / n)["digest"] for n in ("order", "fewer", "weights")}
    assert len(digests | {digest}) == 4
    recorded = index_content(whole)
    assert recorded["passages"] == 4
    assert recorded["embedder"] == {"name": "word-embedder", "dimension": 16,
                                    "weights": "sha256:fixed-test-weights"}


def test_an_index_saved_before_digests_gets_one_computed_once_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    directory = tmp_path / "old"
    build(directory, PASSAGES)
    fresh = index_content(directory)
    # Make it an index of the previous format: a manifest without the content record.
    manifest = json.loads((directory / "index.json").read_text())
    del manifest["content"]
    (directory / "index.json").write_text(json.dumps(manifest))
    import freshwiki.retrieval._content as content

    monkeypatch.setattr(content, "embedder_weights", lambda: "sha256:fixed-test-weights")
    reads: list[int] = []
    real = content.extend_chain

    def counting(*args: Any) -> str:
        reads.append(1)
        return real(*args)

    monkeypatch.setattr(content, "extend_chain", counting)
    computed = index_content(directory)
    # Recomputed from the passage table, the chain matches the one the build extended.
    assert computed["digest"] == fresh["digest"]
    assert (directory / "content.json").is_file()
    assert index_content(directory)["digest"] == fresh["digest"] and len(reads) == 1  # cached
    # Any rewrite of the manifest (a rebuild, an add) invalidates the cache.
    manifest["saved_at"] = "2031-01-01T00:00:00+00:00"
    (directory / "index.json").write_text(json.dumps(manifest))
    index_content(directory)
    assert len(reads) == 2


# ------------------------------------------------------------------------------------ GGUF

GGUF = b"GGUF\x03\x00\x00\x00" + bytes(range(256)) * 8


def local_llm(path: Path, cache: Path) -> LLM:
    return LLM(LocalBackend(str(path), models_dir=path.parent, sha_cache=cache))


def test_a_gguf_given_by_path_is_identified_by_its_sha256(tmp_path: Path) -> None:
    cache = tmp_path / "home" / "cache" / models.SHA_CACHE_FILE
    original = tmp_path / "a" / "model.gguf"
    original.parent.mkdir()
    original.write_bytes(GGUF)
    first = vanilla_id(local_llm(original, cache))
    assert local_llm(original, cache).backend.model_id == (
        "gguf@" + hashlib.sha256(GGUF).hexdigest()[:12])

    copied = tmp_path / "b" / "renamed-copy.gguf"
    copied.parent.mkdir()
    shutil.copy(original, copied)
    assert vanilla_id(local_llm(copied, cache)) == first
    moved = tmp_path / "c" / "moved.gguf"
    moved.parent.mkdir()
    original.rename(moved)
    assert vanilla_id(local_llm(moved, cache)) == first

    moved.write_bytes(GGUF[:-1] + b"\x00")  # one byte changed in place
    assert vanilla_id(local_llm(moved, cache)) != first


def test_the_gguf_hash_is_computed_once_and_cached_by_path_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache" / models.SHA_CACHE_FILE
    path = tmp_path / "model.gguf"
    path.write_bytes(GGUF)
    reads: list[Path] = []
    real = models.sha256_file

    def counting(p: Path, progress: Any = None) -> str:
        reads.append(p)
        return real(p, progress)

    monkeypatch.setattr(models, "sha256_file", counting)
    first = models.gguf_sha256(path, cache)
    assert first == hashlib.sha256(GGUF).hexdigest() and len(reads) == 1
    assert models.gguf_sha256(path, cache) == first and len(reads) == 1  # not read again
    stored = json.loads(cache.read_text())["files"][str(path.resolve())]
    assert stored == {"size": len(GGUF), "mtime_ns": path.stat().st_mtime_ns, "sha256": first}
    # A new mtime (same bytes) is checked again, once; the hash is the same.
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    assert models.gguf_sha256(path, cache) == first and len(reads) == 2
    assert models.gguf_sha256(path, cache) == first and len(reads) == 2
    # Without a cache file every call reads.
    models.gguf_sha256(path, None)
    assert len(reads) == 3
    # A file past the size threshold is hashed behind a progress bar, to the same value.
    monkeypatch.setattr(models, "PROGRESS_MIN_BYTES", 1)
    assert models.gguf_sha256(path, None) == first and len(reads) == 4


def test_a_gguf_that_is_a_named_model_has_the_named_models_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "weights.gguf"
    path.write_bytes(GGUF)
    card = dataclasses.replace(next(iter(models.MODELS.values())),
                               sha256=hashlib.sha256(GGUF).hexdigest())
    monkeypatch.setitem(models.MODELS, card.name, card)
    backend = LocalBackend(str(path), models_dir=tmp_path, sha_cache=None)
    assert backend.model_id == f"{card.name}@{card.sha256[:12]}"


# ---------------------------------------------------------------------------- served model


class _Models(BaseHTTPRequestHandler):
    """Answers ``GET /v1/models`` with its server's ``listing``; anything else is a 404."""

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps(self.server.listing).encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def serve_models() -> Iterator[Any]:
    """Start real HTTP servers on 127.0.0.1 answering ``/v1/models`` with a given listing."""
    servers: list[ThreadingHTTPServer] = []

    def start(listing: Mapping[str, Any]) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
        server.listing = dict(listing)  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def llama_listing(model_id: str = "qwen.gguf", n_params: int = 1_543_714_304,
                  created: int = 1) -> dict[str, Any]:
    """What llama.cpp's server answers, ``created`` being the time of the request there."""
    return {"object": "list", "data": [{
        "id": model_id, "object": "model", "created": created, "owned_by": "llamacpp",
        "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_embd": 1536,
                 "n_params": n_params, "size": 1_100_000_000}}]}


async def served_id(spec: str, settings: Settings) -> str:
    llm = LLM(build_backend(spec, settings))
    await resolve_identities(llm)
    try:
        return vanilla_id(llm)
    finally:
        await llm.aclose()


async def test_a_served_model_is_identified_by_what_the_server_reports_not_its_url(
    settings: Settings, serve_models: Any,
) -> None:
    here = serve_models(llama_listing(created=1700000000))
    first = await served_id(f"openai:qwen@{here}", settings)
    # The same model on another port (and another request time in ``created``): same run.
    there = serve_models(llama_listing(created=1800000000))
    assert await served_id(f"openai:qwen@{there}", settings) == first
    # Another model behind the same name (other parameters), or another id: new runs.
    other = serve_models(llama_listing(n_params=494_032_768))
    assert await served_id(f"openai:qwen@{other}", settings) != first
    renamed = serve_models(llama_listing(model_id="smollm.gguf"))
    assert await served_id(f"openai:qwen@{renamed}", settings) != first


async def test_a_revision_in_the_spec_is_part_of_the_identity(
    settings: Settings, serve_models: Any,
) -> None:
    url = serve_models({"object": "list", "data": [
        {"id": "a", "object": "model", "created": 1, "owned_by": "vllm", "root": "org/a"},
        {"id": "b", "object": "model", "created": 1, "owned_by": "vllm", "root": "org/b"}]})
    plain = await served_id(f"openai:a@{url}", settings)
    r1 = await served_id(f"openai:a#r1@{url}", settings)
    assert await served_id(f"openai:a@{url}#r1", settings) == r1  # either place
    assert len({plain, r1, await served_id(f"openai:a#r2@{url}", settings),
                await served_id(f"openai:b@{url}", settings)}) == 4
    backend = build_backend(f"openai:a#r1@{url}", settings)
    assert backend.model == "a" and backend.base_url == url  # type: ignore[attr-defined]
    assert json.loads(await backend.identify()) == {  # type: ignore[attr-defined]
        "served": {"id": "a", "owned_by": "vllm", "root": "org/a"}, "revision": "r1"}


async def test_without_v1_models_the_identity_is_name_and_revision_with_a_warning(
    settings: Settings, serve_models: Any,
) -> None:
    broken = serve_models({"object": "list", "data": []})
    with pytest.warns(UserWarning, match="cannot read the served model's identity"):
        first = await served_id(f"openai:m#r1@{broken}", settings)
    # Nothing listens on the second address at all: the same fallback, so the same run.
    with pytest.warns(UserWarning, match="ConnectError"):
        assert await served_id("openai:m#r1@http://127.0.0.1:9/v1", settings) == first
    with pytest.warns(UserWarning):
        assert await served_id(f"openai:m#r2@{broken}", settings) != first


# ------------------------------------------------------------------------------- datasets


def wikicontradict_id(settings: Settings, path: Path) -> str:
    options = {"path": str(path)}
    bench = load_benchmark("wikicontradict", settings, options)
    llm = LLM(ScriptedBackend([], model_id="m"))
    return make_run_id(run_identity(bench, VanillaSystem(llm), llm, None, options))


def test_a_dataset_file_is_identified_by_content_not_path(
    settings: Settings, shared_data: Path, tmp_path: Path,
) -> None:
    here = tmp_path / "here" / "wikicontradict.json"
    here.parent.mkdir()
    shutil.copy(shared_data / WIKICONTRADICT, here)
    first = wikicontradict_id(settings, here)
    moved = tmp_path / "somewhere" / "else" / "renamed.json"
    moved.parent.mkdir(parents=True)
    here.rename(moved)
    assert wikicontradict_id(settings, moved) == first

    text = moved.read_text(encoding="utf-8")
    assert "main psychoactive compound" in text  # one word of the first passage changed
    moved.write_text(text.replace("main psychoactive compound", "chief psychoactive compound",
                                  1), encoding="utf-8")
    assert wikicontradict_id(settings, moved) != first


async def test_the_path_is_kept_with_the_run_but_outside_its_identity(
    settings: Settings, shared_data: Path, tmp_path: Path,
) -> None:
    from freshwiki.evaluation import ResultsStore, evaluate
    from tests.systems.testkit import ExactScorer

    path = tmp_path / "data.json"
    shutil.copy(shared_data / WIKICONTRADICT, path)
    bench = load_benchmark("wikicontradict", settings, {"path": str(path), "sample": "1"})
    llm = LLM(ScriptedBackend(["an answer"] * 4, model_id="m"))
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(bench, VanillaSystem(llm), llm=llm, store=store,
                                 scorers=[ExactScorer()], model_spec="scripted:m",
                                 templates=["2"], benchmark_options={"path": str(path),
                                                                     "sample": "1"})
        config = store.run_info(summary.info.run_id).config
    assert config["data_location"]["path"] == str(path)
    assert config["data_location"]["options"] == {"path": str(path)}
    assert config["benchmark_options"] == {"sample": "1"}
    identity_part = {k: v for k, v in config.items() if k not in (
        "data_location", "model_spec", "judge_spec", "templates", "scorers", "limit",
        "breakdowns")}
    assert str(tmp_path) not in json.dumps(identity_part)
    assert make_run_id(identity_part) == summary.info.run_id


# ------------------------------------------------------------------ files beside the code


def test_label_files_are_out_of_the_fingerprint_and_prompts_data_and_schemas_in() -> None:
    import freshwiki.benchmarks.hellofresh._benchmark as hellofresh
    import freshwiki.benchmarks.simulated_chat._benchmark as simulated_chat
    import freshwiki.benchmarks.wikicontradict._benchmark as wikicontradict

    files = fingerprint([wikicontradict.__name__, hellofresh.__name__,
                         simulated_chat.__name__]).files
    labels = sorted(p.relative_to(REPO / "src").as_posix()
                    for p in (REPO / "src" / "freshwiki").rglob("*labels*") if p.is_file()
                    and p.suffix != ".py")
    assert labels == [
        f"freshwiki/benchmarks/simulated_chat/validation/{n}_labels.jsonl"
        for n in ("conversationality", "factuality")] + [
        f"freshwiki/benchmarks/wikicontradict/validation/{n}" for n in (
        "human_labels.jsonl", "real_labels.jsonl", "real_labels_detection.jsonl",
        "real_labels_single.jsonl", "real_labels_t4.jsonl", "real_labels_t51.jsonl",
        "real_labels_table5.jsonl", "real_labels_table5_05b.jsonl",
        "real_labels_table5_smollm2.jsonl")]
    readme = "freshwiki/benchmarks/wikicontradict/validation/README.md"
    assert not set(labels) & set(files)
    assert readme not in files
    assert "freshwiki/benchmarks/simulated_chat/validation/README.md" not in files
    # What decides outputs stays in: templates, the judge's prompts, the revisions data, the
    # instruction file.
    for kept in ("freshwiki/benchmarks/wikicontradict/templates/two_passages.j2",
                 "freshwiki/benchmarks/wikicontradict/prompts/judge_system.j2",
                 "freshwiki/benchmarks/wikicontradict/data/revisions.jsonl",
                 "freshwiki/benchmarks/hellofresh/data/instructions.jsonl",
                 "freshwiki/benchmarks/hellofresh/templates/notes/p1.j2"):
        assert kept in files, kept
    # No non-Python file of the package but the label files and their README matches the
    # exclusion.
    excluded = [p for p in (REPO / "src" / "freshwiki").rglob("*") if p.is_file()
                and p.suffix not in (".py", ".pyc") and any(
                    fnmatch.fnmatchcase(p.name, pattern) for pattern in NOT_RUN_INPUTS)]
    assert sorted(p.relative_to(REPO / "src").as_posix() for p in excluded) == sorted(
        [*labels, readme, "freshwiki/benchmarks/simulated_chat/validation/README.md"])


# ------------------------------------------------------- two checkouts, two processes

IDENTITY_SCRIPT = """
import json, sys
from pathlib import Path
import freshwiki
from freshwiki.benchmarks import load_benchmark
from freshwiki.config import load_settings
from freshwiki.evaluation import make_run_id, run_identity
from freshwiki.llm import LLM
from freshwiki.llm.backends.local import LocalBackend
from freshwiki.systems import load_system

checkout = Path(sys.argv[1])
settings = load_settings().settings
options = {"path": str(checkout / "data" / "wikicontradict.json")}
bench = load_benchmark("wikicontradict", settings, options)
model = checkout / "models" / "model.gguf"
llm = LLM(LocalBackend(str(model), models_dir=model.parent,
                       sha_cache=settings.home / "cache" / "gguf_sha256.json"))
system = load_system("rag", llm, settings, {"index": "main", "k": "2"})
identity = run_identity(bench, system, llm, llm, options, None, list(bench.scorers(llm)))
print(json.dumps({"source": freshwiki.__file__, "id": make_run_id(identity),
                  "identity": identity}))
"""


def make_checkout(root: Path, shared_data: Path, index: Path) -> Path:
    """The package, a dataset file, a GGUF file and a home with an index, all under ``root``."""
    shutil.copytree(REPO / "src" / "freshwiki", root / "src" / "freshwiki",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "data").mkdir()
    shutil.copy(shared_data / WIKICONTRADICT, root / "data" / "wikicontradict.json")
    (root / "models").mkdir()
    (root / "models" / "model.gguf").write_bytes(GGUF)
    shutil.copytree(index, root / "home" / "indexes" / "main")
    return root


def identity_in(checkout: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"),
           "FRESHWIKI_HOME": str(checkout / "home")}
    proc = subprocess.run([sys.executable, "-c", IDENTITY_SCRIPT, str(checkout)], env=env,
                          cwd=checkout, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    # The subprocess really ran the copy, not the installed package.
    assert Path(out["source"]).resolve().is_relative_to(checkout.resolve())
    return out


@pytest.mark.timeout(600)
def test_the_same_set_up_in_two_checkouts_at_different_paths_has_the_same_run_id(
    shared_data: Path, tmp_path: Path,
) -> None:
    index = tmp_path / "built" / "main"
    build(index, PASSAGES)
    a = make_checkout(tmp_path / "first", shared_data, index)
    b = make_checkout(tmp_path / "deeper" / "second-checkout", shared_data, index)
    first, second = identity_in(a), identity_in(b)
    assert first["identity"] == second["identity"] and first["id"] == second["id"]
    assert str(tmp_path) not in json.dumps(first["identity"])  # no path at all
    assert first["identity"]["system_config"]["index_content"] == index_content(index)["digest"]

    # Editing a label file beside the benchmark keeps the id; editing a template does not.
    labels = b / "src/freshwiki/benchmarks/wikicontradict/validation/human_labels.jsonl"
    labels.write_text(labels.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert identity_in(b)["id"] == first["id"]
    template = b / "src/freshwiki/benchmarks/wikicontradict/templates/two_passages.j2"
    template.write_text(template.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    edited = identity_in(b)
    assert edited["id"] != first["id"]
    assert [k for k in edited["identity"]["prompts"]
            if edited["identity"]["prompts"][k] != first["identity"]["prompts"][k]] == [
        "freshwiki/benchmarks/wikicontradict/templates/two_passages.j2"]


# ------------------------------------------------------------------------------ runs diff


def test_runs_diff_says_a_location_is_no_reason_and_index_content_is_one() -> None:
    import datetime as dt

    from freshwiki.evaluation import RunInfo, diff_runs

    def info(run_id: str, config: dict[str, Any]) -> RunInfo:
        now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        return RunInfo(run_id=run_id, benchmark="b", system="rag", model="m", config=config,
                       code_version="v", model_hashes={}, created_at=now, updated_at=now)

    old = info("a", {"dataset": {"path": "/x/data.json", "sha256": "s"},
                     "system_config": {"index": "main"}})
    new = info("b", {"dataset": {"sha256": "s"}, "data_location": {"path": "/y/data.json"},
                     "system_config": {"index": "main", "index_content": "d1"}})
    rebuilt = info("c", {"dataset": {"sha256": "s"}, "data_location": {"path": "/z/data.json"},
                         "system_config": {"index": "main", "index_content": "d2"}})
    # An old run held the path in its identity: that is why the ids differ.
    assert {(d.key, d.kind, d.identity) for d in diff_runs(old, new)} == {
        ("dataset.path", "removed", True), ("system_config.index_content", "added", True),
        ("data_location.path", "added", False)}
    assert [(d.key, d.identity) for d in diff_runs(new, rebuilt)] == [
        ("system_config.index_content", True), ("data_location.path", False)]


def test_old_runs_with_paths_and_new_runs_share_a_leaderboard_board() -> None:
    from freshwiki.evaluation._leaderboard import dataset_identity as board_dataset

    old = {"dataset": {"path": "/old/home/wikicontradict.json", "sha256": "s", "samples": 3,
                       "revisions": {"source": "/old/revisions.jsonl", "sha256": "r",
                                     "questions": 1}}}
    new = {"dataset": {"sha256": "s", "samples": 3,
                       "revisions": {"sha256": "r", "questions": 1}},
           "data_location": {"path": "/new/place/wikicontradict.json"}}
    assert board_dataset(old)[0] == board_dataset(new)[0]
    assert board_dataset(new)[1] == "wikicontradict.json"  # the file name is still shown
    other = {"dataset": {"sha256": "t", "samples": 3,
                         "revisions": {"sha256": "r", "questions": 1}}}
    assert board_dataset(other)[0] != board_dataset(new)[0]
