"""`freshwiki changes diff`, in-process and (for the error path) as the real executable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from freshwiki.cli import app
from freshwiki.errors import FreshwikiError

runner = CliRunner()


def test_diff_two_chosen_dates_of_a_real_history(shared_data: Path) -> None:
    path = shared_data / "wikipedia/histories/article-pear.xml"
    result = runner.invoke(app, ["changes", "diff", str(path), "--from", "2002-03-01",
                                 "--to", "2002-08-31T02:20:00", "--changes-only"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == ("Pear: as of 2002-03-01, revision 185185 (2002-02-25 15:43) → "
                        "as of 2002-08-31, revision 185241 (2002-08-31 02:16)")
    assert lines[1] == "  + propagating apples and other fruit trees"
    assert lines[2] == "  13 unchanged, 0 changed, 1 new, 0 deleted"
    assert "Text from Wikipedia, CC BY-SA 4.0." in result.output
    assert "Pears are consumed fresh" not in result.output  # unchanged, hidden


def test_diff_json_gives_growover_labels_per_pair(shared_data: Path) -> None:
    path = shared_data / "wikipedia/histories/article-pear.xml"
    result = runner.invoke(app, ["changes", "diff", str(path), "--from", "2002-03-01",
                                 "--to", "2002-08-31T02:20:00", "--json"])
    assert result.exit_code == 0, result.output
    (line,) = result.output.strip().splitlines()
    data = json.loads(line)
    assert data["growover"] == {"S": {str(i): i for i in range(13)}, "C": [], "N": [13],
                                "D": []}
    assert data["new"]["sentences"][13]["label"] == "new"
    assert data["old"]["revision_id"] == 185185


def test_diff_records_a_redirect_as_skipped(shared_data: Path) -> None:
    path = shared_data / "wikipedia/histories/article-pyrus.xml"
    result = runner.invoke(app, ["changes", "diff", str(path), "--every", "month",
                                 "--from", "2008-01-15", "--to", "2008-02-09"])
    assert result.exit_code == 0, result.output
    # Cuts: Jan 15 and Jan 31 (the redirect 104997738 of 2007) and Feb 9 (the disambiguation
    # page of Feb 7, reverted to a redirect on Feb 10).
    assert result.output.splitlines()[:2] == [
        "skipped Pyrus (page 9261472): the old version at 2008-01-15 (revision 104997738) "
        "is a redirect to 'Pear'",
        "skipped Pyrus (page 9261472): the old version at 2008-01-31 (revision 104997738) "
        "is a redirect to 'Pear'",
    ]


def test_bad_arguments_are_refused() -> None:
    result = runner.invoke(app, ["changes", "diff", "a.xml", "--every", "week"])
    assert result.exit_code == 2 and "only `month`" in result.output
    result = runner.invoke(app, ["changes", "diff", "a.xml", "b.xml", "--from", "2020-01-01"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["changes", "diff", "missing.xml"])
    assert isinstance(result.exception, FreshwikiError)
    assert "dump missing.xml not found" in result.exception.message


def test_missing_dump_is_a_clean_error_from_the_executable(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("freshwiki")
    proc = subprocess.run([str(exe), "changes", "diff", str(tmp_path / "nope.xml")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    message = " ".join(proc.stderr.split())  # the error console wraps long lines
    assert message.startswith(f"error: dump {tmp_path / 'nope.xml'} not found hint: ")
    assert "Traceback" not in proc.stderr


def test_diff_with_llm_checks_the_ambiguous_pair(shared_data: Path, tmp_path: Path) -> None:
    # Revision 185408 rewords the link "propagating apples and other fruit trees" as "Fruit
    # tree propagation" (real embedder: similarity ~0.84, so an NLI check is due). Without
    # an LLM the label is marked "?"; with the (scripted) LLM saying entailment it is not.
    path = shared_data / "wikipedia/histories/article-pear.xml"
    span = ["--from", "2002-08-31T03:00:00", "--to", "2002-08-31T04:00:00"]
    plain = runner.invoke(app, ["changes", "diff", str(path), *span, "--changes-only"])
    assert plain.exit_code == 0, plain.output
    assert "  = ? Fruit tree propagation" in plain.output
    assert "1 label(s) marked ? are unverified" in plain.output

    # The default judge asks in batches: a list of relations, one per pair, in pair order.
    script = tmp_path / "nli.jsonl"
    script.write_text(json.dumps({"text": json.dumps({"relations": ["entailment"]})}) + "\n")
    checked = runner.invoke(app, ["changes", "diff", str(path), *span, "--llm",
                                  "--model", f"scripted:{script}", "--json"])
    assert checked.exit_code == 0, checked.output
    data = json.loads(checked.output)
    label = data["new"]["sentences"][13]
    assert (label["label"], label["step"], label["relation"], label["ambiguous"]) == (
        "unchanged", "llm", "entailment", False)
    assert data["llm_calls"] == 1

    # --llm-batch 1 is the one-pair judge: its own prompt and reply shape.
    single = tmp_path / "nli-single.jsonl"
    single.write_text(json.dumps({"text": json.dumps(
        {"reason": "the same link, reworded", "relation": "entailment"})}) + "\n")
    checked = runner.invoke(app, ["changes", "diff", str(path), *span, "--llm",
                                  "--llm-batch", "1", "--model", f"scripted:{single}",
                                  "--json"])
    assert checked.exit_code == 0, checked.output
    label = json.loads(checked.output)["new"]["sentences"][13]
    assert (label["label"], label["step"], label["relation"]) == ("unchanged", "llm",
                                                                  "entailment")


def test_llm_batch_option_is_checked_and_documented_with_the_judges_default() -> None:
    from freshwiki.changes.snapshots import DEFAULT_BATCH_SIZE

    result = runner.invoke(app, ["changes", "diff", "a.xml", "--llm", "--llm-batch", "0"])
    assert result.exit_code == 2 and "--llm-batch" in result.output
    for command in (["changes", "diff"], ["growover", "build"], ["growover", "update"]):
        help_text = runner.invoke(app, [*command, "--help"]).output.replace("│", " ")
        assert f"(default {DEFAULT_BATCH_SIZE}" in " ".join(help_text.split()), command
