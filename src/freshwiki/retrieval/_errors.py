"""Errors of the retrieval layer, all :class:`~freshwiki.errors.FreshwikiError`s."""

from __future__ import annotations

from freshwiki.errors import FreshwikiError


class RetrievalError(FreshwikiError):
    """A retrieval input (query option, index folder, embedder) freshwiki cannot use."""


class IndexNotFoundError(RetrievalError):
    """A folder that should hold a saved index does not."""
