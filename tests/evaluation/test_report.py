"""Reports from hand-built runs: numbers in the Markdown, SVG geometry, a real browser, the CLI."""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from freshwiki.benchmarks import Output, Sample, Score
from freshwiki.cli import app
from freshwiki.config import Settings
from freshwiki.errors import FreshwikiError
from freshwiki.evaluation import (
    FailedItem,
    RunInfo,
    RunResults,
    ScoredItem,
    bootstrap_ci,
    cluster_bootstrap_ci,
    write_report,
)
from freshwiki.evaluation._report import (
    ATTRIBUTION,
    BAR_GAP,
    BAR_WIDTH,
    GROUP_GAP,
    PLOT_HEIGHT,
    PLOT_LEFT,
    PLOT_TOP,
    infer_breakdowns,
)
from freshwiki.evaluation._store import ResultsStore, default_results_path
from tests.browser import dump_dom
from tests.cli.invoke import run_main as run_cli

LABEL = {1.0: "correct", 0.5: "partially_correct", 0.0: "incorrect"}
EXPLICIT = ("s1", "s2", "s3")
IMPLICIT = ("s4", "s5", "s6")
# judge: template 1 → explicit 1, 1, 1 / implicit .5, .5, .5; template 2 → 1, 0, 0 / 0, 0, 0.
JUDGE = {("1", "s1"): 1.0, ("1", "s2"): 1.0, ("1", "s3"): 1.0,
         ("1", "s4"): 0.5, ("1", "s5"): 0.5, ("1", "s6"): 0.5,
         ("2", "s1"): 1.0, ("2", "s2"): 0.0, ("2", "s3"): 0.0,
         ("2", "s4"): 0.0, ("2", "s5"): 0.0, ("2", "s6"): 0.0}
# match differs from judge twice: template 1 s4 (correct), template 2 s1 (incorrect).
MATCH = {**JUDGE, ("1", "s4"): 1.0, ("2", "s1"): 0.0}
WHEN = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.UTC)


def metadata(sample: str) -> dict[str, Any]:
    return {"contradiction": "explicit" if sample in EXPLICIT else "implicit",
            "title": f"Article {sample}"}


def info(run_id: str, label: str = "", **config: Any) -> RunInfo:
    return RunInfo(
        run_id=run_id, benchmark="wikicontradict", system="vanilla", model="local:tiny",
        config={"breakdowns": ["contradiction"], "scorers": ["judge", "match"], **config},
        code_version="0.1.0+deadbeef", model_hashes={"system": "sha256:0123abcd"},
        created_at=WHEN, updated_at=WHEN, label=label,
    )


def run_a() -> RunResults:
    items = []
    for scorer, values in (("judge", JUDGE), ("match", MATCH)):
        for (template, sample), value in values.items():
            items.append(ScoredItem(
                sample_id=sample, template=template, scorer=scorer, value=value,
                label=LABEL[value], explanation=f"{scorer} says {LABEL[value]}",
                metadata=metadata(sample),
                output=f"Answer of {sample} <script>alert('x')</script> | pipe",
            ))
    failure = FailedItem(sample_id="s7", template="1", stage="respond",
                         error_type="TimeoutError", message="no reply in 60 s")
    return RunResults(info=info("aaa111", label="vanilla"), items=tuple(items),
                      failures=(failure,))


def run_b() -> RunResults:
    """Everything wrong, plus a sample run A lacks; only the judge scorer."""
    items = [ScoredItem(sample_id=s, template=t, scorer="judge", value=0.0, label="incorrect",
                        metadata=metadata(s))
             for t in ("1", "2") for s in (*EXPLICIT, *IMPLICIT)]
    items.append(ScoredItem(sample_id="s9", template="1", scorer="judge", value=1.0,
                            label="correct", metadata=metadata("s9")))
    return RunResults(info=info("bbb222", label="rag"), items=tuple(items))


def fmt(ci: Any) -> str:
    return f"[{ci.low:.3f}, {ci.high:.3f}]"


class SvgCollector(HTMLParser):
    """Bars and whiskers per chart (the SVG's aria-label), and anything that would fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.chart = ""
        self.group: tuple[str, str] = ("", "")
        self.shapes: dict[tuple[str, str, str], dict[str, list[dict[str, str]]]] = {}
        self.tags: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        for name in ("src", "href"):
            if name in a and not a[name].startswith("#"):
                self.external.append(a[name])
        if tag == "svg":
            self.chart = a["aria-label"]
        elif tag == "g" and a.get("class") == "bar-group":
            self.group = (a["data-group"], a["data-series"])
        elif tag in ("rect", "line") and a.get("class") in ("bar", "whisker"):
            key = (self.chart, *self.group)
            self.shapes.setdefault(key, {}).setdefault(a["class"], []).append(a)

    handle_startendtag = handle_starttag


def parse(path: Path) -> SvgCollector:
    collector = SvgCollector()
    collector.feed(path.read_text(encoding="utf-8"))
    collector.close()
    return collector


def y_of(value: float) -> float:
    """Hand-derived mapping of the [0, 1] axis: 1 at the plot top, 0 PLOT_HEIGHT below."""
    return PLOT_TOP + (1.0 - value) * PLOT_HEIGHT


# ------------------------------------------------------------------ one run


def test_failures_counted_as_incorrect_beside_the_scored_mean_with_a_warning(
    tmp_path: Path,
) -> None:
    # Six answers all scored 1 by both scorers (CI [1, 1]); s7 and s8 failed to respond and
    # the judge failed on s6's answer.
    items = tuple(ScoredItem(sample_id=f"s{i}", template="1", scorer=scorer, value=1.0,
                             label="correct", metadata=metadata(f"s{i}"))
                  for scorer in ("judge", "match") for i in range(1, 7)
                  if not (scorer == "judge" and i == 6))
    failures = (
        FailedItem("s7", "1", "respond", "TimeoutError", "no reply"),
        FailedItem("s8", "1", "respond", "TimeoutError", "no reply"),
        FailedItem("s6", "1", "score", "ValueError", "judge said nothing", scorer="judge"),
    )
    run = RunResults(info=info("ccc333", label="flaky"), items=items, failures=failures)
    html_path, md_path = write_report([run], tmp_path / "out")
    md = md_path.read_text(encoding="utf-8")
    # judge: 5 scored of 8 → 5/8 = 0.625; match: 6 of 8 → 0.750; both outside [1, 1].
    assert "| flaky | wikicontradict | judge | 1.000 [1.000, 1.000] (n=5) | 5 / 8 | 0.625 ⚠ |" \
        in md
    assert "| judge | 1 | 5 / 8 | 1.000 [1.000, 1.000] | 0.625 ⚠ |" in md
    assert "| match | all | 6 / 8 | 1.000 [1.000, 1.000] | 0.750 ⚠ |" in md
    assert ("judge, template 1: 3 of 8 items failed; counted as incorrect the mean is 0.625, "
            "outside the scored mean's CI [1.000, 1.000].") in md
    page = html.unescape(html_path.read_text(encoding="utf-8"))
    assert "with the 3 failed counted as incorrect: <strong>0.625</strong>" in page
    assert page.count('class="warning"') == 4  # judge and match, template 1 and pooled


def test_markdown_has_the_hand_computed_tables(tmp_path: Path) -> None:
    html_path, md_path = write_report([run_a()], tmp_path / "out")
    assert (html_path.name, md_path.name) == ("report.html", "report.md")
    md = md_path.read_text(encoding="utf-8")

    t1_all = bootstrap_ci([1, 1, 1, 0.5, 0.5, 0.5])
    t2_explicit = bootstrap_ci([1, 0, 0])
    t2_all = bootstrap_ci([1, 0, 0, 0, 0, 0])
    assert ("| 1 | 1.000 [1.000, 1.000] (n=3) | 0.500 [0.500, 0.500] (n=3) | "
            f"0.750 {fmt(t1_all)} (n=6) |") in md
    assert (f"| 2 | 0.333 {fmt(t2_explicit)} (n=3) | 0.000 [0.000, 0.000] (n=3) | "
            f"0.167 {fmt(t2_all)} (n=6) |") in md
    # Headline: the configured first scorer, templates pooled: 5.5 / 12, resampled by sample.
    judge_values = [JUDGE[k] for k in sorted(JUDGE)]
    pooled = cluster_bootstrap_ci(judge_values, [s for _, s in sorted(JUDGE)])
    # Scored 12 of 13 (s7 failed to respond under template 1): counted as incorrect,
    # 5.5 / 13 = 0.423, inside the CI, so no warning.
    assert (f"| vanilla | wikicontradict | judge | 0.458 {fmt(pooled)} (n=12) | 12 / 13 | "
            "0.423 | 6 | 2 | 1 |") in md
    assert "⚠" not in md
    # Per template: 1 → 6 scored + s7 = 7, 4.5 / 7 = 0.643; 2 → 6 / 6.
    assert f"| judge | 1 | 6 / 7 | 0.750 {fmt(t1_all)} | 0.643 |" in md
    assert "| match | 2 | 6 / 6 | 0.000 [0.000, 0.000] | 0.000 |" in md
    # Agreement: matrix [[3,0,1],[1,2,0],[0,0,5]]; p_o = 10/12, p_e = 52/144,
    # kappa = (120 - 52) / (144 - 52) = 0.739.
    assert "12 answers labelled by both: agreement 83.3 %, Cohen's kappa 0.739." in md
    assert "| correct | 3 | 0 | 1 |" in md and "| incorrect | 0 | 0 | 5 |" in md
    # Side by side, template 1: judge C C C P P P vs match C C C C P P: 5/6 agree,
    # p_e = (3*4 + 3*2) / 36 = 1/2, kappa = (5/6 - 1/2) / (1/2) = 0.67. Template 2: judge
    # C I I I I I vs match I x 6: 5/6 agree but p_e = 30/36 = 5/6 too, so kappa = 0.
    match_t1 = bootstrap_ci([1, 1, 1, 1, 0.5, 0.5])
    assert (f"| 1 | 0.750 {fmt(t1_all)} (n=6) | 0.833 {fmt(match_t1)} (n=6) | "
            "83.3 % (0.67) |") in md
    assert (f"| 2 | 0.167 {fmt(t2_all)} (n=6) | 0.000 [0.000, 0.000] (n=6) | "
            "83.3 % (0.00) |") in md
    assert "| respond | — | TimeoutError | 1 |" in md
    assert ATTRIBUTION in md
    assert "Paired comparisons" not in md


def test_html_is_self_contained_escaped_and_draws_bars_where_the_values_are(
        tmp_path: Path) -> None:
    html_path, _ = write_report([run_a()], tmp_path)
    text = html_path.read_text(encoding="utf-8")
    page = parse(html_path)
    assert page.external == []
    assert "script" not in page.tags and "link" not in page.tags
    assert "Answer of s1 &lt;script&gt;" in text
    assert ATTRIBUTION in text
    assert "0.458" in text and "sha256:0123abcd" in text and "0.1.0+deadbeef" in text

    chart = "vanilla: judge by template x contradiction"
    series = ("explicit", "implicit", "all")  # legend order: breakdown values, then pooled
    group_width = len(series) * BAR_WIDTH + (len(series) - 1) * BAR_GAP
    expected = {("1", "explicit"): (1.0, 1.0, 1.0), ("1", "implicit"): (0.5, 0.5, 0.5),
                ("2", "implicit"): (0.0, 0.0, 0.0)}
    t2_all = bootstrap_ci([1, 0, 0, 0, 0, 0])
    assert t2_all is not None
    expected[("2", "all")] = (1 / 6, t2_all.low, t2_all.high)
    for (group, name), (mean, low, high) in expected.items():
        shapes = page.shapes[(chart, group, name)]
        (bar,) = shapes["bar"]
        (whisker,) = shapes["whisker"]
        g, s = ("1", "2", "all").index(group), series.index(name)
        x = PLOT_LEFT + GROUP_GAP / 2 + g * (group_width + GROUP_GAP) + s * (BAR_WIDTH + BAR_GAP)
        assert float(bar["x"]) == pytest.approx(x, abs=0.01)
        assert float(bar["y"]) == pytest.approx(y_of(mean), abs=0.01)
        assert float(bar["height"]) == pytest.approx(mean * PLOT_HEIGHT, abs=0.01)
        assert float(whisker["x1"]) == pytest.approx(x + BAR_WIDTH / 2, abs=0.01)
        assert float(whisker["y1"]) == pytest.approx(y_of(high), abs=0.01)
        assert float(whisker["y2"]) == pytest.approx(y_of(low), abs=0.01)


def test_breakdowns_are_inferred_or_chosen_by_the_caller(tmp_path: Path) -> None:
    plain = run_a()
    no_config = RunResults(info=info("ccc333", breakdowns=None), items=plain.items)
    # "title" is unique per sample, so only "contradiction" qualifies.
    assert infer_breakdowns(no_config.items) == ("contradiction",)
    _, md = write_report([no_config], tmp_path / "a")
    assert "### judge: template × contradiction" in md.read_text(encoding="utf-8")
    _, md = write_report([no_config], tmp_path / "b", by=[])
    text = md.read_text(encoding="utf-8")
    assert "### judge\n" in text and "× contradiction" not in text
    with pytest.raises(FreshwikiError, match="scope") as caught:
        write_report([no_config], tmp_path / "c", by=["scope"])
    assert caught.value.hint is not None and "contradiction" in caught.value.hint
    with pytest.raises(FreshwikiError, match="no runs"):
        write_report([], tmp_path / "d")


# ------------------------------------------------------------------ two runs


def test_two_run_report_has_the_paired_comparison(tmp_path: Path) -> None:
    html_path, md_path = write_report([run_a(), run_b()], tmp_path)
    md = md_path.read_text(encoding="utf-8")
    assert "## Paired comparisons" in md
    assert "### vanilla (A) vs rag (B): judge" in md
    # Template 1: differences 1, 1, 1, .5, .5, .5, all positive; only the all-plus and
    # all-minus sign patterns reach |sum| = 4.5: p = 2 / 2^6 = 0.031. B's s9 has no partner.
    d1 = bootstrap_ci([1, 1, 1, 0.5, 0.5, 0.5])
    assert (f"| 1 | 6 | 0.750 | 0.000 | 0.750 {fmt(d1)} | 0.031 | "
            "sign-flip permutation (exact) | 6/0/0 | 0/1 |") in md
    # Template 2 is 0/1 throughout: exact McNemar with one discordant pair, p = 1.
    assert "| 2 | 6 | 0.167 | 0.000 | 0.167" in md and "| 1 | exact McNemar | 1/0/5 | 0/0 |" in md
    # The match scorer exists only in A, so it is not compared.
    assert "(B): match" not in md
    page = parse(html_path)
    assert ("judge: A - B, paired", "1", "A - B") in page.shapes
    assert ("judge by template, all runs", "all", "rag") in page.shapes


# ------------------------------------------------------------------ real browser


MEASURE = """<script>
const bars = [...document.querySelectorAll('g.bar-group')].map(g => {
  const r = g.querySelector('rect.bar').getBoundingClientRect();
  const w = g.querySelector('line.whisker');
  return {chart: g.closest('svg').getAttribute('aria-label'), group: g.dataset.group,
          series: g.dataset.series, w: r.width, h: r.height,
          wh: w ? w.getBoundingClientRect().height : null};
});
const svgs = [...document.querySelectorAll('svg')].map(s => {
  const b = s.getBoundingClientRect(); return [b.width, b.height]; });
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify({bars, svgs});
document.body.appendChild(pre);
</script>"""


def test_charts_render_in_a_real_browser(tmp_path: Path) -> None:
    html_path, _ = write_report([run_a(), run_b()], tmp_path / "report")
    # The report has no script; a copy gets one that measures what the browser laid out.
    probe = tmp_path / "probe.html"
    probe.write_text(html_path.read_text(encoding="utf-8").replace("</body>",
                                                                   MEASURE + "</body>"))
    proc = dump_dom(probe, tmp_path / "profile")
    found = re.search(r'<pre id="measured">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"no measurements in the DOM; chromium said:\n{proc.stderr[-2000:]}"
    measured = json.loads(html.unescape(found.group(1)))
    assert measured["svgs"] and all(w > 0 and h > 0 for w, h in measured["svgs"])
    bars = {(b["chart"], b["group"], b["series"]): b for b in measured["bars"]}
    chart = "vanilla: judge by template x contradiction"
    full, half = bars[(chart, "1", "explicit")], bars[(chart, "1", "implicit")]
    assert full["w"] == pytest.approx(BAR_WIDTH, abs=0.5)
    assert full["h"] == pytest.approx(PLOT_HEIGHT, abs=0.5)  # mean 1: the whole plot height
    assert half["h"] == pytest.approx(PLOT_HEIGHT / 2, abs=0.5)
    t2_all = bootstrap_ci([1, 0, 0, 0, 0, 0])
    assert t2_all is not None
    pooled = bars[(chart, "2", "all")]
    assert pooled["h"] > 0
    assert pooled["wh"] == pytest.approx((t2_all.high - t2_all.low) * PLOT_HEIGHT, abs=0.5)
    assert bars[("judge by template, all runs", "1", "rag")]["h"] > 0  # B's s9 scored 1


# ------------------------------------------------------------------ CLI


def save(store: ResultsStore, results: RunResults) -> None:
    """Commit a hand-built run through the store's public API, as the runner does."""
    store.open_run(results.info)
    seen: set[tuple[str, str]] = set()
    for index, it in enumerate(results.items):
        if (it.sample_id, it.template) not in seen:
            seen.add((it.sample_id, it.template))
            sample = Sample(id=it.sample_id, input="?", metadata=it.metadata)
            store.commit_output(results.info.run_id, sample, it.template,
                                Output(text=it.output), sample_index=index)
        store.commit_score(results.info.run_id, it.sample_id, it.template, it.scorer,
                           Score(value=it.value, label=it.label, explanation=it.explanation))


def test_cli_reports_stored_runs_by_id_prefix(settings: Settings) -> None:
    with ResultsStore(default_results_path(settings)) as store:
        save(store, run_a())
    result = CliRunner().invoke(app, ["report", "aaa"])
    assert result.exit_code == 0, result.output
    target = settings.home / "reports" / "aaa111"
    assert f"HTML report:      {target / 'report.html'}" in result.output
    md = (target / "report.md").read_text(encoding="utf-8")
    assert "| vanilla | wikicontradict | judge | 0.458" in md


def test_cli_compares_two_runs_in_a_real_process(settings: Settings, tmp_path: Path) -> None:
    with ResultsStore(default_results_path(settings)) as store:
        save(store, run_a())
        save(store, run_b())
    exe = Path(sys.executable).with_name("freshwiki")
    proc = subprocess.run([str(exe), "report", "aaa111", "bbb222", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert str(tmp_path / "r" / "report.md") in proc.stdout
    assert "### vanilla (A) vs rag (B): judge" in (tmp_path / "r" / "report.md").read_text()


def run_main(args: list[str], monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, _, err = run_cli(args, monkeypatch, capsys)
    return code, err


def test_cli_unknown_run_points_to_freshwiki_runs(
        settings: Settings, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["report", "nope"], monkeypatch, capsys)
    assert code == 2 and "'nope'" in err and "freshwiki runs" in err
    assert not default_results_path(settings).exists()  # asking does not create a store
    with ResultsStore(default_results_path(settings)) as store:
        save(store, run_a())
    code, err = run_main(["report", "aaa111", "zzz"], monkeypatch, capsys)
    assert code == 2 and "'zzz'" in err and "freshwiki runs" in err
    code, err = run_main(["report", "aaa", "aaa111"], monkeypatch, capsys)
    assert code == 2 and "more than once" in err
