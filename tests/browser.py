"""A real headless Chromium for the tests that check pages as a browser lays them out."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    """The Chromium executable (the test fails, naming the fix, when there is none)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("no headless Chromium to check the report in: `apt-get install chromium`")


def dump_dom(page: Path, profile: Path) -> subprocess.CompletedProcess[str]:
    """Load ``page`` headless, offline, in its own profile; stdout is the DOM after scripts."""
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
