"""``freshwiki changes``: knowledge that changes between snapshots of Wikipedia.

``changes diff`` labels the sentences of two versions of each article (unchanged / changed /
new / deleted).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from freshwiki.cli._common import ATTRIBUTION, out, state
from freshwiki.errors import FreshwikiError

if TYPE_CHECKING:
    from freshwiki.changes.snapshots import Aligner, Alignment, Skip
    from freshwiki.llm import LLM

app = typer.Typer(
    help="Knowledge that changes: sentence diffs between snapshots of Wikipedia articles.",
    no_args_is_help=True,
)

_MARK = {"unchanged": "=", "changed": "~", "new": "+", "deleted": "-"}
_STYLE = {"unchanged": "dim", "changed": "yellow", "new": "green", "deleted": "red"}


@app.command("diff")
def diff(
    dumps: Annotated[list[Path], typer.Argument(
        help="HISTORY.xml (a pages-meta-history dump), or OLD_DUMP NEW_DUMP.",
        show_default=False)],
    start: Annotated[str | None, typer.Option(
        "--from", help="Earliest date (YYYY-MM-DD, the end of that day; or an ISO datetime). "
        "With --to and no --every: the article at FROM against the article at TO.")] = None,
    end: Annotated[str | None, typer.Option(
        "--to", help="Latest date (as --from).")] = None,
    every: Annotated[str | None, typer.Option(
        help="Snapshot series: `month` diffs the article as it stood at the end of each "
        "month between --from and --to.")] = None,
    title: Annotated[list[str] | None, typer.Option(
        "--title", help="Only this page (repeatable).")] = None,
    use_llm: Annotated[bool, typer.Option(
        "--llm/--no-llm", help="Check ambiguous pairs with an LLM (slow on CPU); without, "
        "they are labelled by similarity alone and flagged as unverified.")] = False,
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="Model spec for --llm (default: the configured model).")] = None,
    llm_batch: Annotated[int | None, typer.Option(
        "--llm-batch", min=1, help="Sentence pairs the LLM judges per call (default 16; 1: "
        "one call per pair, with a reason each).", show_default=False)] = None,
    changes_only: Annotated[bool, typer.Option(
        "--changes-only", help="Do not print unchanged sentences.")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="One JSON object per article pair (labels, GrowOVER shape, skips).")
    ] = False,
) -> None:
    """Label every sentence of consecutive (or chosen) snapshots of each article.

    = unchanged, ~ changed (with the old sentence), + new, - deleted; ? marks a label that
    similarity alone decided (run with --llm to check it).
    """
    from freshwiki.changes.snapshots import DEFAULT_BATCH_SIZE, Aligner, BatchLLMJudge
    from freshwiki.retrieval import Embedder

    if not 1 <= len(dumps) <= 2:
        raise typer.BadParameter("give HISTORY.xml, or OLD_DUMP NEW_DUMP", param_hint="DUMPS")
    if every not in (None, "month"):
        raise typer.BadParameter(f"{every!r}: only `month` is supported", param_hint="--every")
    if len(dumps) == 2 and (start or end or every):
        raise typer.BadParameter("--from, --to and --every slice one history dump; "
                                 "two dumps are compared as they are", param_hint="--from")
    for path in dumps:
        if not path.is_file():
            raise FreshwikiError(f"dump {path} not found",
                                 hint="give the path of a MediaWiki XML dump (.xml, .bz2, .gz).")
    settings = state.resolved().settings
    if model is not None:

        settings = state.resolved(model=model).settings
    llm: LLM | None = None
    if use_llm:
        from freshwiki.llm import open_llm

        llm = open_llm(settings=settings)
    # One encoder thread: only the few sentences left after hashing are embedded, and small
    # batches lose more to thread wake-ups (badly so on a busy machine) than they gain.
    judge = (BatchLLMJudge(llm, batch_size=llm_batch or DEFAULT_BATCH_SIZE)
             if llm is not None else None)
    aligner = Aligner(Embedder(None, threads=1), judge)
    unverified = 0
    pairs = 0
    try:
        for result in _results(dumps, aligner, start, end, every, title):
            pairs += 1
            if as_json:
                out.print(json.dumps(result.to_dict(), ensure_ascii=False), soft_wrap=True,
                          markup=False, highlight=False)
                continue
            unverified += _print_result(result, out, changes_only=changes_only)
    finally:
        if llm is not None:
            asyncio.run(llm.aclose())
    if as_json:
        return
    if pairs == 0:
        out.print("no article pairs to compare (check --from/--to and --title)",
                  soft_wrap=True)
        return
    if unverified:
        out.print(f"{unverified} label(s) marked ? are unverified: similarity alone decided; "
                  "--llm checks them with a model.", soft_wrap=True, highlight=False)
    out.print(ATTRIBUTION, style="dim")


def _results(dumps: list[Path], aligner: Aligner, start: str | None, end: str | None,
             every: str | None, titles: list[str] | None) -> Iterator[Alignment | Skip]:
    from freshwiki.changes.snapshots import (
        diff_dumps,
        diff_revisions,
        diff_series,
        monthly_cuts,
        parse_cut,
    )
    from freshwiki.corpus import iter_revisions

    wanted = set(titles) if titles else None
    if len(dumps) == 2:
        yield from diff_dumps(dumps[0], dumps[1], aligner, titles=wanted)
        return
    history = dumps[0]
    lo = parse_cut(start) if start else None
    hi = parse_cut(end) if end else None
    if lo and hi and lo > hi:
        raise FreshwikiError(f"--from {start} is after --to {end}",
                             hint="give the earlier date with --from.")
    if every == "month":
        if lo is None or hi is None:
            stamps = [r.timestamp for r in iter_revisions(history)]
            if not stamps:
                raise FreshwikiError(f"{history} has no article revisions",
                                     hint="is it a pages-meta-history dump of articles?")
            lo, hi = lo or min(stamps), hi or max(stamps)
        yield from diff_series(history, aligner, monthly_cuts(lo, hi), titles=wanted)
    elif lo is not None and hi is not None:
        yield from diff_series(history, aligner, [lo, hi], titles=wanted)
    else:
        yield from diff_revisions(history, aligner, start=lo, end=hi, titles=wanted)


def _print_result(result: Alignment | Skip, out: Console, *, changes_only: bool) -> int:
    """Print one pair; returns how many of its labels are unverified."""
    from freshwiki.changes.snapshots import Skip

    if isinstance(result, Skip):
        out.print(f"[yellow]skipped[/yellow] {escape(result.title)} "
                  f"(page {result.page_id}): {escape(result.reason)}", soft_wrap=True)
        return 0
    old, new = result.old, result.new

    def when(snap: object) -> str:
        from freshwiki.changes.snapshots import Snapshot

        assert isinstance(snap, Snapshot)
        at = f"as of {snap.cut:%Y-%m-%d}, " if snap.cut else ""
        return f"{at}revision {snap.revision_id} ({snap.timestamp:%Y-%m-%d %H:%M})"

    out.print(f"[bold]{escape(new.title)}[/bold]: {when(old)} → {when(new)}", soft_wrap=True)
    unverified = 0
    deleted_after: dict[int, list[int]] = {}
    previous = -1
    for lab in result.old_labels:
        if lab.label == "unchanged" and lab.counterparts:
            previous = max(previous, lab.counterparts[-1])
        elif lab.label == "deleted":
            deleted_after.setdefault(previous, []).append(lab.index)

    def line(label: str, text: str, ambiguous: bool, extra: str = "") -> None:
        flag = " ?" if ambiguous else ""
        out.print(f"  [{_STYLE[label]}]{_MARK[label]}{flag} {escape(text)}[/{_STYLE[label]}]"
                  + extra, soft_wrap=True, highlight=False)

    for i in deleted_after.get(-1, []):
        line("deleted", old.sentences[i].text, False)
    for lab in result.new_labels:
        unverified += lab.ambiguous
        if not (changes_only and lab.label == "unchanged" and not lab.ambiguous):
            line(lab.label, new.sentences[lab.index].text, lab.ambiguous)
            if lab.label == "changed" and lab.counterparts:
                out.print(f"      [dim]was: {escape(old.sentences[lab.counterparts[0]].text)}"
                          "[/dim]", soft_wrap=True, highlight=False)
        for i in deleted_after.get(lab.index, []):
            line("deleted", old.sentences[i].text, False)
    counts = result.counts()
    out.print("  " + ", ".join(f"{n} {k}" for k, n in counts.items())
              + (f"; {result.llm_calls} LLM check(s)" if result.llm_calls else ""),
              style="dim", soft_wrap=True, highlight=False)
    return unverified
