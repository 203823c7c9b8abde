"""The leaderboard at ``/leaderboard``: the static site, built from the server's runs store.

The site is the one ``freshwiki leaderboard`` writes (plain HTML files, no script), built on
the first request and again only when the runs store changed since the last build (its
:meth:`~freshwiki.evaluation.ResultsStore.fingerprint`: row counts and latest times), so a
page reflects runs that finished or were imported while the server was up, without
rebuilding per request. Builds go to ``HOME/serve/leaderboard/<key>/`` and are never written
in place: a request is answered from a complete build, old or new. One lock serialises
builds; a request that arrives during one waits for it rather than starting a second.

With ``freshwiki serve --leaderboard-from DIR`` the site is built from the run bundles in
``DIR`` instead (the files ``freshwiki runs export`` writes, e.g. the repository's
``experiments/runs``), read into a throw-away store, and rebuilt when a bundle is added,
removed or changed (names, sizes and modification times); the server's own runs store is not
read.

The routes sit behind the same :class:`~freshwiki.serve._guard.RequestGuard` as the API
(host, origin, API key), and only files of the built site are served: a path that resolves
outside it, or to anything but a page, its Markdown twin or the JSON numbers, is a 404.
Pages carry a content security policy allowing no script and no fetch, since a run's report
shows model output.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response

from freshwiki import __version__
from freshwiki.config import Settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation import (
    ResultsStore,
    bundle_files,
    bundle_store,
    default_results_path,
    load_runs,
    write_site,
)

PREFIX = "/leaderboard"
_TYPES = {".html": "text/html; charset=utf-8", ".md": "text/markdown; charset=utf-8",
          ".json": "application/json"}
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                       "img-src data:; frame-ancestors 'none'"}


class LeaderboardPages:
    """Builds the site when the runs store changed, and says where the current build is.

    Args:
        settings: ``settings.home`` holds the runs store and the builds.
        bundles: Build from the run bundles in this folder instead of the runs store.
    """

    def __init__(self, settings: Settings, bundles: Path | None = None) -> None:
        self.bundles = bundles
        self.store_path = default_results_path(settings)
        self.root = settings.home / "serve" / "leaderboard"
        self._lock = threading.Lock()
        self._current: tuple[str, Path] | None = None

    def _bundles_key(self) -> tuple[str, list[Path]]:
        assert self.bundles is not None
        files = bundle_files(self.bundles)
        state = "|".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)
        return "bundles|" + state, files

    def _key(self) -> tuple[str, ResultsStore | None]:
        if not self.store_path.exists():  # no store yet: a page saying so, no store made
            return "none", None
        store = ResultsStore(self.store_path)
        try:
            state = store.fingerprint()
        except BaseException:
            store.close()
            raise
        return state, store

    def site(self) -> Path:
        """The folder of an up-to-date build (building it first when needed).

        Raises:
            FreshwikiError: the runs store cannot be read (e.g. written by a newer freshwiki).
        """
        with self._lock:
            if self.bundles is not None:
                return self._bundles_site()
            state, store = self._key()
            try:
                key = hashlib.sha256(f"{__version__}|{state}".encode()).hexdigest()[:16]
                if self._current is not None and self._current[0] == key \
                        and self._current[1].is_dir():
                    return self._current[1]
                target = self.root / key
                if not target.is_dir():
                    write_site(load_runs(store) if store is not None else [], target)
            finally:
                if store is not None:
                    store.close()
            self._current = (key, target)
            self._prune(keep=target)
            return target

    def _bundles_site(self) -> Path:
        state, files = self._bundles_key()
        key = hashlib.sha256(f"{__version__}|{state}".encode()).hexdigest()[:16]
        target = self.root / key
        if self._current is None or self._current[0] != key or not target.is_dir():
            if not target.is_dir():
                with bundle_store(files) as store:  # every bundle checked before any is read
                    write_site(load_runs(store), target)
            self._current = (key, target)
            self._prune(keep=target)
        return target

    def _prune(self, keep: Path) -> None:
        """Remove older builds (only whole build folders; temporary ones belong to writers)."""
        for child in self.root.iterdir():
            if child != keep and child.is_dir() and not child.name.startswith("."):
                shutil.rmtree(child, ignore_errors=True)


def install_leaderboard(app: FastAPI, settings: Settings, bundles: Path | None = None) -> None:
    """Serve the leaderboard at ``/leaderboard/`` (``/leaderboard`` redirects there).

    ``bundles``: build it from the run bundles in this folder, not the runs store.
    """
    pages = LeaderboardPages(settings, bundles)
    app.state.leaderboard = pages

    @app.get(PREFIX, include_in_schema=False)
    def leaderboard_root() -> Response:
        """The site's links are relative: its index must be addressed as a folder."""
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    @app.get(PREFIX + "/{path:path}", include_in_schema=False)
    def leaderboard_page(path: str) -> Response:
        """A file of the current build (``index.html`` for the folder itself)."""
        try:
            site = pages.site()
        except FreshwikiError as exc:
            return JSONResponse(status_code=503, headers=_HEADERS, content={"error": {
                "message": f"the leaderboard cannot be built: {exc.message}",
                "type": "server_error", "code": 503, "hint": exc.hint}})
        root = site.resolve()
        wanted = (root / (path or "index.html")).resolve()
        if wanted.is_dir():
            wanted = wanted / "index.html"
        if not wanted.is_relative_to(root) or not wanted.is_file() \
                or wanted.suffix not in _TYPES:
            return JSONResponse(status_code=404, headers=_HEADERS, content={"error": {
                "message": f"no leaderboard page {path!r}", "type": "invalid_request_error",
                "code": 404, "hint": f"start at {PREFIX}/."}})
        return FileResponse(wanted, media_type=_TYPES[wanted.suffix], headers=_HEADERS)
