"""``freshwiki chat``: the terminal REPL, ``chat list`` and ``chat export-traces``.

``chat export-traces`` reads stage calls from stored conversations or, with ``--run``, from the
grounded system's turns in evaluation runs (a benchmark run as a distillation set).

The REPL itself (:func:`repl`) takes any :class:`~freshwiki.chat.ChatEngine`, a line reader
and a console, so it is tested with a scripted engine and piped lines exactly as a person would
drive it.

One event loop (``asyncio.Runner``) serves every turn of a session: the LLM client's semaphore
and a local model's worker thread belong to a loop, and Ctrl-C during a reply cancels that
turn only (the prompt comes back), while Ctrl-C or EOF at the prompt ends the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from freshwiki.chat import ChatEngine, Evidence, Mode, Reply
from freshwiki.chat.conversations import (
    ConversationStore,
    MessageError,
    StageExample,
    conversations_path,
)
from freshwiki.chat.session import ChatSession, SessionTurn
from freshwiki.cli._common import ATTRIBUTION, chat_mode, err, open_index, out, state
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.retrieval import HybridIndex

app = typer.Typer(help="Grounded chat with the corpus. Without a command: the REPL "
                       "(streamed, cited, claims checked; /help inside).")


@app.callback(invoke_without_command=True)
def chat(
    ctx: typer.Context,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model spec, e.g. local:smollm2-135m.")
    ] = None,
    mode: Annotated[str, typer.Option(
        help="checked: answer from the passages, then check each sentence before it is shown; "
        "wikichat: WikiChat's staged pipeline (every stage its own call).")] = "checked",
    k: Annotated[int | None, typer.Option(
        "-k", help="Passages to retrieve per question (default: 3 checked, 5 wikichat).")
    ] = None,
    index_name: Annotated[str | None, typer.Option(
        "--index", help="Index to chat with (default: your `main` index if built, else the "
        "default corpus).")] = None,
    resume: Annotated[str | None, typer.Option(
        help="Continue a stored conversation (its id or a unique prefix; `freshwiki chat "
        "list`).")] = None,
) -> None:
    """Chat with the corpus in the terminal: streamed, cited, every claim checked (/help)."""
    if ctx.invoked_subcommand is not None:
        return
    pipeline_mode = chat_mode(mode)
    if k is not None and k < 1:
        raise typer.BadParameter(f"must be at least 1, got {k}", param_hint="-k")
    run_chat(state.resolved(model=model).settings, mode=pipeline_mode, k=k,
             index_name=index_name, resume=resume, open_index=open_index, console=out,
             err=err)


@app.command("list")
def chat_list(
    limit: Annotated[int, typer.Option(help="At most this many.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List stored conversations (REPL sessions and API conversations), newest first."""
    list_conversations(state.resolved().settings, console=out, as_json=as_json, limit=limit)


@app.command("export-traces")
def chat_export_traces(
    out_file: Annotated[Path, typer.Option("--out", help="JSONL file to write.")],
    conversation: Annotated[str | None, typer.Option(
        help="Only this conversation (id or unique prefix).")] = None,
    run: Annotated[list[str] | None, typer.Option(
        "--run", help="Instead of stored conversations, the grounded system's turns in this "
        "evaluation run (id or unique prefix; repeatable; `freshwiki runs` lists them).")
    ] = None,
    dedupe: Annotated[bool, typer.Option(
        help="Write an exactly repeated call (e.g. a cache hit) once.")] = True,
) -> None:
    """Write each stored stage call as chat-format JSONL, to fine-tune a smaller model on."""
    if run and conversation is not None:
        raise typer.BadParameter("give --conversation or --run, not both",
                                 param_hint="--conversation")
    settings = state.resolved().settings
    if run:
        counts = export_run_traces(settings, out_file, run, dedupe=dedupe)
        source = f"conversation(s) of run {', '.join(counts['runs'])}"
    else:
        counts = export_traces(settings, out_file, conversation=conversation, dedupe=dedupe)
        source = "conversation(s)"
    out.print(f"wrote {counts['examples']} examples from {counts['conversations']} "
              f"{source} to {out_file} ({counts['skipped_unusable']} unusable and "
              f"{counts['skipped_duplicates']} repeated calls left out)", soft_wrap=True,
              markup=False, highlight=False)


PROMPT = "you> "

HELP = """\
Type a question and press Enter; the reply streams, then its numbered sources.
  /trace   the last turn's evidence: searches, facts, claims and verdicts, LLM calls, timings
  /sources the last reply's sources again
  /new     start a new conversation
  /help    this help
  /quit    leave (so does Ctrl-D); Ctrl-C stops a reply that is being written"""

_VERDICT_STYLE = {"SUPPORTS": "green", "REFUTES": "red", "NOT ENOUGH INFO": "yellow"}


def heading(evidence: Evidence) -> str:
    """The passage's title and section path, as the page and the trace show it."""
    return " › ".join((evidence.title, *evidence.section))


def print_sources(reply: Reply, console: Console) -> None:
    """The numbered source list under a reply, with the licence's attribution."""
    if not reply.grounded:
        console.print("[yellow](nothing in the corpus supported an answer)[/yellow]")
    elif not reply.citations and reply.trace.queries:  # searched, yet cites nothing: say so
        console.print("[yellow](the reply cites no passage: check it against /trace)[/yellow]")
    if reply.citations:
        console.print("Sources:")
        for citation in reply.citations:
            when = f" ({citation.evidence.timestamp[:10]})" if citation.evidence.timestamp else ""
            console.print(f"  [{citation.number}] {heading(citation.evidence)}{when}",
                          markup=False, highlight=False, soft_wrap=True)
        console.print(f"  [dim]{ATTRIBUTION}[/dim]")
    trace = reply.trace
    total = trace.timings.get("total")
    console.print(
        f"[dim]{trace.llm_calls} LLM calls · {trace.prompt_tokens + trace.completion_tokens:,} "
        f"tokens · {trace.cache_hits} cache hits"
        f"{f' · {total:.1f} s' if total is not None else ''} · /trace for the evidence[/dim]",
        soft_wrap=True)


def print_trace(reply: Reply, console: Console) -> None:
    """Everything the last turn did: what ``/trace`` shows.

    Searches, then for the checked mode the answer before its check, each of its sentences
    with its verdict, why, and the correction shown instead, and any refuted premise; for
    wikichat the kept facts, the draft, each claim with its verdict and evidence, stage 7's
    scores and feedback and stage 8's verdicts. Then conflicts between sources, each LLM
    call with its latency,
    tokens (and prompt tokens reused from the KV cache) and whether the response cache
    answered it.
    """
    trace = reply.trace
    cited = {c.evidence.passage_id: c.number for c in reply.citations}

    def ref(evidence: Evidence) -> str:
        number = cited.get(evidence.passage_id)
        return f"[{number}]" if number is not None else heading(evidence)

    console.rule(f"trace · {trace.mode} mode · today {trace.today}")
    console.print(
        f"{trace.llm_calls} LLM calls, {trace.prompt_tokens:,} prompt + "
        f"{trace.completion_tokens:,} completion tokens, {trace.cache_hits} cache hits, "
        f"{len(trace.passages)} passages retrieved, grounded: {reply.grounded}",
        soft_wrap=True, highlight=False)

    if trace.queries:
        table = Table(title="searches", title_justify="left")
        for col in ("#", "query", "time", "purpose"):
            table.add_column(col)
        for number, query in enumerate(trace.queries, start=1):
            table.add_row(str(number), escape(query.text), query.time_intent, query.purpose)
        console.print(table)
    if trace.facts:
        table = Table(title="facts kept", title_justify="left")
        for col in ("#", "fact", "from"):
            table.add_column(col)
        for number, fact in enumerate(trace.facts):
            table.add_row(str(number), escape(fact.text), escape(ref(fact.source)))
        console.print(table)
    checked = trace.mode == "checked"
    if trace.draft:
        what = "answer, before its check" if checked else "draft"
        console.print(f"[bold]{what}[/bold]: {escape(trace.draft)}", soft_wrap=True)
    if trace.claims:
        table = Table(title="premises" if checked else "claims", title_justify="left")
        for col in ("claim", "verdict", "evidence", "why"):
            table.add_column(col)
        for claim in trace.claims:
            style = _VERDICT_STYLE.get(claim.verdict, "white")
            table.add_row(escape(claim.claim), f"[{style}]{claim.verdict}[/{style}]",
                          escape(", ".join(ref(e) for e in claim.evidence)),
                          escape(claim.rationale))
        console.print(table)
    if trace.reply_checks:
        title = "sentences checked" if checked else "reply checked (stage 8)"
        table = Table(title=title, title_justify="left")
        for col in ("sentence", "verdict", "why", "shown instead"):
            table.add_column(col)
        for check in trace.reply_checks:
            style = _VERDICT_STYLE.get(check.verdict, "white")
            table.add_row(escape(check.claim), f"[{style}]{check.verdict}[/{style}]",
                          escape(check.rationale), escape(check.correction))
        console.print(table)
    refinement = trace.refinement
    if refinement is not None and refinement.feedback:
        table = Table(title="refine with feedback (stage 7)", title_justify="left")
        for col in ("criterion", "score", "feedback"):
            table.add_column(col, justify="right" if col == "score" else "left")
        for item in refinement.feedback:
            table.add_row(item.criterion.replace("_", " "), str(item.score),
                          escape(item.feedback))
        console.print(table)
    if refinement is not None:
        outcome = "rewritten" if refinement.rewritten else refinement.note or "kept"
        console.print(f"stage 7 ({refinement.way}): {escape(outcome)}", soft_wrap=True,
                      highlight=False)
    for sentence in trace.removed:
        console.print(f"[red]withheld[/red]: {escape(sentence)}", soft_wrap=True)
    for conflict in trace.conflicts:
        sides = " vs ".join(
            f"“{trace.facts[i].text}” ({ref(trace.facts[i].source)})"
            for i in conflict.facts if 0 <= i < len(trace.facts))
        console.print(f"[magenta]conflict[/magenta] on {escape(conflict.about)}: "
                      f"{escape(sides)}", soft_wrap=True)
    if trace.stages:
        table = Table(title="LLM calls", title_justify="left")
        for col in ("stage", "s", "prompt tok", "reused tok", "completion tok", "cache"):
            table.add_column(col, justify="left" if col == "stage" else "right")
        for stage in trace.stages:
            table.add_row(stage.stage + (" [red](unusable)[/red]" if stage.error else ""),
                          f"{stage.latency_s:.2f}", str(stage.prompt_tokens),
                          str(stage.cached_prompt_tokens), str(stage.completion_tokens),
                          "hit" if stage.cache_hit else "")
        console.print(table)
    if trace.timings:
        console.print("timings: " + ", ".join(f"{name} {seconds:.2f} s"
                                              for name, seconds in trace.timings.items()),
                      soft_wrap=True, highlight=False)
    console.print(f"[dim]{ATTRIBUTION}[/dim]")


async def _answer(turn: SessionTurn, console: Console) -> Reply:
    """Stream one reply to the console; the finished (and stored) reply."""
    written: list[str] = []
    # The retrieval and the answer's check take a while on a CPU: show that work is going on.
    waiting = console.status("searching and checking…") if console.is_terminal else None
    if waiting is not None:
        waiting.start()
    try:
        async for delta in turn:
            if waiting is not None:
                waiting.stop()
                waiting = None
            written.append(delta)
            console.file.write(delta)
            console.file.flush()
    except BaseException:
        if written:  # end the half-written line before the error is printed
            console.file.write("\n")
        raise
    finally:
        if waiting is not None:
            waiting.stop()
    reply = turn.reply
    if written:
        console.file.write("\n")
    if "".join(written).strip() != reply.text.strip():
        # The last stage revised what streamed (or nothing streamed): show the final text.
        if written:
            console.print("[dim](revised)[/dim]")
        console.print(reply.text, markup=False, highlight=False, soft_wrap=True)
    return reply


def repl(
    engine: ChatEngine,
    store: ConversationStore,
    *,
    console: Console,
    runner: asyncio.Runner,
    read: Callable[[str], str] = input,
    conversation_id: str | None = None,
    model: str = "",
    today: str | None = None,
) -> str | None:
    """Chat until ``/quit``, EOF or Ctrl-C at the prompt; each answered turn is stored.

    Args:
        engine: Answers each turn.
        store: Where turns go; a session is one conversation (``/new`` starts another).
        console: Where replies, sources and traces are printed.
        runner: The event loop every turn runs on.
        read: Reads one line given a prompt (``input``; tests pass scripted lines).
        conversation_id: Continue this stored conversation (already resolved).
        model: Model spec stored with a new conversation.
        today: ISO date the engine treats as today (``None``: the real today).

    Returns:
        The id of the conversation last written to (or resumed), if any.
    """
    session = ChatSession(engine, store, model=model, conversation_id=conversation_id)
    kept = conversation_id
    if conversation_id is not None:
        stored = store.get(conversation_id)
        console.print(f"resumed conversation [bold]{stored.id}[/bold]: {stored.turns} "
                      f"earlier turn(s), \"{escape(stored.title)}\"", soft_wrap=True)
    while True:
        try:
            line = read(PROMPT)
        except (EOFError, KeyboardInterrupt):
            console.print()
            break
        text = line.strip()
        if not text:
            continue
        if text.startswith("/"):
            command = text.split()[0].lower()
            if command in ("/quit", "/exit", "/q"):
                break
            last = session.last_reply
            if command == "/help":
                console.print(HELP, markup=False, highlight=False)
            elif command in ("/trace", "/sources"):
                if last is None:
                    console.print("no reply yet: ask something first")
                elif command == "/trace":
                    print_trace(last, console)
                else:
                    print_sources(last, console)
            elif command == "/new":
                session.new()
                console.print("new conversation")
            else:
                console.print(f"unknown command {escape(command)}; /help lists the commands")
            continue
        try:
            turn = session.stream(line, today=today)
        except MessageError as exc:
            _error(console, exc)
            continue
        try:
            reply = runner.run(_answer(turn, console))
        except KeyboardInterrupt:
            console.print("[yellow]interrupted: this turn was not kept[/yellow]")
            continue
        except FreshwikiError as exc:
            _error(console, exc)
            continue
        print_sources(reply, console)
        kept = session.conversation_id
    if kept is not None:
        console.print(f"[dim]conversation {kept} kept; continue it with "
                      f"`freshwiki chat --resume {kept}`[/dim]", soft_wrap=True)
    return kept


def _error(console: Console, exc: FreshwikiError) -> None:
    console.print(f"[bold red]error:[/bold red] {escape(exc.message)}", highlight=False,
                  soft_wrap=True)
    if exc.hint:
        console.print(f"[yellow]hint:[/yellow] {escape(exc.hint)}", highlight=False,
                      soft_wrap=True)


def run_chat(
    settings: Settings,
    *,
    mode: Mode,
    k: int | None,
    index_name: str | None,
    resume: str | None,
    open_index: Callable[[Settings, str | None], HybridIndex],
    console: Console,
    err: Console,
    read: Callable[[str], str] | None = None,
) -> None:
    """The ``freshwiki chat`` session: resolve ``--resume``, open model and index, run the REPL.

    The conversation id and the model are checked before the index is opened, so a typo
    fails in a second rather than after the default corpus is built.
    """
    from freshwiki.chat import GroundedChat
    from freshwiki.llm import open_llm

    with ConversationStore.open(settings) as store:
        conversation_id = store.resolve(resume) if resume else None
        llm = open_llm(settings.model, settings=settings)
        with asyncio.Runner() as runner:
            try:
                index = open_index(settings, index_name)
                try:
                    engine = GroundedChat(llm, index, mode=mode, k=k)
                    err.print(f"[bold]freshwiki chat[/bold] · {escape(settings.model)} · "
                              f"{mode} mode · {len(index):,} passages · /help for commands · "
                              f"[dim]{ATTRIBUTION}[/dim]", soft_wrap=True)
                    repl(engine, store, console=console, runner=runner,
                         read=read or _line_reader(console),
                         conversation_id=conversation_id, model=settings.model)
                finally:
                    index.close()
            finally:
                runner.run(llm.aclose())


def _line_reader(console: Console) -> Callable[[str], str]:
    """``input`` with line editing on a terminal; on piped input, echo each line read.

    Echoing makes a piped session's output read as a transcript (``you> question``, reply,
    sources) rather than replies without their questions.
    """
    if sys.stdin.isatty():
        import readline  # noqa: F401  (line editing and history for input())

        return input

    def read_piped(prompt: str) -> str:
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        console.print(prompt + line.rstrip("\n"), markup=False, highlight=False,
                      soft_wrap=True)
        return line.rstrip("\n")

    return read_piped


def list_conversations(settings: Settings, *, console: Console, as_json: bool,
                       limit: int) -> None:
    """``freshwiki chat list``: stored conversations, most recently continued first."""
    path = conversations_path(settings)
    summaries = []
    if path.exists():
        with ConversationStore(path) as store:
            summaries = store.summaries(limit=limit)
    if as_json:
        console.print_json(json.dumps([dataclasses.asdict(s) for s in summaries]))
        return
    if not summaries:
        console.print(f"no conversations in {path}; start one with `freshwiki chat`",
                      soft_wrap=True)
        return
    table = Table(title=f"conversations in {path}")
    table.add_column("id", no_wrap=True)
    table.add_column("updated (UTC)", no_wrap=True)
    table.add_column("messages", justify="right")
    table.add_column("model", overflow="fold")
    table.add_column("title", overflow="fold")
    for s in summaries:
        table.add_row(s.id, s.updated[:16].replace("T", " "), str(s.messages), escape(s.model),
                      escape(s.title))
    console.print(table)
    console.print("continue one with `freshwiki chat --resume ID`", soft_wrap=True)


def export_traces(settings: Settings, out: Path, *, conversation: str | None,
                  dedupe: bool = True) -> dict[str, Any]:
    """Write every stored stage call as one chat-format JSONL fine-tuning example.

    Calls whose output the pipeline could not use (``StageRecord.error``) are left out: they
    would teach the student the teacher's mistakes. With ``dedupe``, a call repeated exactly
    (same instruction, input and output, as response-cache hits are) is written once.

    Returns:
        Counts: ``examples`` written, ``skipped_unusable``, ``skipped_duplicates``,
        ``conversations`` they came from.

    Raises:
        FreshwikiError: No conversation is stored yet, or ``conversation`` names none.
    """
    path = conversations_path(settings)
    if not path.exists():  # don't create an empty store just to say there is nothing in it
        raise FreshwikiError(f"no stored conversations at {path}",
                             hint="chat first (`freshwiki chat` or `freshwiki serve`), or check "
                             "FRESHWIKI_HOME.")
    with ConversationStore(path) as store:
        chosen = store.resolve(conversation) if conversation is not None else None
        return _write_examples(store.stage_examples(chosen), out, dedupe=dedupe)


def export_run_traces(settings: Settings, out: Path, run_ids: Sequence[str], *,
                      dedupe: bool = True) -> dict[str, Any]:
    """Like :func:`export_traces`, from the grounded system's turns in evaluation runs.

    Every LLM call of every grounded chat turn the runs stored (a question benchmark's
    answer, or each turn of a simulated conversation) becomes one line in the same format;
    its ``conversation_id`` is ``RUN/SAMPLE/TEMPLATE``, ``turn`` the turn in that
    conversation, ``model`` the run's model spec (the teacher). The simulated user's and the
    judge's calls are not in the traces, so they are never exported.

    Returns:
        The counts of :func:`export_traces`, plus ``runs`` (the full run ids).

    Raises:
        FreshwikiError: No runs store, an unknown run, or a run with no grounded chat turn.
    """
    from freshwiki.evaluation import ResultsStore, default_results_path
    from freshwiki.systems.analysis import grounded_turns

    path = default_results_path(settings)
    if not path.exists():
        raise FreshwikiError(f"no evaluation results at {path}, so no run {run_ids[0]!r}",
                             hint="`freshwiki runs` lists stored runs; `freshwiki eval ... "
                             "--system grounded` makes one (is FRESHWIKI_HOME the same?).")
    with ResultsStore(path) as store:
        infos = [store.run_info(r) for r in run_ids]

        def examples() -> Iterator[StageExample]:
            for info in infos:
                found = False
                for turn in grounded_turns(store.traces(info.run_id, key="chat")):
                    found = True
                    source = f"{info.run_id}/{turn.sample_id}/{turn.template}"
                    for record in turn.reply.trace.stages:
                        yield StageExample(source, turn.turn, info.model, record)
                if not found:
                    raise FreshwikiError(
                        f"run {info.run_id} ({info.benchmark}, system {info.system}) stored no "
                        "grounded chat turn",
                        hint="only the grounded system's traces hold stage calls: export a "
                        "run made with `--system grounded`.")

        counts = _write_examples(examples(), out, dedupe=dedupe)
    counts["runs"] = list(dict.fromkeys(i.run_id for i in infos))
    return counts


def _write_examples(examples: Iterable[StageExample], out: Path, *, dedupe: bool
                    ) -> dict[str, Any]:
    """Write usable examples as JSONL (temp file, then renamed): nothing half-written."""
    counts = {"examples": 0, "skipped_unusable": 0, "skipped_duplicates": 0, "conversations": 0}
    seen: set[bytes] = set()
    sources: set[str] = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as fh:
            for example in examples:
                record = example.record
                if record.error:
                    counts["skipped_unusable"] += 1
                    continue
                key = hashlib.sha256(json.dumps(
                    [record.instruction, record.input, record.output]).encode()).digest()
                if dedupe and key in seen:
                    counts["skipped_duplicates"] += 1
                    continue
                seen.add(key)
                sources.add(example.conversation_id)
                fh.write(json.dumps(example.as_training_line(), ensure_ascii=False) + "\n")
                counts["examples"] += 1
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(out)
    counts["conversations"] = len(sources)
    return counts
