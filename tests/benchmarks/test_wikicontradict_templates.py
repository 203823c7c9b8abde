"""The paper's templates rendered from real samples into tasks."""

from __future__ import annotations

import pytest

from freshwiki.benchmarks import Sample
from freshwiki.benchmarks.wikicontradict import (
    TEMPLATES,
    UnknownTemplateError,
    WikiContradict,
)
from freshwiki.prompting import list_prompts


def _sample(bench: WikiContradict, sample_id: str) -> Sample:
    return next(s for s in bench.samples() if s.id == sample_id)


def test_template_5_renders_exactly_as_written(wikicontradict: WikiContradict) -> None:
    task = wikicontradict.render(_sample(wikicontradict, "wc-034-q1"), "5")
    # Written by hand from the template file and item 34 of the raw JSON.
    expected = (
        "Answer the following question based on the passages below. The passages may "
        "contradict each other. Read them carefully and give a concise answer that reflects "
        "everything they say: if they disagree, say so and give each answer.\n"
        "\n"
        'Passage 1 (Wikipedia, "Karl Weyprecht"): Karl Weyprecht, also spelt Carl Weyprecht, '
        "(8 September 1838 – 2 March 1881) was an Austro-Hungarian explorer.\n"
        "\n"
        'Passage 2 (Wikipedia, "Karl Weyprecht"): Died 3 March 1881 (aged 42)\n'
        "\n"
        "Question: What day did Karl Weyprecht die?\n"
        "Answer:"
    )
    assert len(task.messages) == 1
    assert task.messages[0].role == "user"
    assert task.messages[0].content == expected
    assert task.query == "What day did Karl Weyprecht die?"
    assert (task.max_tokens, task.temperature, task.template) == (250, 0.0, "5")
    assert task.sample.id == "wc-034-q1"


def test_each_template_shows_the_right_passages(wikicontradict: WikiContradict) -> None:
    sample = _sample(wikicontradict, "wc-034-q1")
    a, b = "Austro-Hungarian explorer", "Died 3 March 1881 (aged 42)"
    shown = {t: wikicontradict.render(sample, t).messages[0].content for t in TEMPLATES}
    # 5.3 and 5.4 show the revised passages: the infobox's death date now agrees (2 March)
    for t in ("5.3", "5.4"):
        assert a in shown[t] and "Died 2 March 1881 (aged 42)" in shown[t] and b not in shown[t]
    assert shown["5.3"].split("Passage 1")[0] == shown["5"].split("Passage 1")[0]
    assert shown["5.4"].split("Passage 1")[0] == shown["5.2"].split("Passage 1")[0]
    assert a not in shown["1"] and b not in shown["1"]
    assert a in shown["2"] and b not in shown["2"]
    assert b in shown["3"] and a not in shown["3"]
    for t in ("4", "5", "5.2"):
        assert shown[t].index("Passage 1 (Wikipedia, \"Karl Weyprecht\"): Karl") < shown[t].index(
            "Passage 2 (Wikipedia, \"Karl Weyprecht\"): Died"
        )
    # 5.1 is template 5 with the passages in the opposite order
    assert shown["5.1"].startswith(shown["5"].split("\n")[0])
    assert 'Passage 1 (Wikipedia, "Karl Weyprecht"): Died 3 March' in shown["5.1"]
    assert "may contradict each other" not in shown["4"]
    assert "Do the passages contradict each other on what the question asks?" in shown["5.2"]
    for text in shown.values():
        assert "What day did Karl Weyprecht die?" in text


def test_every_template_renders_for_every_sample(wikicontradict: WikiContradict) -> None:
    files = {f"benchmarks/wikicontradict/templates/{spec.file}" for spec in TEMPLATES.values()}
    assert files <= set(list_prompts())
    asked = 0
    for sample in wikicontradict.samples():
        for template in wikicontradict.templates:
            if not wikicontradict.applies(sample, template):
                continue
            asked += 1
            content = wikicontradict.render(sample, template).messages[0].content
            assert sample.input in content and "{{" not in content
    # 7 templates for all 253 questions, 5.3 and 5.4 for the 40 revised ones
    assert asked == 7 * 253 + 2 * 40


def test_benchmark_declarations(wikicontradict: WikiContradict) -> None:
    assert wikicontradict.name == "wikicontradict"
    assert wikicontradict.templates == ("1", "2", "3", "4", "5", "5.1", "5.2", "5.3", "5.4")
    assert set(wikicontradict.default_templates) <= set(wikicontradict.templates)
    first = next(wikicontradict.samples())
    for key in wikicontradict.breakdowns:
        assert key in first.metadata
    assert [s.name for s in wikicontradict.scorers(None)] == ["wikicontradict-match"]


def test_unknown_template_names_the_known_ones(wikicontradict: WikiContradict) -> None:
    with pytest.raises(UnknownTemplateError, match="no template '6'") as err:
        wikicontradict.render(next(wikicontradict.samples()), "6")
    assert "5.1" in (err.value.hint or "")
