"""WikiChat's analysis of a grounded run: definitions on hand-built turns, then a real run.

The real run (``wikichat_run``: the real ``freshwiki eval``, scripted model, see
``tests.evaluation.chatkit``) has four turns whose every number is worked out by hand in the
comments below from the script; latencies are wall-clock, so only their counts are checked.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from freshwiki.chat import (
    Citation,
    ClaimCheck,
    CriterionFeedback,
    Evidence,
    Fact,
    Refinement,
    Reply,
    TurnTrace,
)
from freshwiki.evaluation import ResultsStore
from freshwiki.systems.analysis import (
    TurnStats,
    analyse_chat,
    chat_turns,
    run_turns,
    turn_stats,
)
from tests.browser import dump_dom
from tests.cli.invoke import run_main
from tests.evaluation.leaderboard_data import commit, growover_runs


def passage(pid: str) -> Evidence:
    return Evidence(pid, f"Title {pid}", (), f"Text of {pid}.")


P1, P2, P3, P4 = (passage(p) for p in ("p1", "p2", "p3", "p4"))


def test_each_cited_sentence_is_credited_to_retrieval_or_to_the_draft() -> None:
    trace = TurnTrace(
        mode="full", today="2024-06-01",
        facts=(Fact("A fact.", P1),),
        claims=(ClaimCheck("Supported.", "SUPPORTS", (P2, P1)),
                ClaimCheck("Wrong, corrected.", "REFUTES", (P3,), correction="Right."),
                ClaimCheck("Wrong, no correction.", "REFUTES", (P4,)),
                ClaimCheck("Unknown.", "NOT ENOUGH INFO", (P4,))),
        timings={"compose": 1.0, "total": 3.0},
        refinement=Refinement("feedback", (CriterionFeedback("natural", 80, "x"),), True))
    reply = Reply(
        text=("From the fact [1]. From both [1][2]. From the supported claim only [2]. "
              "From the correction [3]. From a refuted claim [4]. Says nothing cited."),
        citations=(Citation(1, P1), Citation(2, P2), Citation(3, P3), Citation(4, P4)),
        trace=trace)
    stats = turn_stats(reply, sample_id="s", template="t", turn=1, metadata={"c": "x"})
    # [1] is a fact's passage: retrieval, even beside a claim's [2]. [2] alone and [3] (the
    # evidence of a correction) are the draft's; [4] backs no verified claim: other.
    assert stats.sentences == {"retrieval": 2, "draft": 2, "other": 1, "uncited": 1}
    assert (stats.facts, stats.verdicts) == (1, ("SUPPORTS", "REFUTES", "REFUTES",
                                                 "NOT ENOUGH INFO"))
    assert (stats.refinement, stats.rewritten, stats.grounded) == ({"natural": 80}, True, True)


def test_turns_are_found_in_question_and_dialogue_outputs_of_the_grounded_system() -> None:
    reply = Reply("From the fact [1].", (Citation(1, P1),),
                  TurnTrace("fast", "2024-06-01", facts=(Fact("A fact.", P1),)))
    data = reply.as_dict()
    grounded = {"query": "q", "grounded": True, "citations": data["citations"],
                "chat": data["trace"]}
    outputs = [
        ("q1", "4", {"kind": "x"}, reply.text, grounded),  # a question benchmark's answer
        ("q2", "4", {}, "vanilla's answer", {"retrieved": []}),  # another system: skipped
        ("c1", "chat", {}, "transcript", {"turns": [  # a dialogue: its grounded turns only
            {"user": "hi", "reply": reply.text, "trace": grounded},
            {"user": "and?", "reply": "rag says", "trace": {"retrieved": []}},
            {"user": "more", "reply": "I don't know.", "trace": {**grounded,
                                                                "grounded": False}}]}),
    ]
    found = list(chat_turns(outputs, {("c1", "chat"): {"turns": [
        {"claims": [{"claim": "a"}]}, {"claims": []}, {"claims": []}]}}))
    assert [(t.sample_id, t.turn, t.grounded, t.reply_claims) for t in found] == [
        ("q1", 1, True, None), ("c1", 1, True, 1), ("c1", 3, False, 0)]
    assert found[0].sentences == {"retrieval": 1} and found[0].metadata == {"kind": "x"}


def stats(category: str, *, grounded: bool = True, facts: int = 0,
          verdicts: tuple[str, ...] = (), total: float = 1.0) -> TurnStats:
    return TurnStats("s", "t", 1, {"category": category}, grounded, facts, verdicts,
                     {"retrieval": facts}, {"total": total})


def test_columns_follow_the_breakdown_and_shares_pool_over_turns() -> None:
    turns = [stats("tail", grounded=False, verdicts=("NOT ENOUGH INFO",), total=2.0),
             stats("head", facts=3, verdicts=("SUPPORTS", "SUPPORTS", "REFUTES"), total=4.0),
             stats("head", facts=1, verdicts=("SUPPORTS",), total=9.0)]
    analysis = analyse_chat(turns, "category")
    assert analysis is not None
    assert analysis.columns == ("all", "tail", "head")  # in the run's sample order
    assert analysis.turns == (3, 1, 2)
    assert analysis.row("dont_know").shown() == ("33.3 %", "100.0 %", "0.0 %")
    assert analysis.row("facts_per_turn").shown() == ("1.33", "0.00", "2.00")
    # Pooled over claims: 3 of 5 SUPPORTS; head 3 of 4; tail none of 1.
    assert analysis.row("verdict_supports").shown() == ("60.0 %", "0.0 %", "75.0 %")
    # Notes: 3 verified / (4 facts + 3 verified).
    assert analysis.row("notes_from_draft").shown() == ("42.9 %", "—", "42.9 %")
    # Median of 2, 4, 9 is 4; head's of 4 and 9 is 6.5.
    assert analysis.row("latency_total").shown() == ("5.00 / 4.00", "2.00 / 2.00",
                                                     "6.50 / 6.50")
    assert [t for t, _ in analysis.sections] == ["Where replies come from",
                                                 "Latency per stage (seconds, mean / median)"]
    assert analyse_chat([]) is None
    assert analyse_chat(turns).columns == ("all",)  # type: ignore[union-attr]


def test_refinement_bleu_is_the_papers_table_14_over_every_refined_turn() -> None:
    def refined(category: str, before: str, after: str, rewritten: bool) -> TurnStats:
        return TurnStats("s", "t", 1, {"category": category}, True, 1, (), {}, {"total": 1.0},
                         {"natural": 80}, rewritten, None, before, after)

    turns = [refined("tail", "the cat sat on a mat", "the cat sat on the mat", True),
             refined("head", "It opened in 1905 .", "It opened in 1905 .", False),
             stats("head")]  # no stage 7: left out
    analysis = analyse_chat(turns, "category")
    assert analysis is not None
    # By hand, tail: clipped n-gram precisions 5/6, 3/5, 2/4, 1/3, equal lengths (BP 1):
    # BLEU = (5/6 * 3/5 * 2/4 * 1/3) ** (1/4) = 0.5373. Head: a kept reply is unchanged, 100.
    # All (pooled counts): 1-grams 5+5 of 6+5, 2-grams 3+4 of 5+4, 3-grams 2+3 of 4+3,
    # 4-grams 1+2 of 3+2: (10/11 * 7/9 * 5/7 * 3/5) ** (1/4) = 0.30303 ** (1/4) = 0.7419.
    assert analysis.row("refine_bleu").shown() == ("74.2", "53.7", "100.0")
    assert [c.n for c in analysis.row("refine_bleu").cells] == [2, 1, 1]


# -- the real run ---------------------------------------------------------------------------

EXPECTED = {
    # turns: KAT 1, KAT 2 (head); Clasmatocolea 1, 2 (tail): 4, 2, 2
    "turns": ("4", "2", "2"),
    # only Clasmatocolea 2 says "I don't know"
    "dont_know": ("25.0 %", "0.0 %", "50.0 %"),
    # facts: 3 + 0 (head), 1 + 0 (tail)
    "facts_per_turn": ("1.00", "1.50", "0.50"),
    # draft claims: 2 + 1 (head), 2 + 1 (tail)
    "claims_per_turn": ("1.50", "1.50", "1.50"),
    # SUPPORTS: KAT offline, KAT founded 2008, the family; REFUTES: founded 2010;
    # NOT ENOUGH INFO: Chile, 12 species
    "verdict_supports": ("50.0 %", "66.7 %", "33.3 %"),
    "verdict_refutes": ("16.7 %", "33.3 %", "0.0 %"),
    "verdict_not_enough_info": ("33.3 %", "0.0 %", "66.7 %"),
    # verified / (facts + verified): 3 / 7; head 2 / 5; tail 1 / 2
    "notes_from_draft": ("42.9 %", "40.0 %", "50.0 %"),
    # one cited sentence per answered turn: KAT 1 and the family cite a fact's passage,
    # KAT 2 only the evidence of its claim
    "sentences_from_retrieval": ("66.7 %", "50.0 %", "100.0 %"),
    "sentences_from_draft": ("33.3 %", "50.0 %", "0.0 %"),
    # the judge's claims: 2, 1 (head), 1, 0 (tail)
    "reply_claims_per_turn": ("1.00", "1.50", "0.50"),
    # stage 7 on KAT 1 (natural 70), KAT 2 (all 100), the family (relevant 90)
    "refine_relevant": ("96.7", "100.0", "90.0"),
    "refine_natural": ("90.0", "85.0", "100.0"),
    "refine_non_repetitive": ("100.0", "100.0", "100.0"),
    "refine_temporally_correct": ("100.0", "100.0", "100.0"),
    # KAT 1 and the family were rewritten; KAT 2 scored 100 everywhere and was kept
    "refine_rewritten": ("66.7 %", "50.0 %", "100.0 %"),
}
LATENCY_TURNS = {  # turns that ran each stage: "I don't know" composes, refines, checks nothing
    "total": 4, "query": 4, "retrieve": 4, "facts": 4, "draft": 4, "claims": 4, "verify": 4,
    "compose": 3, "refine": 3, "check": 3,
    "first_text": 4}  # the seconds until the first text was shown (every turn shows some)


def test_runs_analyse_gives_the_papers_table(
        wikichat_run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    home, run_id = wikichat_run
    code, out, err = run_main(["--home", str(home), "runs", "analyse", run_id[:6], "--json"],
                              monkeypatch, capsys)
    assert code == 0, err
    data = json.loads(out)
    assert (data["run_id"], data["columns"], data["breakdown"], data["turns"]) == (
        run_id, ["all", "head", "tail"], "category", [4, 2, 2])
    rows = {r["key"]: r for s in data["sections"] for r in s["rows"]}
    shown = {key: tuple(_shown(row)) for key, row in rows.items()}
    for key, expected in EXPECTED.items():
        assert shown[key] == expected, key
    latency = {k[len("latency_"):]: r for k, r in rows.items() if k.startswith("latency_")}
    assert {stage: row["cells"][0]["n"] for stage, row in latency.items()} == LATENCY_TURNS
    assert all(c["value"] > 0 and c["median"] > 0 for c in latency["total"]["cells"])
    # Seconds per reply claim: whole turns' seconds over the judge's 4 claims (3 head, 1 tail).
    assert [c["n"] for c in rows["seconds_per_reply_claim"]["cells"]] == [4, 3, 1]
    # Table 14 is over the turns stage 7 ran on: KAT 1 and 2 (head), the family (tail); the
    # kept KAT 2 reply counts as unchanged, so head's BLEU is above the rewritten tail's.
    bleu = rows["refine_bleu"]["cells"]
    assert [c["n"] for c in bleu] == [3, 2, 1]
    assert 0 < bleu[2]["value"] < bleu[1]["value"] < 100

    code, out, _ = run_main(["--home", str(home), "runs", "analyse", run_id, "--by", "none"],
                            monkeypatch, capsys)
    flat = " ".join(out.split())
    assert code == 0 and "draft claims: SUPPORTS │ 50.0 % │ claims" in flat
    code, _, err = run_main(["--home", str(home), "runs", "analyse", run_id, "--by", "genre"],
                            monkeypatch, capsys)
    assert code == 2 and "no sample of run" in err and "category" in err


def _shown(row: dict[str, object]) -> list[str]:
    """A JSON row's cells printed the way reports print them (checked against ``shown``)."""
    out = []
    for cell in row["cells"]:  # type: ignore[attr-defined]
        value = cell["value"]
        unit = row["unit"]
        if unit == "share":
            out.append(f"{100 * value:.1f} %")
        elif unit == "count":
            out.append(str(round(value)))
        elif unit == "score":
            out.append(f"{value:.1f}")
        else:
            out.append(f"{value:.2f}")
    return out


def test_the_report_shows_the_table_in_a_real_browser(
        wikichat_run: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    home, run_id = wikichat_run
    code, _, err = run_main(["--home", str(home), "report", run_id, "--out",
                             str(tmp_path / "report")], monkeypatch, capsys)
    assert code == 0, err
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "### Grounded chat: where replies come from" in markdown
    assert '| "I don\'t know" turns | 25.0 % (n=4) | 0.0 % (n=2) | 50.0 % (n=2) |' in markdown
    assert "| notes from the draft: verified claims ÷ (facts + verified claims) | 42.9 % (n=7)" \
        in markdown
    proc = dump_dom(tmp_path / "report" / "report.html", tmp_path / "profile")
    table = re.search(r'<table class="chat-analysis" data-run="(\w+)">(.*?)</table>',
                      proc.stdout, re.S)
    assert table, f"no analysis table in the DOM; chromium said:\n{proc.stderr[-2000:]}"
    assert table.group(1) == run_id
    cells = {key: [re.sub(r"\s*n=\d+$", "", html.unescape(re.sub(r"<[^>]+>", "", c))).strip()
                   for c in re.findall(r'<td class="num">(.*?)</td>', body)]
             for key, body in re.findall(r'<tr data-key="(\w+)">(.*?)</tr>', table.group(2))}
    for key, expected in EXPECTED.items():
        assert tuple(cells[key]) == expected, key


def test_load_run_reads_the_turns_from_the_traces(wikichat_run: tuple[Path, str]) -> None:
    home, run_id = wikichat_run
    with ResultsStore(home / "runs" / "runs.sqlite") as store:
        results = store.load_run(run_id)
        # Outputs whose traces lack the key are not even decoded.
        assert list(store.traces(run_id, key="no-such-key")) == []
        assert len(list(store.traces(run_id, key="chat"))) == 2
    # The traces are read from the file when asked, after the store that loaded the run
    # is closed. What the table is made of: 4 turns in sample order, with the judge's claims.
    turns = run_turns(results)
    assert [(t.sample_id, t.turn) for t in turns] == [
        ("head/KickassTorrents", 1), ("head/KickassTorrents", 2),
        ("tail/Clasmatocolea fasciculata", 1), ("tail/Clasmatocolea fasciculata", 2)]
    assert [t.reply_claims for t in turns] == [2, 1, 1, 0]
    assert [t.grounded for t in turns] == [True, True, True, False]


def test_a_run_of_another_system_has_nothing_to_analyse(
        _isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    ralm = growover_runs()[0]
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        commit(store, ralm)
        assert run_turns(store.load_run(ralm.run_id)) == ()
    code, _, err = run_main(["runs", "analyse", ralm.run_id], monkeypatch, capsys)
    assert code == 2
    assert "has no grounded chat turns to analyse" in " ".join(err.split())
    assert "--system grounded" in " ".join(err.split())
