"""The figures of the README and the results pages are the result files' figures.

If a page is edited by hand, or a result file changes without ``make figures``, the rendered
text and the committed text differ and the first test fails with the diff's page named.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.experiments.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"


figures = load_script("figures")


# -- (a) the committed pages are their rendering --------------------------------------------


@pytest.mark.parametrize("page", figures.PAGES)
def test_committed_page_is_its_rendering(page: str) -> None:
    rendered = figures.render_all(pages=[page])[page]
    committed = (ROOT / page).read_text(encoding="utf-8")
    assert rendered == committed, (f"{page} differs from the result files' figures; run "
                                   f"`make figures` (or re-run the script that changed)")


def test_every_page_has_blocks_and_every_block_names_its_source() -> None:
    for page in figures.PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        blocks = list(figures.BLOCK.finditer(text))
        assert blocks, page
        for block in blocks:
            assert "Source: " in block["body"], (page, block["name"])
            assert "commit " in block["body"], (page, block["name"])


# -- (b) no number typed by hand in the README's results section ----------------------------

NUMBER = re.compile(r"(?<![\w.])[−+-]?(?:\d+(?:[.,]\d+)*|\.\d+)\s*%?")
"""Digits, decimals written ``.760``, percentages; a number inside a word (``Qwen2``) is not."""
LIST_MARKER = re.compile(r"^\s*\d+\.\s", re.M)


def numbers_outside_blocks(text: str) -> list[str]:
    """The numbers of ``text`` once rendered blocks, code spans and list markers are removed."""
    text = figures.BLOCK.sub("", text)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\([^)]*\.md[^)]*\)", "", text)  # link targets (docs/x.md#anchor)
    text = LIST_MARKER.sub("", text)
    return [m.group().strip() for m in NUMBER.finditer(text)]


def results_sections(readme: str) -> str:
    """The README's results sections: every ``## ...results`` section to the next heading."""
    parts = re.split(r"^(## .*)$", readme, flags=re.M)
    return "".join(body for head, body in zip(parts[1::2], parts[2::2], strict=True)
                   if "result" in head.lower())


def test_no_number_in_the_readme_results_sections_is_typed_by_hand() -> None:
    section = results_sections((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "<!-- figures:" in section
    assert numbers_outside_blocks(section) == []


def test_the_count_sees_a_typed_number() -> None:
    planted = ("<!-- figures:x -->\n.760 in a block\n<!-- /figures:x -->\n"
               "1. a list marker\nchecked is right on .812 of 150 (31 %), `code 7`, "
               "[page](docs/x.md#a-2)\n")
    assert numbers_outside_blocks(planted) == [".812", "150", "31 %"]


# -- (c) a missing file or field stops the render, naming both ------------------------------


def _copy_results(tmp_path: Path, names: list[str]) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for name in names:
        shutil.copy(EXPERIMENTS / "results" / name, folder / name)
    return folder


def test_missing_result_file_is_named(tmp_path: Path) -> None:
    env = figures.environment(figures.Results(_copy_results(tmp_path, [])))
    with pytest.raises(figures.FigureError, match=r"chat_accuracy_eval\.json: result file "
                                                  r"missing"):
        figures.render_block("readme_headline", env)


def test_missing_field_is_named_with_its_file(tmp_path: Path) -> None:
    folder = _copy_results(tmp_path, [])
    for path in (EXPERIMENTS / "results").glob("*.json"):
        shutil.copy(path, folder / path.name)
    shutil.copytree(EXPERIMENTS / "results" / "hellofresh_report", folder / "hellofresh_report")
    broken = json.loads((folder / "chat_latency.json").read_text(encoding="utf-8"))
    del broken["systems"]["checked"]["x_rag"]
    (folder / "chat_latency.json").write_text(json.dumps(broken), encoding="utf-8")
    env = figures.environment(figures.Results(folder))
    with pytest.raises(figures.FigureError,
                       match=r"chat_latency\.json: no field 'systems\.checked\.x_rag'"):
        figures.render_block("readme_headline", env)


def test_unknown_block_and_unbalanced_markers_are_named() -> None:
    env = figures.environment(figures.Results())
    with pytest.raises(figures.FigureError, match="no template for block 'nosuch'"):
        figures.render_page("<!-- figures:nosuch -->\n<!-- /figures:nosuch -->\n", env, "p.md")
    with pytest.raises(figures.FigureError, match=r"p\.md: unbalanced figure markers"):
        figures.render_page("<!-- figures:a -->\ntext\n", env, "p.md")


# -- formats and marks --------------------------------------------------------------------


def test_number_formats_follow_the_pages() -> None:
    assert figures.dec(0.76) == ".760"
    assert figures.dec(0.0733) == ".073"
    assert figures.dec(1.0) == "1.00"
    assert figures.signed(-0.02) == "\u2212.020"
    assert figures.signed(0.0667) == "+.067"
    assert figures.signed(0.0) == ".000"
    assert figures.ci([0.78, 0.7072, 0.8388]) == "[.71, .84]"
    assert figures.ci([-0.1067, 0.0667], 3, True) == "[\u2212.107, +.067]"
    assert figures.pct(0.306) == "30.6"
    assert figures.count(1359) == "1,359"
    assert figures.first_number("-0.173 [-0.386, 0.000]") == -0.173
    assert figures.month("2026-11-27T11:56:20+00:00") == "November 2026"


def _node(**fields: object) -> object:
    base = {"command": "python experiments/x.py", "commit": "0123456789abcdef",
            "src_uncommitted_changes": False,
            "data": {"shares": {"real": 1.0, "constructed": 0.0, "synthetic": 0.0},
                     "sample": "out of sample: why", "figure": "measured"}}
    return figures.Node({**base, **fields}, "x.json")


def test_marks_name_weak_provenance() -> None:
    assert figures.marks(_node()) == []
    assert figures.marks(_node(src_uncommitted_changes=True)) == [figures.MARK_DIRTY]
    assert figures.marks(_node(allow_dirty=True)) == [figures.MARK_DIRTY]
    assert figures.marks(_node(command="python x.py --out /tmp/a")) == [figures.MARK_TEMP]
    assert figures.marks(_node(command="python x.py --report-only --resume")) == [
        figures.MARK_UNRECORDED]
    carried = _node(command="python x.py --report-only",
                    generated_by={"command": "python x.py --no-cache", "commit": "abc"})
    assert figures.marks(carried) == []
    noted = _node(command="python x.py --ids /tmp/a", provenance_note="now a repository file")
    assert figures.marks(noted) == []
    assert figures.marks(figures.Node({"wall_time_s": 1}, "y.json")) == [
        figures.MARK_NO_HEADER]


def test_source_line_states_file_command_commit_and_data_kind() -> None:
    results = figures.Results()
    line = figures.source("chat_latency", results=results)
    assert "`chat_latency.json`" in line
    assert "`python experiments/chat_latency.py --questions 24`" in line
    assert "commit a5fffd4" in line
    assert "100 % constructed" in line and "measured" in line


def test_halves_round_up_as_a_reader_rounds_the_stored_value() -> None:
    assert figures.dec(0.835, 2) == ".84"  # binary formatting would say .83
    assert figures.dec(0.625, 2) == ".63"
    assert figures.fixed(30.65, 1) == "30.7"


def test_report_cells_are_written_as_the_pages_write_them() -> None:
    assert figures.cell_interval("0.227 [0.003, 0.468]") == "+.227 [.003, .468]"
    assert figures.cell_interval("-0.173 [-0.386, 0.000]") == (
        "\u2212.173 [\u2212.386, .000]")
    with pytest.raises(figures.FigureError, match="not a value with an interval"):
        figures.cell_interval("n/a")


def test_per_class_scores_count_the_item_rows() -> None:
    rows = [{"template": "5", "human": "correct", "s": "correct"},
            {"template": "5", "human": "correct", "s": "incorrect"},
            {"template": "5", "human": "incorrect", "s": "incorrect"},
            {"template": "1", "human": "incorrect", "s": "correct"}]
    # class C on template 5: 1 true positive, 0 false positives, 1 false negative
    precision, recall, f1 = figures.per_class(rows, "s", "correct", template="5")
    assert (precision, recall) == (1.0, 0.5)
    assert f1 == pytest.approx(2 / 3)
    assert figures.count_items(rows, human="incorrect") == 2
    with pytest.raises(figures.FigureError, match="no item rows match"):
        figures.per_class(rows, "s", "correct", template="9")


def test_a_file_in_git_history_is_read_and_a_missing_one_named() -> None:
    old = figures.from_git("1135578", "experiments/results/chat_latency.json")
    assert old.systems.fast.mean_s == 20.42
    with pytest.raises(figures.FigureError, match=r"1135578:experiments/results/nosuch\.json"):
        figures.from_git("1135578", "experiments/results/nosuch.json")


def test_audit_sorts_weak_files_by_what_is_weak(tmp_path: Path) -> None:
    head = {"commit": "0123456789", "src_uncommitted_changes": False, "date": "2026-11-27"}
    files = {
        "clean": {**head, "command": "python experiments/x.py"},
        "dirty": {**head, "command": "python experiments/x.py",
                  "src_uncommitted_changes": True},
        "tmp": {**head, "command": "python experiments/x.py --ids /tmp/ids.txt"},
        "noted": {**head, "command": "python experiments/x.py --out /tmp/o",
                  "provenance_note": "an output folder"},
        "rerun": {**head, "command": "python experiments/x.py --report-only --resume"},
        "bare": {"wall_time_s": 1},
        "x_replies": {"replies": []},
    }
    for name, body in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(body), encoding="utf-8")
    found = figures.audit(tmp_path)
    assert found["uncommitted source"] == ["dirty.json"]
    assert found["temporary folder in the command"] == ["tmp.json"]
    assert found["temporary folder, noted"] == ["noted.json"]
    assert found["generating command not recorded"] == ["rerun.json"]
    assert found["no provenance header"] == ["bare.json"]
