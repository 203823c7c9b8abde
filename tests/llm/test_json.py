"""Model output parsed as JSON: fences, schemas, and the stray backslashes small models write."""

from __future__ import annotations

import pytest

from freshwiki.llm._json import JSONOutputInvalid, parse_json_output

SCHEMA = {"type": "object", "properties": {"why": {"type": "string"}}, "required": ["why"]}


def test_latex_backslashes_in_a_string_are_kept_as_backslashes() -> None:
    # What the 1.5B wrote rating a reply about the free spectral range: LaTeX, unescaped.
    # "\(" and "\D" are no JSON escapes, and "\u" must be followed by four hex digits.
    text = r'{"why": "It names \(\Delta \lambda\) and \underline{FSR}."}'
    assert parse_json_output(text, SCHEMA) == {
        "why": "It names \\(\\Delta \\lambda\\) and \\underline{FSR}."}


def test_valid_escapes_are_read_as_escapes() -> None:
    # An escaped backslash followed by "(" stays one backslash: pairs are read left to right.
    text = r'{"why": "a \"quote\", a tab\t, \u00e9, a backslash \\( and a line\nend"}'
    assert parse_json_output(text, SCHEMA) == {
        "why": 'a "quote", a tab\t, é, a backslash \\( and a line\nend'}


def test_other_errors_still_name_the_first_problem() -> None:
    with pytest.raises(JSONOutputInvalid, match="not valid JSON"):
        parse_json_output('{"why": "cut off', SCHEMA)
    with pytest.raises(JSONOutputInvalid, match=r"not valid JSON .*escape"):
        parse_json_output(r'{"why": "\(" "two strings"}', SCHEMA)
    with pytest.raises(JSONOutputInvalid, match="does not fit the schema"):
        parse_json_output('```json\n{"because": "x"}\n```', SCHEMA)
