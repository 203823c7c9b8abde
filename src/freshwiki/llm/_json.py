"""Parsing model output as JSON under a schema, and spotting refusals."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)

_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m|i am)\s+(?:really\s+|very\s+)?sorry|i apologi[sz]e|sorry|unfortunately)?"
    r"[\s,.!]*(?:but\s+)?(?:as an ai[^,.]*[,.]?\s*)?"
    r"(?:i|we)\s*(?:can(?:'|no)t|cannot|can not|won'?t|will not|am unable to|'m unable to|"
    r"am not able to|'m not able to|must decline|must refuse)\s+"
    r"(?:help|assist|provide|comply|answer|fulfil+|do that|do this|share|support|create|"
    r"generate|write|engage|respond)",
    re.IGNORECASE,
)


class JSONOutputInvalid(ValueError):
    """Model output is not JSON, or not JSON of the required shape."""


def parse_json_output(text: str, schema: dict[str, Any] | None) -> Any:
    """Parse ``text`` as JSON (tolerating a Markdown code fence) and validate it.

    Raises:
        JSONOutputInvalid: with a message short enough to show the model in a repair prompt.
    """
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise JSONOutputInvalid(f"not valid JSON ({exc.msg} at character {exc.pos})") from exc
    if schema is not None:
        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            raise JSONOutputInvalid(
                f"JSON does not fit the schema at {where}: {exc.message}"
            ) from exc
        except jsonschema.SchemaError as exc:  # a caller bug, not a model bug
            raise ValueError(f"invalid JSON Schema given to the LLM call: {exc.message}") from exc
    return value


def looks_like_refusal(text: str) -> bool:
    """Whether a reply opens by declining ("I'm sorry, but I can't help with that").

    Only the opening is checked: an answer that later says "I cannot verify X" is not a refusal.
    """
    return bool(_REFUSAL.match(text.strip()[:300]))
