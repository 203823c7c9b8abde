"""Render every figure of the README, ``docs/results.md`` and ``docs/chat.md`` from the files.

A figure typed by hand drifts from the file it cites; so the Markdown holds none. Each
rendered block sits between two markers::

    <!-- figures:NAME -->
    ...text rendered from experiments/figure_templates/NAME.md.j2...
    <!-- /figures:NAME -->

and this script replaces what is between them with the template rendered over the committed
result files (``experiments/results/*.json``, written by ``_provenance.write_result``). Every
block ends by naming what it rests on: the file, the command that generated it (and the one
that reported it, when they differ), the commit and the data kind, all read from the file's
header, with a mark where the provenance is weak (uncommitted source, a command whose inputs
lay in a temporary folder, a re-report whose generating command was not recorded).

Templates read a result as ``result("NAME")``; every lookup on it is strict: a missing file or
field stops the render with the file and the field named, rather than printing a blank.

``python experiments/figures.py`` rewrites the pages; ``--check`` only compares and exits 1
when a page differs from its rendering (what the test suite and ``make figures`` rely on).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import jinja2

from freshwiki.stats import class_scores, wilson_ci

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
TEMPLATES = ROOT / "experiments" / "figure_templates"
PAGES = ("README.md", "docs/results.md", "docs/chat.md")
"""The pages whose figures are rendered, relative to the repository."""

BLOCK = re.compile(r"(?P<open><!-- figures:(?P<name>[a-z0-9_-]+) -->\n)(?P<body>.*?)"
                   r"(?P<close><!-- /figures:(?P=name) -->)", re.S)
MINUS = "\u2212"
TEMP_DIR = re.compile(r"(?<![\w.])/tmp/")
REPORT_FLAGS = ("--report-only", "--resume")

MARK_DIRTY = "⚠ uncommitted source"
MARK_TEMP = "⚠ inputs not rebuildable (temporary folder)"
MARK_UNRECORDED = "⚠ generating command not recorded"
MARK_NO_HEADER = "⚠ no provenance header"


class FigureError(Exception):
    """A figure cannot be rendered: names the result file and the field, or the page."""


# -- strict access to a result file ---------------------------------------------------------


class Node:
    """A JSON value that names its file and path when a template asks for what is not there."""

    def __init__(self, value: Any, file: str, path: str = "") -> None:
        self._value = value
        self._file = file
        self._path = path

    def _child(self, key: Any) -> Any:
        if isinstance(key, slice) and isinstance(self._value, list):
            return Node(self._value[key], self._file, f"{self._path}[slice]")
        here = f"{self._path}.{key}" if self._path else str(key)
        value = self._value
        try:
            if isinstance(value, Mapping):
                found = value[str(key)] if str(key) in value else value[key]
            elif isinstance(value, list):
                found = value[int(key)]
            else:
                raise KeyError(key)
        except (KeyError, IndexError, ValueError, TypeError):
            raise FigureError(f"{self._file}: no field {here!r}") from None
        return wrap(found, self._file, here)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        return self._child(key)

    def __getitem__(self, key: Any) -> Any:
        return self._child(key)

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self._value, Mapping):
            return iter(self._value)
        return (wrap(v, self._file, f"{self._path}.{i}") for i, v in enumerate(self._value))

    def __len__(self) -> int:
        return len(self._value)

    def __contains__(self, key: object) -> bool:
        return key in self._value

    def has(self, key: str) -> bool:
        """Whether the field exists (for the optional keys of older files)."""
        return isinstance(self._value, Mapping) and key in self._value

    def where(self, **match: Any) -> Node:
        """The one element of a list whose fields equal ``match`` (a table row)."""
        rows = [i for i, row in enumerate(self._value)
                if isinstance(row, Mapping) and all(row.get(k) == v for k, v in match.items())]
        if len(rows) != 1:
            raise FigureError(f"{self._file}: {len(rows)} rows of {self._path!r} match {match}")
        child = self._child(rows[0])
        assert isinstance(child, Node)
        return child

    @property
    def raw(self) -> Any:
        """The plain JSON value."""
        return self._value


def wrap(value: Any, file: str, path: str) -> Any:
    """Containers stay strict nodes; numbers and strings come out plain."""
    return Node(value, file, path) if isinstance(value, (Mapping, list)) else value


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


class Results:
    """The result files a render reads, each loaded once; records which ones were cited."""

    def __init__(self, folder: Path = RESULTS) -> None:
        self.folder = folder
        self.cache: dict[str, Node] = {}

    def __call__(self, name: str) -> Node:
        if name not in self.cache:
            path = self.folder / (name if name.endswith((".json", ".md")) else f"{name}.json")
            if not path.is_file():
                raise FigureError(f"{rel(path)}: result file missing (a rendered figure cites "
                                  f"it; re-run its script or restore it from git)")
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise FigureError(f"{rel(path)}: not JSON ({exc})") from None
            self.cache[name] = Node(lift_meta(value), rel(path))
        return self.cache[name]

    def names(self) -> list[str]:
        """Every summary result file (stems), companions (replies, verdicts) left out."""
        return sorted(path.stem for path in self.folder.glob("*.json")
                      if not path.stem.endswith(("_replies", "_verdicts"))
                      and "_replies_" not in path.stem)


def lift_meta(value: Any) -> Any:
    """Older scripts kept their header under ``meta``: read it as the top-level header."""
    if not isinstance(value, dict) or "command" in value:
        return value
    meta = value.get("meta")
    if not isinstance(meta, Mapping) or "command" not in meta:
        return value
    head = {key: meta[key] for key in ("command", "commit", "date") if key in meta}
    head["src_uncommitted_changes"] = bool(meta.get("uncommitted_changes_in_src"))
    return {**head, **value}


REFERENCES = ROOT / "experiments" / "data" / "figure_references.json"
"""Goals and papers' published figures: compared against, never measured here."""


def reference(results: Results) -> Node:
    """The goals and papers' figures (``experiments/data/figure_references.json``)."""
    if "references" not in results.cache:
        if not REFERENCES.is_file():
            raise FigureError(f"{rel(REFERENCES)}: reference file missing")
        results.cache["references"] = Node(json.loads(REFERENCES.read_text(encoding="utf-8")),
                                           rel(REFERENCES))
    return results.cache["references"]


def from_git(commit: str, path: str) -> Node:
    """A result file as it was at ``commit`` (history files live in git, not in the tree)."""
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise FigureError(f"{commit}:{path}: git show failed ({exc})") from None
    if proc.returncode != 0:
        raise FigureError(f"{commit}:{path}: not in git history ({proc.stderr.strip()})")
    return Node(json.loads(proc.stdout), f"{commit}:{path}")


def jsonl(path: str) -> list[dict[str, Any]]:
    """The rows of a committed JSON-lines data file a figure rests on (a path in the repo)."""
    full = ROOT / path
    if not full.is_file():
        raise FigureError(f"{path}: data file missing")
    rows = []
    for number, line in enumerate(full.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise FigureError(f"{path}: line {number} is not JSON ({exc})") from None
    return rows


def md_table(path: Path, heading: str) -> list[dict[str, str]]:
    """The first Markdown table after the line starting with ``heading`` in a report file."""
    if not path.is_file():
        raise FigureError(f"{rel(path)}: report file missing")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line == heading), None)
    if start is None:
        start = next((i for i, line in enumerate(lines) if line.startswith(heading)), None)
    if start is None:
        raise FigureError(f"{rel(path)}: no line starting {heading!r}")
    table: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip("|").split("|")])
        elif table:
            break
    if len(table) < 3:
        raise FigureError(f"{rel(path)}: no table after {heading!r}")
    head = table[0]
    return [dict(zip(head, row, strict=False)) for row in table[2:]]


# -- number formats --------------------------------------------------------------------------


def _num(value: Any) -> float:
    if isinstance(value, (Node, bool)) or not isinstance(value, (int, float)):
        raise FigureError(f"expected a number, got {value!r}")
    return float(value)


def dec(value: Any, places: int = 3) -> str:
    """A share as the pages write it: ``.760``, ``1.00`` (no leading zero below one)."""
    x = _num(value)
    if abs(x) >= 1 - 0.5 * 10 ** -places:
        return half_up(x, max(places - 1, 1)).replace("-", MINUS)
    text = half_up(abs(x), places).lstrip("0")
    return (MINUS if x < 0 and text.strip(".0") else "") + text


def half_up(x: float, places: int) -> str:
    """``x`` to ``places`` decimals, halves rounded up as a reader rounds the stored value.

    ``0.835`` gives ``0.84``; Python's binary formatting would give ``0.83``.
    """
    quantum = Decimal(1).scaleb(-places)
    return str(Decimal(repr(x)).quantize(quantum, rounding=ROUND_HALF_UP))


def signed(value: Any, places: int = 3) -> str:
    """A difference: ``+.067``, ``.000``, or a negative one with a minus sign (U+2212)."""
    x = _num(value)
    text = dec(x, places)
    if x > 0 and text.strip(".0"):
        return "+" + text
    return text


def ci(values: Any, places: int = 2, sign: bool = False) -> str:
    """``[.71, .84]`` from ``[point, low, high]`` or ``[low, high]``."""
    seq = list(values.raw if isinstance(values, Node) else values)
    low, high = seq[-2], seq[-1]
    fmt = signed if sign else dec
    return f"[{fmt(low, places)}, {fmt(high, places)}]"


def pct(value: Any, places: int = 1) -> str:
    """A share in percent without the sign: ``30.6``."""
    return half_up(_num(value) * 100, places)


def fixed(value: Any, places: int = 1) -> str:
    """A plain decimal: ``30.6`` (a value already in percent, seconds)."""
    return half_up(_num(value), places).replace("-", MINUS)


def first_number(text: Any) -> float:
    """The first number of a report cell such as ``0.227 [0.003, 0.468]``."""
    found = re.search(r"[-−]?\d*\.?\d+", str(text))
    if not found:
        raise FigureError(f"no number in report cell {text!r}")
    return float(found.group().replace(MINUS, "-"))


def cell_interval(text: Any) -> str:
    """A report cell ``0.227 [0.003, 0.468]`` written as the pages do: ``+.227 [.003, .468]``."""
    found = re.findall(r"[-−]?\d*\.?\d+", str(text))
    if len(found) != 3:
        raise FigureError(f"not a value with an interval: {text!r}")
    point, low, high = (float(x.replace(MINUS, "-")) for x in found)
    return f"{signed(point)} [{dec(low)}, {dec(high)}]"


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def month(date: Any) -> str:
    """``November 2026`` from an ISO date."""
    found = re.match(r"(\d{4})-(\d{2})", str(date))
    if not found:
        raise FigureError(f"not an ISO date: {date!r}")
    return f"{MONTHS[int(found.group(2)) - 1]} {found.group(1)}"


def day(date: Any) -> str:
    """``27 November 2026`` from an ISO date."""
    found = re.match(r"(\d{4})-(\d{2})-(\d{2})", str(date))
    if not found:
        raise FigureError(f"not an ISO date: {date!r}")
    return f"{int(found.group(3))} {MONTHS[int(found.group(2)) - 1]} {found.group(1)}"


def share_with_interval(hits: int, n: int) -> list[float]:
    """``[share, low, high]``: a share and its Wilson 95 % interval (``freshwiki.stats``)."""
    interval = wilson_ci(int(hits), int(n))
    if interval is None:
        raise FigureError(f"a share of {hits} out of 0 items")
    return [hits / n, interval.low, interval.high]


def per_class(items: Any, scorer: str, label: str, **match: Any) -> list[float | None]:
    """Precision, recall and F1 of ``scorer`` on class ``label`` against the reader's labels.

    Over the file's per-item rows matching ``match``; the reader's label is ``human``
    (computed with ``freshwiki.stats``).
    """
    rows = [row for row in (items.raw if isinstance(items, Node) else items)
            if all(row.get(k) == v for k, v in match.items())]
    if not rows:
        raise FigureError(f"no item rows match {match}")
    try:
        gold = [str(row["human"]) for row in rows]
        said = [str(row[scorer]) for row in rows]
    except KeyError as exc:
        where = items._file if isinstance(items, Node) else "items"
        raise FigureError(f"{where}: an item has no field {exc.args[0]!r}") from None
    scores = class_scores(gold, said, label)
    return [scores.precision, scores.recall, scores.f1]


def count_items(items: Any, **match: Any) -> int:
    """How many of a file's per-item rows match ``match`` (field == value for each)."""
    rows = items.raw if isinstance(items, Node) else items
    return sum(1 for row in rows if all(row.get(k) == v for k, v in match.items()))


def truncate_command(command: Any, width: int = 200) -> str:
    """A command short enough for a table cell; the file holds it whole."""
    text = " ".join(str(command).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def plain(value: Any, places: int = 2) -> str:
    """A number with at most ``places`` decimals and no trailing zeros: ``1``, ``1.96``."""
    text = half_up(_num(value), places).rstrip("0").rstrip(".")
    return text.replace("-", MINUS)


def signed_int(value: Any) -> str:
    """A whole difference: ``+2``, ``0``, or a negative one with a minus sign."""
    whole = round(_num(value))
    return f"+{whole}" if whole > 0 else str(whole).replace("-", MINUS)


def count(value: Any) -> str:
    """An integer with thousands separated: ``1,359``."""
    return f"{round(_num(value)):,}"


def shares_text(data: Node) -> str:
    """``81 % constructed, 19 % real`` from the data block's shares, largest first."""
    shares = data.shares
    parts = sorted(((float(shares[k]), k) for k in ("real", "constructed", "synthetic")
                    if round(float(shares[k]) * 100) > 0), reverse=True)
    return ", ".join(f"{round(share * 100)} % {kind}" for share, kind in parts)


# -- provenance of a cited file ---------------------------------------------------------------


def generating_commands(r: Node) -> list[str]:
    """The commands that generated the file's outputs, as far as the file records them."""
    if r.has("generated_by"):
        return [str(r.generated_by.command)]
    passes = r.raw.get("passes")
    if isinstance(passes, Mapping):
        recorded = {str(p["command"]) for p in passes.values()
                    if isinstance(p, Mapping) and p.get("command")}
        if recorded:
            return sorted(recorded)
    command = str(r.command) if r.has("command") else ""
    if command and not any(flag in command.split() for flag in REPORT_FLAGS):
        return [command]
    return []


def marks(r: Node) -> list[str]:
    """What a reader must know about a file's provenance before trusting its figure."""
    if not (r.has("command") and r.has("commit")) or not r.raw.get("commit"):
        return [MARK_NO_HEADER]
    out = []
    dirty = bool(r.raw.get("src_uncommitted_changes")) or bool(r.raw.get("allow_dirty"))
    passes = r.raw.get("passes")
    if isinstance(passes, Mapping):
        dirty = dirty or any(isinstance(p, Mapping) and bool(p.get("src_uncommitted_changes"))
                             for p in passes.values())
    if dirty:
        out.append(MARK_DIRTY)
    generating = generating_commands(r)
    if not generating:
        out.append(MARK_UNRECORDED)
    if any(TEMP_DIR.search(c) for c in [*generating, str(r.command)]) \
            and not r.has("provenance_note"):
        out.append(MARK_TEMP)
    return out


def data_kind(r: Node) -> str:
    """Real / constructed / synthetic shares, in or out of sample, measured or projected."""
    if not r.has("data") or not isinstance(r.raw["data"], Mapping) or not r.data.has("shares"):
        return "data kind not recorded"
    data = r.data
    figure = str(data.figure).split(" (")[0].strip()
    return f"{shares_text(data)}; {clause(data.sample)}; {figure}"


def clause(text: Any, words: int = 8) -> str:
    """The first clause of a header's free text (the file holds the rest)."""
    first = re.split(r"[:;,.(]", str(text), maxsplit=1)[0].strip()
    cut = first.split()
    return " ".join(cut[:words]) + ("…" if len(cut) > words else "")


def source(*names: str, results: Results) -> str:
    """The line under a block naming each file it rests on."""
    lines = []
    for name in names:
        r = results(name)
        file = name if name.endswith(".json") else f"{name}.json"
        if not (r.has("command") and r.has("commit")) or not r.raw.get("commit"):
            lines.append(f"`{file}`: {MARK_NO_HEADER}")
            continue
        generating = generating_commands(r)
        said = [f"`{file}`", f"commit {str(r.commit)[:7]}", data_kind(r)]
        command = str(r.command)
        gen = [c for c in generating if c != command]
        said.insert(1, f"`{command}`" + (f" (generated by `{'`; `'.join(gen)}`)" if gen else ""))
        line = ", ".join(said)
        if r.has("provenance_note"):
            line += f"; note: {r.provenance_note}"
        found = marks(r)
        if found:
            line += " " + " ".join(f"**{m}**" for m in found)
        lines.append(line)
    return "<sub>Source: " + "<br>".join(lines) + "</sub>"


def short(*names: str, results: Results) -> str:
    """A file name with its commit and marks, for a table's source column."""
    parts = []
    for name in names:
        if name.endswith(".md"):
            parts.append(f"`{name}`")
            continue
        r = results(name)
        file = name if name.endswith(".json") else f"{name}.json"
        commit = str(r.raw.get("commit") or "")[:7]
        found = marks(r)
        parts.append(f"`{file}`" + (f" ({commit})" if commit else "")
                     + "".join(f" {m}" for m in found))
    return ", ".join(parts)


# -- rendering --------------------------------------------------------------------------------


def environment(results: Results) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters.update(dec=dec, signed=signed, ci=ci, pct=pct, fixed=fixed, count=count,
                       first_number=first_number, month=month, day=day,
                       truncate_command=truncate_command, plain=plain,
                       cell_interval=cell_interval, negate=lambda x: -_num(x),
                       signed_int=signed_int)
    env.globals.update(
        result=results, reference=lambda: reference(results),
        source=lambda *names: source(*names, results=results),
        short=lambda *names: short(*names, results=results),
        report_table=lambda path, heading: md_table(results.folder / path, heading),
        shares_text=shares_text, data_kind=data_kind, marks=marks,
        generating_commands=generating_commands, result_files=results.names,
        wilson=share_with_interval,
        from_git=from_git, per_class=per_class, count_items=count_items, jsonl=jsonl,
        MINUS=MINUS)
    return env


def render_block(name: str, env: jinja2.Environment) -> str:
    try:
        template = env.get_template(f"{name}.md.j2")
    except jinja2.TemplateNotFound:
        raise FigureError(f"{rel(TEMPLATES / (name + '.md.j2'))}: no template for block "
                          f"{name!r}") from None
    text = template.render().strip("\n")
    # Blank lines inside the markers: Markdown would read a table or paragraph that touches
    # an HTML comment as part of a raw HTML block.
    return f"\n{text}\n\n"


def render_page(text: str, env: jinja2.Environment, page: str = "") -> str:
    """``text`` with every block replaced by its rendering."""
    opened = re.findall(r"<!-- figures:([a-z0-9_-]+) -->", text)
    closed = re.findall(r"<!-- /figures:([a-z0-9_-]+) -->", text)
    if sorted(opened) != sorted(closed):
        raise FigureError(f"{page}: unbalanced figure markers (opened {opened}, closed {closed})")

    def one(match: re.Match[str]) -> str:
        return match["open"] + render_block(match["name"], env) + match["close"]

    return BLOCK.sub(one, text)


def render_all(root: Path = ROOT, results_dir: Path | None = None,
               pages: Sequence[str] = PAGES) -> dict[str, str]:
    """Each page's rendered text, keyed by its path relative to ``root``."""
    env = environment(Results(results_dir or root / "experiments" / "results"))
    return {page: render_page((root / page).read_text(encoding="utf-8"), env, page)
            for page in pages}


def audit(folder: Path = RESULTS) -> dict[str, list[str]]:
    """Every result file with weak provenance, by kind of weakness (``--audit``).

    Companion files (replies, verdicts) carry no header of their own: their summary file's
    header covers them, so they are left out.
    """
    found: dict[str, list[str]] = {"uncommitted source": [], "generating command not recorded":
                                   [], "temporary folder in the command": [],
                                   "temporary folder, noted": [], "no provenance header": []}
    for path in sorted(folder.glob("*.json")):
        value = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(value, dict) or path.stem.endswith(("_replies", "_verdicts")) \
                or "_replies_" in path.stem:
            continue
        node = Node(lift_meta(value), rel(path))
        for mark in marks(node):
            key = {MARK_DIRTY: "uncommitted source", MARK_UNRECORDED:
                   "generating command not recorded", MARK_TEMP:
                   "temporary folder in the command", MARK_NO_HEADER:
                   "no provenance header"}[mark]
            found[key].append(path.name)
        if node.has("provenance_note") and TEMP_DIR.search(str(value.get("command", ""))):
            found["temporary folder, noted"].append(path.name)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare only; exit 1 when a page differs from its rendering")
    parser.add_argument("--audit", action="store_true",
                        help="list the result files whose provenance is weak, and exit")
    args = parser.parse_args(argv)
    if args.audit:
        for kind, names in audit().items():
            print(f"{kind} ({len(names)}): {', '.join(names) or '-'}")
        return 0
    try:
        rendered = render_all()
    except FigureError as exc:
        print(f"figures: {exc}", file=sys.stderr)
        return 2
    stale = []
    for page, text in rendered.items():
        path = ROOT / page
        current = path.read_text(encoding="utf-8")
        if current == text:
            continue
        stale.append(page)
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True),
                f"{page} (committed)", f"{page} (rendered)"))
        else:
            path.write_text(text, encoding="utf-8")
    blocks = sum(len(BLOCK.findall(text)) for text in rendered.values())
    if args.check and stale:
        print(f"figures: {', '.join(stale)} differ from the result files; run `make figures`",
              file=sys.stderr)
        return 1
    print(f"figures: {blocks} blocks in {len(rendered)} pages"
          + (f", rewrote {', '.join(stale)}" if stale else ", all up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
