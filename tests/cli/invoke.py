"""Running ``freshwiki`` in-process the way the console script does, for CLI tests."""

from __future__ import annotations

import sys

import pytest

from freshwiki.cli import main


def run_main(args: list[str], monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``freshwiki ARGS`` through :func:`freshwiki.cli.main`: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["freshwiki", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err
