"""`freshwiki eval` and `freshwiki runs` as a user runs them: the real executable, piped.

The tiny benchmark and the slow system come from ``tests.systems.testkit``, loaded into the
subprocess through ``FRESHWIKI_PLUGINS``; models are scripted JSONL files.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXE = Path(sys.executable).with_name("freshwiki")


def env() -> dict[str, str]:
    return {**os.environ, "FRESHWIKI_PLUGINS": "tests.systems.testkit",
            "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=300,
                          env=env())


def script(path: Path, *steps: dict[str, str], repeat: int = 1) -> str:
    path.write_text("\n".join(json.dumps(s) for s in steps * repeat) + "\n")
    return f"scripted:{path}"


def flat(text: str) -> str:
    """Undo rich's hard wrapping at 80 columns of piped output."""
    return " ".join(text.split())


def db_counts(home: Path, table: str) -> tuple[int, int]:
    conn = sqlite3.connect(home / "runs" / "runs.sqlite")
    try:
        keys = {"outputs": "sample_id || '/' || template",
                "scores": "sample_id || '/' || template || '/' || scorer"}[table]
        row = conn.execute(f"SELECT COUNT(*), COUNT(DISTINCT {keys}) FROM {table}").fetchone()
        return int(row[0]), int(row[1])
    finally:
        conn.close()


def test_eval_resume_and_runs_listing(tmp_path: Path, _isolated_home: Path) -> None:
    model = script(tmp_path / "a.jsonl", {"text": "It is 4."}, repeat=20)
    args = ["eval", "tiny", "--model", model, "--judge", "none", "--templates", "plain,terse",
            "--limit", "3", "--json"]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    # Sample t02 ("2 plus 2") is the only one whose answer is 4: mean 1/3 per template.
    assert [(m["template"], m["n"]) for m in summary["means"]] == [("plain", 3), ("terse", 3)]
    assert all(abs(m["mean"] - 1 / 3) < 1e-9 for m in summary["means"])
    assert (summary["new_outputs"], summary["complete"], summary["failures"]) == (6, 6, [])
    assert "6/6" in first.stderr and "it/s" in first.stderr  # the final progress line
    assert summary["config"]["model"] == "scripted:script:a.jsonl"

    again = json.loads(cli(*args[:-3], "--limit", "4", "--json").stdout)
    assert again["run_id"] == summary["run_id"]
    assert (again["already_done"], again["new_outputs"], again["complete"]) == (6, 2, 8)

    listing = cli("runs", "--json")
    assert listing.returncode == 0, listing.stderr
    [row] = json.loads(listing.stdout)
    assert (row["run_id"], row["benchmark"], row["system"], row["model"]) == (
        summary["run_id"], "tiny", "vanilla", model)
    assert (row["outputs"], row["scores"], row["failures"], row["limit"]) == (8, 8, 0, 4)
    table = cli("runs")
    assert table.returncode == 0 and summary["run_id"] in table.stdout

    human = cli(*args[:-1])
    assert human.returncode == 0
    assert "tiny-exact" in human.stdout and "0.333" in human.stdout
    assert f"run id: {summary['run_id']}" in flat(human.stderr)


def test_runs_without_any_run_says_how_to_start(_isolated_home: Path) -> None:
    proc = cli("runs")
    assert proc.returncode == 0 and "freshwiki eval" in flat(proc.stdout)
    assert json.loads(cli("runs", "--json").stdout) == []


def test_per_item_errors_are_reported_and_exit_0_then_retried(tmp_path: Path) -> None:
    bad = script(tmp_path / "bad.jsonl", {"text": "It is 2."}, {"error": "bad_request"},
                 {"text": "It is 6."}, {"text": "It is 8."})
    args = ["eval", "tiny", "--judge", "none", "--benchmark-option", "n=4", "--concurrency", "1"]
    proc = cli(*args, "--model", bad, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert [(f["sample_id"], f["stage"], f["error_type"]) for f in summary["failures"]] == [
        ("t02", "respond", "LLMRequestError")]
    assert summary["complete"] == 3
    assert "1 item(s) failed" in flat(proc.stderr) and "re-run the same command" in flat(
        proc.stderr)
    # t01, t03, t04 answered right (2, 6, 8): 1.0 over the 3 scored; with t02's failure
    # counted as incorrect, 3 / 4.
    [mean] = summary["means"]
    assert (mean["mean"], mean["n"], mean["n_failed"], mean["n_total"],
            mean["mean_with_failures"]) == (1.0, 3, 1, 4, 0.75)
    # Still failing: the table shows both means.
    (tmp_path / "bad.jsonl").write_text(json.dumps({"error": "bad_request"}) + "\n")
    human = flat(cli(*args, "--model", bad).stdout)
    assert "3 / 4" in human and "0.750" in human and "failures = incorrect" in human
    # The same command with a model that works now retries only that item.
    (tmp_path / "bad.jsonl").write_text(json.dumps({"text": "It is 4."}) + "\n")
    fixed = json.loads(cli(*args, "--model", bad, "--json").stdout)
    assert (fixed["run_id"], fixed["new_outputs"], fixed["complete"], fixed["failures"]) == (
        summary["run_id"], 1, 4, [])
    assert fixed["means"][0]["mean"] == 1.0


def test_a_systemic_failure_stops_with_exit_2(tmp_path: Path) -> None:
    model = script(tmp_path / "down.jsonl", {"error": "bad_request"}, repeat=10)
    proc = cli("eval", "tiny", "--model", model, "--judge", "none", "--concurrency", "1",
               "--max-consecutive-failures", "2")
    assert proc.returncode == 2
    err = flat(proc.stderr)
    assert "stopped: the last 2 attempts at responding all failed with LLMRequestError" in err
    assert "re-run the same command to resume" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "expected"), [
    (["--system", "rag", "-o", "index=main"], "freshwiki index build --name main"),
    (["--system", "nope"], "unknown system 'nope'"),
    (["--option", "k=3"], "system 'vanilla' has no option 'k'"),
    (["--templates", "9"], "has no template '9'"),
])
def test_setup_errors_are_clean_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    model = script(tmp_path / "a.jsonl", {"text": "x"}, repeat=10)
    proc = cli("eval", "tiny", "--model", model, "--judge", "none", *args)
    assert proc.returncode == 2
    assert expected in flat(proc.stderr) and "Traceback" not in proc.stderr


def test_kill_9_mid_run_loses_nothing_committed_and_never_duplicates(
    tmp_path: Path, _isolated_home: Path,
) -> None:
    n = 30
    model = script(tmp_path / "a.jsonl", {"text": "It is 4."}, repeat=2 * n)
    base = ["eval", "tiny", "--system", "slow", "--model", model, "--judge", "none",
            "--benchmark-option", f"n={n}", "--concurrency", "2", "--json"]
    proc = subprocess.Popen([str(EXE), *base, "--option", "delay=0.15"], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline, "no output was committed in 120 s"
            try:
                if db_counts(_isolated_home, "outputs")[0] >= 6:
                    break
            except sqlite3.OperationalError:  # the store is not created yet
                pass
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    outputs, distinct = db_counts(_isolated_home, "outputs")
    scores, _ = db_counts(_isolated_home, "scores")
    assert 6 <= outputs < n and outputs == distinct
    assert scores in (outputs, outputs - 1, outputs - 2)  # at most the 2 in flight unscored

    # The same run (the delay is not part of it), resumed at full speed.
    resumed = subprocess.run([str(EXE), *base, "--option", "delay=0"], env=env(),
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert (summary["new_outputs"], summary["new_scores"]) == (n - outputs, n - scores)
    assert (summary["complete"], summary["items"], summary["failures"]) == (n, n, [])
    assert db_counts(_isolated_home, "outputs") == (n, n)
    assert db_counts(_isolated_home, "scores") == (n, n)
    # Every answer was "It is 4.": only t02 is right.
    assert summary["means"] == [{"template": "plain", "scorer": "tiny-exact", "mean": 1 / n,
                                 "n": n, "n_failed": 0, "n_total": n,
                                 "mean_with_failures": 1 / n}]




_PLUGIN = '''"""A benchmark whose prompt is a template file beside it."""
from pathlib import Path

from freshwiki.benchmarks import Sample, Task, register_benchmark, register_benchmark_analysis
from freshwiki.llm import Message
from freshwiki.results import ReportSection

from promptbench import _helper

HERE = Path(__file__).parent


class PromptBench:
    name = "promptbench"
    templates = ("ask",)
    default_templates = ("ask",)
    breakdowns = ()

    def samples(self):
        for i in range(2):
            yield Sample(id=f"p{i}", input=f"q{i}", targets=("4",))

    def render(self, sample, template):
        text = (HERE / "templates" / "ask.txt").read_text().format(q=sample.input)
        return Task(sample=sample, template=template, messages=(Message.user(text),),
                    query=sample.input, max_tokens=_helper.MAX_TOKENS)

    def scorers(self, judge):
        from tests.systems.testkit import ExactScorer
        return [ExactScorer()]


@register_benchmark("promptbench")
def _make(settings, options):
    return PromptBench()


class Tally:
    """Its own report section: how many answers held the gold digit, per run."""

    def report_sections(self, runs, labels):
        rows = [(label, sum(i.value for i in run.items), len(run.items))
                for run, label in zip(runs, labels)]
        return [ReportSection(__name__, "tally.html.j2", "tally.md.j2", {"rows": rows})]

    def run_sections(self, run, breakdown):
        return [ReportSection(__name__, "tally_run.html.j2", "tally_run.md.j2",
                              {"answers": [i.output for i in run.items]})]


register_benchmark_analysis("promptbench")(Tally)
'''

# The plug-in's report templates, beside its prompt in its own folder.
_SECTIONS = {
    "tally.html.j2": '<section id="tally">{% for label, hits, n in rows %}'
                     '<p class="tally">{{ label }}: {{ hits|num(0) }} of {{ n }}</p>'
                     '{% endfor %}</section>\n',
    "tally.md.j2": "## Tally\n{% for label, hits, n in rows %}\n{{ label|md }}: "
                   "{{ hits|num(0) }} of {{ n }}\n{% endfor %}\n",
    "tally_run.html.j2": '<p class="answers">{{ answers|join(" / ") }}</p>\n',
    "tally_run.md.j2": "Answers: {{ answers|join(' / ') }}\n",
}


def test_an_edited_prompt_or_module_starts_a_new_run_and_runs_diff_names_it(
    tmp_path: Path, _isolated_home: Path,
) -> None:
    pkg = tmp_path / "plugins" / "promptbench"
    (pkg / "templates").mkdir(parents=True)
    (pkg / "__init__.py").write_text(_PLUGIN)
    (pkg / "_helper.py").write_text('"""Limits."""\nMAX_TOKENS = 20\n')
    (pkg / "templates" / "ask.txt").write_text("Answer: {q}\n")
    for name, text in _SECTIONS.items():
        (pkg / "templates" / name).write_text(text)
    model = script(tmp_path / "m.jsonl", {"text": "It is 4."}, repeat=20)
    environ = {**env(), "FRESHWIKI_PLUGINS": "promptbench", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), str(REPO),
                                              os.environ.get("PYTHONPATH", "")])}

    def run(*args: str) -> dict[str, object]:
        proc = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=300,
                              env=environ)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout))

    evaluate = ("eval", "promptbench", "--model", model, "--judge", "none", "--json")
    a = run(*evaluate)
    assert a["new_outputs"] == 2

    # The plug-in brings its own report sections, with no change to freshwiki.evaluation:
    # one across runs (after the comparisons), one inside the run's part.
    report = tmp_path / "report"
    done = subprocess.run([str(EXE), "report", str(a["run_id"]), "--out", str(report)],
                          capture_output=True, text=True, timeout=300, env=environ)
    assert done.returncode == 0, done.stderr
    html, md = ((report / name).read_text() for name in ("report.html", "report.md"))
    # The scripted model says "It is 4." to both samples, whose gold is 4: 2 of 2.
    assert re.search(r'<section id="tally"><p class="tally">[^<]+: 2 of 2</p></section>', html)
    assert '<p class="answers">It is 4. / It is 4.</p>' in html
    assert "## Tally" in md and "Answers: It is 4. / It is 4." in md
    assert html.index('id="tally"') < html.index('class="answers"')  # report-wide first
    again = run(*evaluate)
    assert (again["run_id"], again["new_outputs"]) == (a["run_id"], 0)

    # Rewording the helper's docstring is not a change of what runs.
    (pkg / "_helper.py").write_text('"""How long answers may be."""\nMAX_TOKENS = 20\n')
    assert run(*evaluate)["run_id"] == a["run_id"]

    (pkg / "templates" / "ask.txt").write_text("Reply briefly: {q}\n")
    b = run(*evaluate)
    assert b["run_id"] != a["run_id"] and b["new_outputs"] == 2
    (pkg / "_helper.py").write_text('"""How long answers may be."""\nMAX_TOKENS = 30\n')
    c = run(*evaluate)
    assert c["run_id"] not in (a["run_id"], b["run_id"])

    ab = run("runs", "diff", str(a["run_id"]), str(b["run_id"]), "--json")
    assert [(d["key"], d["kind"], d["identity"]) for d in ab["differences"]  # type: ignore[attr-defined]
            if d["identity"]] == [("prompts.promptbench/templates/ask.txt", "changed", True)]
    bc = run("runs", "diff", str(b["run_id"])[:6], str(c["run_id"]), "--json")
    assert [d["key"] for d in bc["differences"] if d["identity"]] == [  # type: ignore[attr-defined]
        "code.promptbench._helper"]
    human = subprocess.run([str(EXE), "runs", "diff", str(a["run_id"]), str(c["run_id"])],
                           capture_output=True, text=True, timeout=300, env=environ)
    assert human.returncode == 0, human.stderr
    assert "2 identity key(s) differ" in flat(human.stdout)
