"""`freshwiki chat`: the REPL loop in-process with a scripted engine, then the real executable.

The executable runs the real GroundedChat pipeline over the small default corpus, with a
scripted model (deterministic wording: what the REPL prints is asserted exactly) and, once,
the real SmolLM2 (plumbing: the whole path works with a real model).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from freshwiki.chat import ChatMessage
from freshwiki.chat.conversations import MAX_MESSAGE_CHARS, ConversationStore
from freshwiki.config import Settings
from freshwiki.serve import ATTRIBUTION
from tests.conftest import write_small_topics
from tests.serve.scripted_engine import ScriptedEngine, llm_down

EXE = str(Path(sys.executable).with_name("freshwiki"))


class Session:
    """One REPL session fed scripted lines; ``text`` is everything it printed."""

    def __init__(self, engine: ScriptedEngine, store: ConversationStore) -> None:
        self.engine = engine
        self.store = store
        self.buffer = io.StringIO()
        self.console = Console(file=self.buffer, width=140, color_system=None)

    def run(self, *lines: str, conversation_id: str | None = None) -> str | None:
        queue: Iterator[str] = iter(lines)

        def read(prompt: str) -> str:
            line = next(queue, None)
            if line is None:
                raise EOFError
            self.console.print(prompt + line, markup=False, highlight=False)
            return line

        from freshwiki.cli.chat import repl

        with asyncio.Runner() as runner:
            return repl(self.engine, self.store, console=self.console, runner=runner,
                        read=read, conversation_id=conversation_id, model="scripted:test")

    @property
    def text(self) -> str:
        return self.buffer.getvalue()


@pytest.fixture
def store(settings: Settings) -> Iterator[ConversationStore]:
    with ConversationStore.open(settings) as opened:
        yield opened


@pytest.fixture
def session(store: ConversationStore) -> Session:
    return Session(ScriptedEngine(), store)


def test_a_turn_streams_then_lists_numbered_sources(session: Session) -> None:
    cid = session.run("What is Clasmatocolea fasciculata?")
    text = session.text
    assert ("you> What is Clasmatocolea fasciculata?\n"
            "Clasmatocolea fasciculata is what the corpus says about that [1]. "
            "See also Cecil Lowell [2].\nSources:\n"
            "  [1] Clasmatocolea fasciculata › Distribution (2024-03-01)\n"
            "  [2] Cecil Lowell\n"
            f"  {ATTRIBUTION}\n"
            "2 LLM calls · 375 tokens · 1 cache hits · 1.8 s · /trace for the evidence") in text
    assert cid is not None and f"freshwiki chat --resume {cid}" in text
    stored = session.store.get(cid)
    assert [m.role for m in stored.messages] == ["user", "assistant"]
    assert stored.model == "scripted:test"


def test_trace_shows_queries_facts_claims_calls_and_timings(session: Session) -> None:
    session.run("/trace", "What is Clasmatocolea fasciculata?", "/trace")
    before, after = session.text.split("you> What is", 1)
    assert "no reply yet" in before
    trace = after.split("you> /trace", 1)[1]
    for needle in ("trace · checked mode · today 2026-11-21", "2 LLM calls, 340 prompt + 35 "
                   "completion tokens, 1 cache hits, 2 passages retrieved, grounded: True",
                   "searches", "What is Clasmatocolea fasciculata?", "recent",
                   "facts kept", "claims", "The corpus describes Clasmatocolea fasciculata.",
                   "SUPPORTS", "REFUTES", "they describe different things",
                   "conflict on what it is", "LLM calls", "draft+claims", "hit",
                   "timings: query 0.50 s, draft+claims 1.25 s, total 1.75 s", ATTRIBUTION):
        assert needle in trace, needle


def test_trace_shows_stage_7_scores_and_feedback() -> None:
    from freshwiki.chat import CriterionFeedback, Refinement, Reply, TurnTrace
    from freshwiki.cli.chat import print_trace

    refinement = Refinement("feedback", (
        CriterionFeedback("relevant", 100, "Answers the question."),
        CriterionFeedback("temporally_correct", 40, 'Says "currently" of a 2016 event.')),
        rewritten=True)
    buffer = io.StringIO()
    print_trace(Reply("It went offline in 2016 [1].", (),
                      TurnTrace("full", "2024-06-01", refinement=refinement)),
                Console(file=buffer, width=140, color_system=None))
    text = buffer.getvalue()
    assert "refine with feedback (stage 7)" in text
    assert 'temporally correct │    40 │ Says "currently" of a 2016 event.' in text
    assert "stage 7 (feedback): rewritten" in text
    kept = Refinement("feedback", refinement.feedback, note="every criterion scored 100: "
                      "composed reply kept")
    buffer = io.StringIO()
    print_trace(Reply("x", (), TurnTrace("full", "2024-06-01", refinement=kept)),
                Console(file=buffer, width=140, color_system=None))
    assert "stage 7 (feedback): every criterion scored 100: composed reply kept" in \
        buffer.getvalue()


def test_commands_and_refusals_keep_the_session_going(session: Session) -> None:
    session.run("", "   ", "/help", "/nope", "x" * (MAX_MESSAGE_CHARS + 1), "/sources",
                "What is Clasmatocolea fasciculata?", "/sources", "/quit", "never read")
    text = session.text
    assert "/trace   the last turn's evidence" in text
    assert "unknown command /nope; /help lists the commands" in text
    assert "error: the message has 8,001 characters; the limit is 8,000" in text
    assert "hint: shorten it" in text
    assert text.count("Sources:") == 2  # after the reply, and again for /sources
    assert "never read" not in text
    assert len(session.engine.histories) == 1


def test_an_llm_that_is_down_gets_a_message_and_the_next_turn_works(session: Session) -> None:
    session.engine.failure = llm_down()
    cid = session.run("What is Clasmatocolea fasciculata?")
    assert cid is None  # nothing answered, nothing stored
    assert "error: [openai:m] gave up after 5 attempts: connection refused" in session.text
    assert "hint: check that the server is running" in session.text
    assert session.store.summaries() == []

    session.engine.failure, session.engine.fail_after = llm_down(), 4
    session.run("What is Clasmatocolea fasciculata?")
    assert "Clasmatocolea fasciculata is what \nerror:" in session.text  # line ended first

    session.engine.failure = None
    assert session.run("What is Clasmatocolea fasciculata?") is not None


def test_ctrl_c_during_a_reply_drops_that_turn_only(session: Session) -> None:
    session.engine.failure, session.engine.fail_after = KeyboardInterrupt(), 2
    cid = session.run("first question")
    assert "interrupted: this turn was not kept" in session.text
    assert cid is None
    session.engine.failure = None
    assert session.run("second question") is not None


def test_history_grows_within_a_conversation_and_new_starts_another(session: Session) -> None:
    session.run("first question", "second question", "/new", "third question")
    histories = session.engine.histories
    assert [len(h) for h in histories] == [1, 3, 1]
    assert histories[1][1].role == "assistant"
    assert histories[1][1].content == "I could not find this in the corpus, so I don't know." \
        or histories[1][1].content.startswith("Clasmatocolea fasciculata is what")
    assert "new conversation" in session.text
    assert len(session.store.summaries()) == 2
    kept = session.run("fourth question", "/new")  # /new last: the kept one is still named
    assert kept is not None and session.store.get(kept).title == "fourth question"
    assert session.text.rstrip().endswith(f"`freshwiki chat --resume {kept}`")


def test_resume_continues_the_stored_history(session: Session) -> None:
    cid = session.run("first question")
    assert cid is not None
    again = Session(session.engine, session.store)
    assert again.run("/trace", "second question", conversation_id=cid) == cid
    assert f'resumed conversation {cid}: 1 earlier turn(s), "first question"' in again.text
    assert "trace · checked mode" in again.text  # the stored reply, rebuilt for /trace
    history = session.engine.histories[-1]
    assert history[0] == ChatMessage("user", "first question")
    assert [m.role for m in history] == ["user", "assistant", "user"]
    assert session.store.get(cid).turns == 2


# -- the real executable ------------------------------------------------------------------

# The checked mode: the answer, then one check call reading the value back. (Lead: "... is a
# species of liverwort ... It is known from South Africa where it grows on woody debris.")
ANSWER = "Clasmatocolea fasciculata is a liverwort found in South Africa. It grows on woody debris."
CHECKED = {"answers": ["South Africa", "grows on woody debris"]}
REPLY = ("Clasmatocolea fasciculata is a liverwort found in South Africa [1]. It grows on woody "
         "debris [1].")


def write_script(path: Path, *steps: Any) -> str:
    lines = [json.dumps(s if isinstance(s, dict) and "error" in s else
                        {"text": s if isinstance(s, str) else json.dumps(s)}) for s in steps]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"scripted:{path}"


@pytest.fixture(scope="module")
def chat_env(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One home for the module's runs: the small default corpus is built by the first."""
    root = tmp_path_factory.mktemp("chat-cli")
    write_small_topics(shared_data, root / "data")
    return {**os.environ, "FRESHWIKI_HOME": str(root / "home"),
            "FRESHWIKI_DATA_DIR": str(root / "data"), "FRESHWIKI_N_THREADS": "1",
            "COLUMNS": "120"}


def freshwiki(env: dict[str, str], *args: str, stdin: str = "",
              timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


@pytest.mark.e2e
def test_the_executable_chats_traces_resumes_lists_and_exports(
    chat_env: dict[str, str], tmp_path: Path
) -> None:
    model = write_script(tmp_path / "turn.jsonl", ANSWER, CHECKED)
    run = freshwiki(chat_env, "chat", "-m", model, stdin="What is Clasmatocolea fasciculata?\n"
                    "/trace\n")
    assert run.returncode == 0, run.stderr
    # topic leads carry no edit time, so the source line names no date (not the file's mtime)
    assert (f"you> What is Clasmatocolea fasciculata?\n{REPLY}\nSources:\n"
            "  [1] Clasmatocolea fasciculata\n") in run.stdout
    assert ATTRIBUTION in run.stdout and "2 LLM calls" in run.stdout
    trace = run.stdout.split("you> /trace", 1)[1]
    for needle in ("trace · checked mode", "searches", "answer, before its check",
                   "woody debris", "SUPPORTS", "sentences checked", "check", "timings:",
                   "first_text"):
        assert needle in trace, needle
    assert "freshwiki chat" in run.stderr and "checked mode" in run.stderr
    cid = run.stdout.rsplit("--resume ", 1)[1].split("`")[0]

    thanks = write_script(tmp_path / "thanks.jsonl", "You're welcome!")
    resumed = freshwiki(chat_env, "chat", "-m", thanks, "--resume", cid[:6],
                        stdin="thanks!\n/quit\n")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed conversation {cid}: 1 earlier turn(s)" in resumed.stdout
    assert "you> thanks!\nYou're welcome!" in resumed.stdout

    listed = freshwiki(chat_env, "chat", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["messages"]) for r in rows if r["id"] == cid] == [(cid, 4)]

    out = tmp_path / "distil" / "traces.jsonl"
    exported = freshwiki(chat_env, "chat", "export-traces", "--out", str(out),
                         "--conversation", cid)
    assert exported.returncode == 0, exported.stderr
    assert "wrote 3 examples from 1 conversation(s)" in exported.stdout
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(x["stage"], x["turn"]) for x in lines] == [("answer", 1), ("check", 1),
                                                         ("compose", 2)]
    assert all([m["role"] for m in x["messages"]] == ["system", "user", "assistant"]
               for x in lines)
    assert lines[0]["messages"][2]["content"] == ANSWER
    assert json.loads(lines[1]["messages"][2]["content"]) == CHECKED
    assert "Clasmatocolea fasciculata" in lines[1]["messages"][1]["content"]
    assert lines[2]["conversation_id"] == cid and lines[2]["model"] == model


@pytest.mark.e2e
def test_the_executable_explains_what_went_wrong(
    chat_env: dict[str, str], tmp_path: Path
) -> None:
    down = write_script(tmp_path / "down.jsonl", {"error": "connection"}, ANSWER, CHECKED)
    run = freshwiki({**chat_env, "FRESHWIKI_MAX_RETRIES": "0"}, "chat", "-m", down,
                    stdin="What is Clasmatocolea fasciculata?\n"
                    "What is Clasmatocolea fasciculata?\n")
    assert run.returncode == 0, run.stderr
    assert "error: " in run.stdout and "connection dropped" in run.stdout
    assert "hint: check that the server is running" in run.stdout
    assert REPLY in run.stdout  # the next turn went through
    assert "Traceback" not in run.stdout + run.stderr

    for args, needle in [
        (["-m", f"scripted:{tmp_path / 'missing.jsonl'}"], "missing.jsonl not found"),
        (["--resume", "zzzz"], "no conversation 'zzzz'"),
        (["--mode", "slow"], "'slow' is not checked or wikichat"),
        (["-m", down, "--index", "nosuch"], "nosuch"),
    ]:
        failed = freshwiki(chat_env, "chat", *args, stdin="hi\n")
        assert failed.returncode == 2, (args, failed.stdout, failed.stderr)
        assert needle in failed.stderr, (args, failed.stderr)
        assert "Traceback" not in failed.stderr

    nothing = freshwiki({**chat_env, "FRESHWIKI_HOME": str(tmp_path / "empty")}, "chat",
                        "export-traces", "--out", str(tmp_path / "x.jsonl"))
    assert nothing.returncode == 2 and "no stored conversations" in nothing.stderr


@pytest.mark.e2e
def test_the_executable_chats_with_a_real_local_model(
    chat_env: dict[str, str], smollm2_path: Path
) -> None:
    run = freshwiki(chat_env, "chat", "-m", "local:smollm2-135m",
                    stdin="Where is Clasmatocolea fasciculata found?\n/trace\n")
    assert run.returncode == 0, run.stderr
    reply = run.stdout.split("you> /trace", 1)[0].split("found?\n", 1)[1]
    assert reply.strip(), run.stdout
    assert any(said in reply for said in ("Sources:", "(the reply cites no passage",
                                          "(nothing in the corpus supported an answer)"))
    assert "LLM calls" in run.stdout and "answer" in run.stdout
    cid = run.stdout.rsplit("--resume ", 1)[1].split("`")[0]
    listed = json.loads(freshwiki(chat_env, "chat", "list", "--json").stdout)
    assert any(r["id"] == cid and r["model"] == "local:smollm2-135m" for r in listed)


# -- export-traces from an evaluation run ---------------------------------------------------

# Stage calls of each grounded turn of the scripted run (tests.evaluation.chatkit), worked out
# from its script: full mode, k=2 (two facts calls), one verify call per draft claim; stage 7
# rewrites only below 100; "I don't know" (Clasmatocolea 2) stops after verification.
ANSWERED = {"query": 1, "facts": 2, "draft": 1, "claims": 1, "compose": 1,
            "refine-feedback": 1, "check": 1}
TURN_STAGES = {
    ("head/KickassTorrents", 1): {**ANSWERED, "verify": 2, "refine": 1},
    ("head/KickassTorrents", 2): {**ANSWERED, "verify": 1},
    ("tail/Clasmatocolea fasciculata", 1): {**ANSWERED, "verify": 2, "refine": 1},
    ("tail/Clasmatocolea fasciculata", 2): {"query": 1, "facts": 2, "draft": 1, "claims": 1,
                                            "verify": 1},
}


@pytest.mark.e2e
def test_the_executable_exports_a_runs_stage_calls(
    wikichat_run: tuple[Path, str], tmp_path: Path
) -> None:
    home, run_id = wikichat_run
    env = {**os.environ, "FRESHWIKI_HOME": str(home), "COLUMNS": "200"}
    out = tmp_path / "distil" / "run.jsonl"
    exported = freshwiki(env, "chat", "export-traces", "--run", run_id[:8], "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert (f"wrote 37 examples from 2 conversation(s) of run {run_id} to {out} "
            "(0 unusable and 0 repeated calls left out)") in " ".join(exported.stdout.split())
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    counted: dict[tuple[str, int], dict[str, int]] = {}
    for line in lines:  # the same format as a conversation's export
        assert set(line) == {"messages", "stage", "conversation_id", "turn", "model"}
        assert [m["role"] for m in line["messages"]] == ["system", "user", "assistant"]
        assert line["model"] == "chatkit:wikichat"
        run, rest = line["conversation_id"].split("/", 1)  # RUN/SAMPLE/TEMPLATE
        sample, template = rest.rsplit("/", 1)
        assert (run, template) == (run_id, "chat")
        stages = counted.setdefault((sample, line["turn"]), {})
        stages[line["stage"]] = stages.get(line["stage"], 0) + 1
    assert counted == TURN_STAGES
    # Only the chatbot's own calls: the simulated user and the judge are not its stages.
    systems = {line["messages"][0]["content"].split("\n")[0] for line in lines}
    assert not any(s.startswith(("You write the messages of a USER", "You are a fact checker"))
                   for s in systems)
    [scored] = [x for x in lines if x["stage"] == "refine-feedback" and x["turn"] == 1
                and "KickassTorrents" in x["conversation_id"]]
    assert json.loads(scored["messages"][2]["content"])["natural"]["score"] == 70
    [rewritten] = [x for x in lines if x["stage"] == "refine" and "Kickass" in
                   x["conversation_id"]]
    assert rewritten["messages"][2]["content"].startswith(
        "KickassTorrents, founded in 2008, went offline on 20 July 2016 [")
    assert "- natural: natural is weak. 70/100" in rewritten["messages"][1]["content"]

    # The run twice: every call of the second pass repeats one of the first.
    twice = freshwiki(env, "chat", "export-traces", "--run", run_id, "--run", run_id,
                      "--out", str(tmp_path / "twice.jsonl"))
    assert "wrote 37 examples" in twice.stdout and "37 repeated calls left out" in twice.stdout
    for args, needle in [(["--run", "zzzz"], "no run 'zzzz'"),
                         (["--run", run_id, "--conversation", "x"], "not both")]:
        failed = freshwiki(env, "chat", "export-traces", *args, "--out",
                           str(tmp_path / "bad.jsonl"))
        assert failed.returncode == 2 and needle in failed.stderr, failed.stderr
    assert not (tmp_path / "bad.jsonl").exists()


def test_exporting_a_run_without_chat_turns_says_which_runs_have_them(
    _isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from freshwiki.evaluation import ResultsStore
    from tests.cli.invoke import run_main
    from tests.evaluation.leaderboard_data import commit, growover_runs

    ralm = growover_runs()[0]
    with ResultsStore(_isolated_home / "runs" / "runs.sqlite") as store:
        commit(store, ralm)
    out = tmp_path / "none.jsonl"
    code, _, err = run_main(["chat", "export-traces", "--run", ralm.run_id, "--out", str(out)],
                            monkeypatch, capsys)
    flat = " ".join(err.split())
    assert code == 2 and f"run {ralm.run_id}" in flat and "stored no grounded chat turn" in flat
    assert "--system grounded" in flat
    assert not out.exists() and not out.with_name("none.jsonl.partial").exists()
