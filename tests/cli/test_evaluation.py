"""``freshwiki eval``'s help names only options the systems accept."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from typing import Any

from freshwiki.cli.evaluation import eval_command
from freshwiki.systems import grounded, rag, ralm, rilm, search_agent


def _option_help() -> str:
    hints = typing.get_type_hints(eval_command, include_extras=True)
    for meta in hints["option"].__metadata__:
        if getattr(meta, "help", None):
            return str(meta.help)
    raise AssertionError("--option has no help text")


def test_the_option_help_lists_real_options_of_each_system() -> None:
    # A user copies these names into -o KEY=VALUE; an option that a system does not have is
    # refused at run time (rilm once listed a "threshold" it never had).
    accepted: Mapping[str, Mapping[str, Any]] = {
        "rag": rag.DEFAULTS, "grounded": grounded.DEFAULTS, "ralm": ralm.DEFAULTS,
        "ralm-best": rilm.BEST_DEFAULTS, "rilm": rilm.DEFAULTS,
        "search-agent": search_agent.DEFAULTS,
    }
    inner = re.search(r"\((.*)\)", _option_help().replace("\n", " "))
    assert inner is not None
    listed = {}
    for part in inner.group(1).split(";"):
        name, sep, keys = part.partition(":")
        if sep and name.strip() in accepted:
            listed[name.strip()] = [k.strip() for k in keys.split(",") if k.strip()]
    assert set(listed) == set(accepted)
    for name, keys in listed.items():
        assert set(keys) <= set(accepted[name]), (name, set(keys) - set(accepted[name]))
