"""HelloFresh loaders: the real Community Notes (balanced in a temp HOME) and constructed edits."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from freshwiki.benchmarks import load_benchmark
from freshwiki.benchmarks.hellofresh import (
    EDIT_TEXT_CHARS,
    INSTRUCTIONS_FILE,
    OUR_TEMPLATES,
    PAPER_TEMPLATES,
    TEMPLATES,
    DatasetError,
    HelloFresh,
    PromptDataError,
    UnknownTemplateError,
    control_partners,
    fit_texts,
    paper_instruction,
    paper_instructions,
    quartile_labels,
    wikipedia_url,
)
from freshwiki.changes.edits import Discarded, Edit, LabelledEdit, build_balanced, write_balanced
from freshwiki.changes.edits import write_jsonl as write_edits
from freshwiki.changes.notes import build_balanced as balance_notes
from freshwiki.changes.notes import load_notes
from freshwiki.changes.notes import write_jsonl as write_notes
from freshwiki.config import Settings


@pytest.fixture
def notes_home(shared_data: Path, settings: Settings) -> Path:
    """The real notes, labelled and balanced per month (seed 0) where the CLI would put them."""
    loaded = load_notes(shared_data / "communitynotes")
    dataset = balance_notes(loaded.records, period="month", seed=0)
    path = settings.home / "notes" / "balanced-month-seed0.jsonl"
    write_notes(dataset.records, path)
    return path


def test_real_notes_load_by_default_from_home(notes_home: Path, settings: Settings) -> None:
    bench = load_benchmark("hellofresh-notes", settings)
    assert isinstance(bench, HelloFresh)
    samples = list(bench.samples())
    # `freshwiki notes build --period month --seed 0` on the real data keeps 6 + 6 in January,
    # 11 + 11 in February and 4 + 4 in March (one of March's five not-helpful notes is blank
    # and skipped at load).
    assert len(samples) == 42
    assert Counter(s.metadata["period"] for s in samples) == {
        "2021-01": 12, "2021-02": 22, "2021-03": 8}
    assert Counter(s.metadata["label"] for s in samples) == {"yes": 21, "no": 21}
    assert all(s.input.strip() for s in samples)
    assert all((s.metadata["gold"] == "helpful") == (s.metadata["label"] == "yes")
               for s in samples)
    assert all(s.targets == (s.metadata["label"],) for s in samples)
    assert len({s.id for s in samples}) == 42
    raw = [json.loads(line) for line in notes_home.read_text().splitlines()]
    assert [s.id for s in samples] == [f"note-{r['note_id']}" for r in raw]  # file order
    first = samples[0]
    assert first.input == " ".join(raw[0]["summary"].split())
    assert first.metadata["vote_total"] == raw[0]["votes"]["total"]
    assert first.metadata["source"] == {"title": None, "sites": ["twitter.com", "x.com"]}
    assert bench.describe()["samples"] == 42 and "path" not in bench.describe()
    assert bench.data_location() == {"path": str(notes_home)}  # shown, not in the identity


def test_vote_quartiles_follow_the_vote_counts(notes_home: Path, settings: Settings) -> None:
    samples = list(load_benchmark("hellofresh-notes", settings).samples())
    by_quartile: dict[str, list[int]] = {}
    for s in samples:
        by_quartile.setdefault(s.metadata["vote_quartile"], []).append(
            s.metadata["votes_answered"])
    order = sorted(by_quartile)
    assert set(order) <= {"Q1", "Q2", "Q3", "Q4"} and len(order) >= 3
    for lower, upper in pairwise(order):
        assert max(by_quartile[lower]) < min(by_quartile[upper])


def test_quartiles_by_hand() -> None:
    # Inclusive quartiles of 1..8 are 2.75, 4.5 and 6.25.
    assert quartile_labels([1, 2, 3, 4, 5, 6, 7, 8]) == ["Q1", "Q1", "Q2", "Q2", "Q3", "Q3",
                                                         "Q4", "Q4"]
    assert quartile_labels([8, 1]) == ["Q4", "Q1"]  # cut points 2.75, 4.5, 6.25
    # All cut points are 0: ties stay together in the lowest quartile.
    assert quartile_labels([0, 0, 0, 0, 5]) == ["Q1", "Q1", "Q1", "Q1", "Q4"]
    assert quartile_labels([3]) == ["Q1"]


def test_every_template_renders_the_note_and_asks_yes_or_no(
    notes_home: Path, settings: Settings,
) -> None:
    bench = load_benchmark("hellofresh-notes", settings)
    assert bench.default_templates == PAPER_TEMPLATES == ("manual", "r1", "r2", "r3", "r4")
    sample = next(bench.samples())
    date = sample.metadata["created_at"][:10]  # no posts file: the note's date stands in
    prompts = set()
    for template in PAPER_TEMPLATES:
        task = bench.render(sample, template)
        [message] = task.messages
        lines = message.content.splitlines()
        # The paper's layout: the post (absent here), the note, then the instruction, and
        # nothing of the writer's own verdict.
        assert lines[0] == (f"SOCIAL MEDIA POST ({date}): (the post's text is not available; "
                            "only the note is)")
        assert lines[1] == f"NOTE: {sample.input}" and lines[2].startswith("INSTRUCTION: ")
        assert len(lines) == 3 and "the writer says" not in message.content
        instruction = lines[2].lower()
        assert "'yes'" in instruction and "'no'" in instruction and "mislead" in instruction
        assert task.max_tokens == 15 and task.temperature == 0.0
        prompts.add(message.content)
    assert len(prompts) == 5
    for template in OUR_TEMPLATES:  # the older phrasings, by name
        task = bench.render(sample, template)
        [message] = task.messages
        assert message.role == "user" and sample.input in message.content
        assert "Yes" in message.content and "No" in message.content
        assert "misleading" in message.content  # the writer's classification is shown
        assert task.query == sample.input and task.max_tokens == 15
        prompts.add(message.content)
    assert len(prompts) == 10 and (*PAPER_TEMPLATES, *OUR_TEMPLATES) == TEMPLATES
    with pytest.raises(UnknownTemplateError, match="manual, r1"):
        bench.render(sample, "p6")


@pytest.mark.parametrize("kind", ["notes", "edits"])
def test_the_instructions_are_data_with_their_authors(kind: str) -> None:
    five = paper_instructions(kind)
    assert [i.template for i in five] == list(PAPER_TEMPLATES)
    assert five[0].author.startswith("hand-written")
    assert all(i.author.startswith("local:qwen2.5-coder-") for i in five[1:])
    assert len({i.text for i in five}) == 5
    rows = [json.loads(line) for line in INSTRUCTIONS_FILE.read_text().splitlines()]
    candidates = [r for r in rows if "model" in r]
    assert all(r["review"] in ("accepted", "rejected") and r["reason"] for r in candidates)
    assert all(r["request"] and r["model_sha256"] and r["reply"] for r in candidates)
    # Four accepted of each kind, each under its own template; the rest rejected.
    accepted = sorted((r["kind"], r["template"]) for r in candidates
                      if r["review"] == "accepted")
    assert accepted == sorted((k, f"r{i}") for k in ("notes", "edits") for i in range(1, 5))
    for r in candidates:  # an accepted instruction is the model's reply, cleaned only
        if r["review"] == "accepted":
            assert " ".join(r["reply"].replace("<text>", "").replace("</text>", "").split()) \
                == r["instruction"]


def test_a_missing_phrasing_is_named_with_the_fix(tmp_path: Path) -> None:
    # A file with the manual instruction and one rephrasing: asking for another one says
    # which is missing and how to make it, rather than rendering a hole.
    rows = [json.loads(line) for line in INSTRUCTIONS_FILE.read_text().splitlines()]
    kept = [r for r in rows if r["kind"] == "edits" and r["template"] in ("manual", "r1")]
    path = tmp_path / "instructions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    assert paper_instruction("edits", "r1", path).text == paper_instruction("edits", "r1").text
    with pytest.raises(PromptDataError, match="no accepted edits instruction 'r2'") as info:
        paper_instructions("edits", path)
    assert "hellofresh_rephrase.py" in (info.value.hint or "")


def test_missing_dataset_names_the_command_that_makes_it(settings: Settings) -> None:
    with pytest.raises(DatasetError) as info:
        load_benchmark("hellofresh-notes", settings)
    assert "balanced-month-seed0.jsonl" in info.value.message
    assert "freshwiki notes build" in (info.value.hint or "")
    with pytest.raises(DatasetError) as info:
        load_benchmark("hellofresh-edits", settings)
    assert "freshwiki edits build" in (info.value.hint or "")


def test_a_file_of_something_else_is_refused(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"record": "labelled", "title": "A"}\n')
    with pytest.raises(DatasetError, match="line 1: not a labelled edit"):
        load_benchmark("hellofresh-edits", settings, {"path": str(path)})
    with pytest.raises(DatasetError, match="line 1: not a labelled note"):
        load_benchmark("hellofresh-notes", settings, {"path": str(path)})
    with pytest.raises(DatasetError, match="no option 'limit'"):
        load_benchmark("hellofresh-notes", settings, {"path": str(path), "limit": 3})


def test_a_blank_note_in_an_old_dataset_is_refused_by_name(
        notes_home: Path, tmp_path: Path, settings: Settings) -> None:
    # Datasets built before `notes load` skipped blank notes held the real note
    # 1370130359644459012, whose summary is " ": the control run failed on its partner.
    lines = notes_home.read_text().splitlines()
    blank = json.loads(lines[0])
    blank["summary"] = " "
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join([json.dumps(blank), *lines[1:]]) + "\n")
    with pytest.raises(DatasetError, match=f"note {blank['note_id']} has no text") as info:
        list(load_benchmark("hellofresh-notes", settings, {"path": str(path)}).samples())
    assert "notes load" in (info.value.hint or "")


def edit(page: int, rev: int, title: str, when: dt.datetime, label: str,
         user_type: str = "registered") -> LabelledEdit:
    return LabelledEdit(
        edit=Edit(page_id=page, title=title, revision_id=rev, parent_id=rev - 1,
                  timestamp=when, comment="tweak" if label == "accepted" else None,
                  user_type=user_type,  # type: ignore[arg-type]
                  user="U", section_path=("History",),
                  paragraph_before="The town was founded in 1850.",
                  paragraph_after="The town was founded in 1850 by settlers.",
                  deleted_text="", added_text=f"by settlers {rev}", kind="replace",
                  chars_changed=60, article_paragraphs=10),
        label=label, later_edits_required=3, decided_at=rev + 5,  # type: ignore[arg-type]
    )


MON = dt.datetime(2024, 3, 4, 12, tzinfo=dt.UTC)  # ISO week 2024-W10
EDITS = [
    edit(1, 101, "Alpha", MON, "accepted"),
    edit(2, 201, "Beta", MON + dt.timedelta(days=1), "rejected", "ip"),
    edit(3, 301, "Gamma", MON + dt.timedelta(days=7), "accepted"),
    edit(1, 102, "Alpha", MON + dt.timedelta(days=8), "rejected", "ip"),
]


def test_constructed_balanced_edits_load_with_their_period(
    tmp_path: Path, settings: Settings,
) -> None:
    path = settings.home / "edits" / "balanced-week-seed0.jsonl"
    dataset = build_balanced(EDITS, period="week", seed=0)
    assert write_balanced(dataset, path, period="week", seed=0) == 4
    bench = load_benchmark("hellofresh-edits", settings)
    samples = list(bench.samples())
    assert [s.id for s in samples] == ["edit-1-101", "edit-2-201", "edit-3-301", "edit-1-102"]
    assert [s.metadata["period"] for s in samples] == ["2024-W10"] * 2 + ["2024-W11"] * 2
    assert [s.metadata["label"] for s in samples] == ["yes", "no", "yes", "no"]
    assert [s.metadata["user_type"] for s in samples] == ["registered", "ip", "registered", "ip"]
    assert samples[0].metadata["source"] == {
        "title": "Alpha", "sites": ["https://en.wikipedia.org/wiki/Alpha"]}
    task = bench.render(samples[1], "p2")
    content = task.messages[0].content
    assert "Article: Beta" in content and "by settlers 201" in content
    assert "The town was founded in 1850." in content and "an anonymous (IP) user" in content
    assert "Edit summary: (none)" in content
    assert task.query.startswith("Wikipedia article: Beta\nSection: History\nAdded: by settlers")


def test_the_paper_templates_show_an_edit_in_the_papers_layout(
    tmp_path: Path, settings: Settings,
) -> None:
    path = tmp_path / "edits.jsonl"
    write_balanced(build_balanced(EDITS, period="week", seed=0), path, period="week", seed=0)
    bench = load_benchmark("hellofresh-edits", settings, {"path": str(path)})
    assert bench.default_templates == PAPER_TEMPLATES
    beta = next(s for s in bench.samples() if s.id == "edit-2-201")
    instructions = set()
    for template in PAPER_TEMPLATES:
        task = bench.render(beta, template)
        [message] = task.messages
        *fields, instruction = message.content.splitlines()
        # By hand from EDITS[1]: Beta, section History, Tuesday 5 March 2024, an addition only.
        assert fields == ["ARTICLE: Beta, section History",
                          "Date of Edit: 2024-03-05",
                          "PARAGRAPH: The town was founded in 1850.",
                          "PROPOSED DELETION: (nothing)",
                          "PROPOSED ADDITION: by settlers 201"]
        assert instruction.startswith("INSTRUCTION: ") and "'yes'" in instruction
        assert "'no'" in instruction
        assert instruction.removeprefix("INSTRUCTION: ") == paper_instruction(
            "edits", template).text
        # Nothing the paper does not show: no editor type, edit summary or minor flag.
        for word in ("anonymous", "IP", "summary", "minor", "registered"):
            assert word not in message.content
        assert task.max_tokens == 15 and task.query.startswith("Wikipedia article: Beta")
        instructions.add(instruction)
    assert len(instructions) == 5


def test_texts_that_fit_are_shown_whole() -> None:
    texts = {"before": "a" * 5000, "deleted": "", "added": "b" * 3000}
    assert fit_texts(texts) == texts  # 8,000 characters exactly: the budget itself


def test_the_long_texts_are_cut_to_an_equal_share_keeping_both_ends() -> None:
    # By hand: budget 100, lengths 10 / 120 / 300. The 10 fits its share (33), which leaves
    # 90 for two texts, 45 each; both long ones are cut to their first and last 22 characters.
    before = "B" * 22 + "x" * 76 + "E" * 22
    added = "S" + "y" * 298 + "T"
    fitted = fit_texts({"before": before, "deleted": "0123456789", "added": added}, budget=100)
    assert fitted["deleted"] == "0123456789"
    assert fitted["before"] == "B" * 22 + " [… 76 characters left out …] " + "E" * 22
    assert fitted["added"] == ("S" + "y" * 21 + " [… 256 characters left out …] "
                               + "y" * 21 + "T")


def test_a_whole_section_rewrite_is_shortened_in_the_prompt(
    tmp_path: Path, settings: Settings,
) -> None:
    # A real failure: an edit adding a 43,069-character section made a 19,394-token prompt,
    # over the 4,096-token context. Its prompt now holds the budget and says what was cut.
    added = "Start. " + "Words here. " * 4000 + "End."  # 48,011 characters
    long = dataclasses.replace(EDITS[0], edit=dataclasses.replace(
        EDITS[0].edit, paragraph_before="", deleted_text="", added_text=added))
    path = tmp_path / "labelled.jsonl"
    write_edits([long], path)
    bench = load_benchmark("hellofresh-edits", settings, {"path": str(path)})
    [sample] = bench.samples()
    content = bench.render(sample, "manual").messages[0].content
    addition = content.split("PROPOSED ADDITION: ", 1)[1].split("\nINSTRUCTION: ")[0]
    assert addition.startswith("Start. Words here.") and addition.endswith("Words here. End.")
    assert len(addition) < EDIT_TEXT_CHARS + 60
    assert "[… 40,011 characters left out …]" in addition


def test_a_labelled_file_with_discards_uses_iso_weeks(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "labelled.jsonl"
    write_edits([EDITS[0], Discarded(page_id=9, title="X", revision_id=9, reason="too_short"),
                 EDITS[2], EDITS[2]], path)
    samples = list(load_benchmark("hellofresh-edits", settings, {"path": str(path)}).samples())
    assert [s.id for s in samples] == ["edit-1-101", "edit-3-301"]  # discard and repeat skipped
    assert [s.metadata["period"] for s in samples] == ["2024-W10", "2024-W11"]


def test_control_partners_pair_everyone_with_someone_else_deterministically() -> None:
    ids = [f"s{i}" for i in range(9)]
    titles = [""] * 9
    partners = control_partners(ids, titles, seed=0)
    assert all(p is not None and p != i for i, p in enumerate(partners))
    assert sorted(p for p in partners if p is not None) == list(range(9))  # a permutation
    assert control_partners(ids, titles, seed=0) == partners
    assert control_partners(list(reversed(ids)), titles, seed=0) == [
        8 - p for p in reversed(partners) if p is not None]  # independent of file order
    assert control_partners(ids, titles, seed=1) != partners
    assert control_partners(["a"], [""], 0) == [None]


def test_control_partners_avoid_the_same_article() -> None:
    ids = ["a1", "a2", "a3", "b1"]
    titles = ["A", "A", "A", "B"]
    for seed in range(10):
        partners = control_partners(ids, titles, seed)
        for i, p in enumerate(partners):
            assert p is not None and p != i
            if titles[i] == "A":
                assert titles[p] == "B"  # the only other article


def test_samples_carry_their_control_partner(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "edits.jsonl"
    write_balanced(build_balanced(EDITS, period="week", seed=0), path, period="week", seed=0)
    samples = list(load_benchmark("hellofresh-edits", settings, {"path": str(path)}).samples())
    by_id = {s.id: s for s in samples}
    for s in samples:
        control = s.metadata["control"]
        partner = by_id[control["id"]]
        assert partner.metadata["title"] != s.metadata["title"] or s.metadata["title"] == ""
        assert control["source"] == partner.metadata["source"]
        assert control["subject"].startswith(f"Wikipedia article: {partner.metadata['title']}")


def test_wikipedia_url() -> None:
    assert wikipedia_url("Scott Newman (actor)") == (
        "https://en.wikipedia.org/wiki/Scott_Newman_(actor)")
