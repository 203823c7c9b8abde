"""WikiContradict's C / PC / IC tables (the paper's Tables 2 and 5) and the judge line in reports.

Runs are built by hand with known labels; every expected percentage below was computed by hand
from the label lists in this file (shown beside each table).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from pathlib import Path
from typing import Any

from freshwiki.benchmarks.wikicontradict.analysis import contradiction_tables
from freshwiki.evaluation import RunInfo, RunResults, ScoredItem, write_report
from tests.browser import dump_dom

WHEN = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.UTC)
TYPE = {"e1": "explicit", "e2": "explicit", "i1": "implicit", "i2": "implicit", "u1": "unknown"}
C, PC, IC = "correct", "partially_correct", "incorrect"
# run A, judge: template 1 -> e1 C, e2 PC, i1 PC, i2 IC, u1 PC
#   all 5: C 1 = 20.0, PC 3 = 60.0, IC 1 = 20.0; exp 2: 50.0 / 50.0 / 0.0; imp 2: 0.0 / 50.0 / 50.0
# template 2 -> e1 C, e2 IC, i1 C, i2 C, u1 C
#   all 5: C 80.0, IC 20.0; exp 2: 50.0 / 50.0; imp 2: 100.0 / 0.0
# template 5.4 -> e1 C, i1 IC: all 2: 50.0 / 50.0; exp 1: 100.0 / 0.0; imp 1: 0.0 / 100.0
A_JUDGE = {"1": {"e1": C, "e2": PC, "i1": PC, "i2": IC, "u1": PC},
           "2": {"e1": C, "e2": IC, "i1": C, "i2": C, "u1": C},
           "5.4": {"e1": C, "i1": IC}}
# run A, match: template 1 all correct -> 100.0 everywhere, n 5 / 2 / 2
A_MATCH = {"1": {s: C for s in TYPE}}
# run B, judge: template 1 -> e1 IC, e2 IC, i1 C
#   all 3: C 33.3, PC 0.0, IC 66.7; exp 2: 0.0 / 0.0 / 100.0; imp 1: 100.0 / 0.0 / 0.0
B_JUDGE = {"1": {"e1": IC, "e2": IC, "i1": C}}


def _info(run_id: str, label: str, benchmark: str = "wikicontradict",
          judge: str | None = "sha:judge") -> RunInfo:
    hashes = {"model": "sha:model"} | ({"judge": judge} if judge else {})
    return RunInfo(run_id=run_id, benchmark=benchmark, system="vanilla", model="local:m",
                   config={"judge_spec": "local:j" if judge else None,
                           "scorers": ["wikicontradict-judge", "wikicontradict-match"]},
                   code_version="0.1.0", model_hashes=hashes, created_at=WHEN,
                   updated_at=WHEN, label=label)


def _items(scorer: str, labels: dict[str, dict[str, str]]) -> list[ScoredItem]:
    return [ScoredItem(sample_id=s, template=t, scorer=scorer, value=1.0 if lab == C else 0.0,
                       label=lab, metadata={"contradiction": TYPE[s]}, output=f"answer {s}")
            for t, by_sample in labels.items() for s, lab in by_sample.items()]


def runs(judge_b: str = "sha:model") -> list[RunResults]:
    a = RunResults(_info("aaa111", "A"), tuple(_items("wikicontradict-judge", A_JUDGE)
                                               + _items("wikicontradict-match", A_MATCH)))
    b = RunResults(_info("bbb222", "B", judge=judge_b),
                   tuple(_items("wikicontradict-judge", B_JUDGE)))
    other = RunResults(_info("ccc333", "other", benchmark="tiny"), (ScoredItem(
        sample_id="t1", template="plain", scorer="tiny-exact", value=1.0, label=C),))
    return [a, b, other]


def test_tables_hold_the_hand_computed_shares() -> None:
    tables = contradiction_tables(runs(), ["A", "B", "other"])
    assert [t.scorer for t in tables] == ["wikicontradict-judge", "wikicontradict-match"]
    judge = tables[0]
    assert judge.runs == ("A", "B") and judge.templates == ("1", "2", "5.4")
    assert judge.classes == {"1": (C, PC, IC), "2": (C, IC), "5.4": (C, IC)}
    cell = judge.cell("A", "1", "all")
    assert cell is not None and cell.n == 5
    assert [cell.percent(x) for x in (C, PC, IC)] == [20.0, 60.0, 20.0]
    implicit = judge.cell("A", "1", "implicit")
    assert implicit is not None and [implicit.percent(x) for x in (C, PC, IC)] == [0.0, 50.0, 50.0]
    assert judge.cell("B", "2", "all") is None
    assert judge.table5_rows() == (("1", "A"), ("1", "B"), ("2", "A"), ("5.4", "A"))
    assert tables[1].runs == ("A",)


TABLE2 = """\
| | A all | A exp | A imp | B all | B exp | B imp |
|---|---|---|---|---|---|---|
| **Prompt template 1** | | | | | | |
| C | 20.0 | 50.0 | 0.0 | 33.3 | 0.0 | 100.0 |
| PC | 60.0 | 50.0 | 50.0 | 0.0 | 0.0 | 0.0 |
| IC | 20.0 | 0.0 | 50.0 | 66.7 | 100.0 | 0.0 |
| n | 5 | 2 | 2 | 3 | 2 | 1 |
| **Prompt template 2** | | | | | | |
| C | 80.0 | 50.0 | 100.0 | — | — | — |
| IC | 20.0 | 50.0 | 0.0 | — | — | — |
| n | 5 | 2 | 2 | — | — | — |
| **Prompt template 5.4** | | | | | | |
| C | 50.0 | 100.0 | 0.0 | — | — | — |
| IC | 50.0 | 0.0 | 100.0 | — | — | — |
| n | 2 | 1 | 1 | — | — | — |
"""

TABLE5 = """\
| template | run | all C | all PC | all IC | all n | exp C | exp PC | exp IC | exp n \
| imp C | imp PC | imp IC | imp n |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| 1 | A | 20.0 | 60.0 | 20.0 | 5 | 50.0 | 50.0 | 0.0 | 2 | 0.0 | 50.0 | 50.0 | 2 |
| 1 | B | 33.3 | 0.0 | 66.7 | 3 | 0.0 | 0.0 | 100.0 | 2 | 100.0 | 0.0 | 0.0 | 1 |
| 2 | A | 80.0 | – | 20.0 | 5 | 50.0 | – | 50.0 | 2 | 100.0 | – | 0.0 | 2 |
| 5.4 | A | 50.0 | – | 50.0 | 2 | 100.0 | – | 0.0 | 1 | 0.0 | – | 100.0 | 1 |
"""


def test_markdown_lays_the_shares_out_as_tables_2_and_5(tmp_path: Path) -> None:
    _, md_path = write_report(runs(), tmp_path)
    text = md_path.read_text(encoding="utf-8")
    judge = text[text.index("### wikicontradict-judge: by template"):]
    assert TABLE2 in judge
    assert TABLE5 in judge[judge.index("### wikicontradict-judge: by run"):]
    match = text[text.index("### wikicontradict-match: by template"):]
    assert "| C | 100.0 | 100.0 | 100.0 |\n| PC | 0.0 | 0.0 | 0.0 |" in match
    # the headline mean is the paper's correct rate: 1 + 4 + 1 correct of 12 answers
    assert "| A | wikicontradict | wikicontradict-judge | 0.500 " in text
    # the other benchmark's run gets no contradiction table
    assert "other all" not in text


def test_the_header_says_when_the_judge_is_the_model_under_test(tmp_path: Path) -> None:
    _, md_path = write_report(runs(judge_b="sha:model"), tmp_path)
    text = md_path.read_text(encoding="utf-8")
    assert "model local:m, judge local:j, code" in text  # A: another judge
    assert "judge local:j: the model under test, grading its own answers, code" in text  # B
    _, md_path = write_report(runs(judge_b="sha:other"), tmp_path / "2")
    assert "the model under test" not in md_path.read_text(encoding="utf-8")


MEASURE = """<script>
const cells = [...document.querySelectorAll('table.table2 td')].map(td => {
  const r = td.getBoundingClientRect();
  return {scorer: td.closest('table').dataset.scorer,
          template: td.parentElement.dataset.template, label: td.parentElement.dataset.label,
          run: td.dataset.run, type: td.dataset.type, text: td.textContent.trim(),
          w: r.width, h: r.height};
});
const heads = [...document.querySelector('table.table2').querySelectorAll('thead tr')].map(
  tr => [...tr.children].map(th => [th.textContent.trim(), th.getBoundingClientRect().width]));
const t5 = [...document.querySelector('table.table5').querySelectorAll('tbody tr')].map(
  tr => [...tr.children].map(td => td.textContent.trim()));
const judge = [...document.querySelectorAll('table.run-header tr')]
  .filter(tr => tr.querySelector('th').textContent === 'judge')
  .map(tr => tr.querySelector('td').textContent.trim());
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify({cells, heads, t5, judge});
document.body.appendChild(pre);
</script>"""


def _browser(html_path: Path, tmp_path: Path) -> dict[str, Any]:
    probe = tmp_path / "probe.html"
    probe.write_text(html_path.read_text(encoding="utf-8").replace("</body>",
                                                                   MEASURE + "</body>"))
    proc = dump_dom(probe, tmp_path / "profile")
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"no measurements in the DOM; chromium said:\n{proc.stderr[-2000:]}"
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return measured


def test_tables_render_in_a_real_browser(tmp_path: Path) -> None:
    html_path, _ = write_report(runs(), tmp_path / "report")
    measured = _browser(html_path, tmp_path)
    judge_cells = [c for c in measured["cells"] if c["scorer"] == "wikicontradict-judge"]
    shown = {(c["template"], c["label"], c["run"], c["type"]): c["text"] for c in judge_cells}
    # Table 2 of the judge, hand-computed above
    assert shown[("1", C, "A", "all")] == "20.0" and shown[("1", PC, "A", "all")] == "60.0"
    assert shown[("1", IC, "B", "explicit")] == "100.0"
    assert shown[("1", C, "B", "implicit")] == "100.0"
    assert shown[("2", C, "A", "implicit")] == "100.0" and shown[("2", IC, "B", "all")] == "—"
    assert shown[("5.4", "n", "A", "all")] == "2"
    assert ("2", PC, "A", "all") not in shown  # no partial class for template 2
    assert len(judge_cells) == 6 * (4 + 3 + 3)  # 2 runs x 3 types; rows C/PC/IC/n, C/IC/n x 2
    assert all(c["w"] > 0 and c["h"] > 0 for c in measured["cells"]), "a cell was not laid out"
    match = {(c["template"], c["label"], c["type"]): c["text"] for c in measured["cells"]
             if c["scorer"] == "wikicontradict-match"}
    assert match[("1", C, "implicit")] == "100.0" and match[("1", "n", "all")] == "5"
    # the run's heading spans its three columns (all / exp / imp) in the browser's layout
    top, sub = measured["heads"][0], measured["heads"][1]
    assert [name for name, _ in top] == ["", "A", "B"]
    assert [name for name, _ in sub] == ["all", "exp", "imp"] * 2
    assert abs(top[1][1] - sum(w for _, w in sub[:3])) < 2.0
    assert measured["t5"][0] == ["1", "A", "20.0", "60.0", "20.0", "5", "50.0", "50.0", "0.0",
                                 "2", "0.0", "50.0", "50.0", "2"]
    assert measured["t5"][2][2:6] == ["80.0", "–", "20.0", "5"]
    assert measured["judge"] == ["local:j", "local:j: the model under test, grading its own "
                                 "answers", "local:j"]
