"""``claim_verification``: the chat's claim verifiers scored against labelled real claims.

The claims are ``experiments/data/claims.jsonl`` (built by ``experiments/claim_verification.py
build``): the first claim of each real closed-book draft, labelled by reading it against one
real lead paragraph, and constructed claims (the answer sentence, SUPPORTS; its answer
swapped for another, REFUTES; a statement about another article, NOT ENOUGH INFO). Each
sample carries its claim, the question it answered and the lead paragraph, read from the
topic files under ``data_dir`` at load time. Run it with the ``claim-verifier`` system
(``--option verifier=cloze-fast`` etc.); the ``claim-verdict`` scorer compares the verdict
with the label.

The run's dataset identity is the claims' text and the paragraphs' text, not the labels: a
label corrected after a run changes what the script reports (it re-reads the labels), not
which verdicts the run holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshwiki.errors import FreshwikiError
from freshwiki.llm import Message
from freshwiki.seams import Document, Output, Sample, Score, Scorer, Task

if TYPE_CHECKING:
    from freshwiki.config import Settings
    from freshwiki.llm import LLM

LABEL_SET = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
"""The verdicts, in the order reports list them."""
KINDS = ("real-draft", "constructed-statement", "constructed-swap", "constructed-other-article")
"""The claims' kinds (see the module docstring)."""
TOPIC_FILES = {"recent": "recent_articles_en.json", "tail": "tail_articles_en.json",
               "head": "head_articles_en.json"}
"""The lead paragraphs' files under ``data_dir/wikipedia/topics``, by set."""
TEMPLATE = "claim"
OPTIONS: Mapping[str, Any] = {"path": "", "data_dir": "", "split": "test",
                              "kinds": ",".join(KINDS), "ids": "", "external": "",
                              "external_path": ""}
"""Benchmark options and their defaults (``--benchmark-option key=value``); ``external`` and
``external_path`` choose a public set instead of the project's claims (``_external``)."""


class ClaimsError(FreshwikiError):
    """The claims or their paragraphs cannot be read as needed."""


def default_claims_path() -> Path | None:
    """The repository's ``experiments/data/claims.jsonl`` when this is a source checkout."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "experiments" / "data" / "claims.jsonl"
        if candidate.is_file():
            return candidate
    return None


def read_claims(path: Path) -> list[dict[str, Any]]:
    """The claims file's records, in file order.

    Raises:
        ClaimsError: the file is missing.
    """
    if not path.is_file():
        raise ClaimsError(f"{path}: no claims file",
                          hint="pass path= a claims.jsonl (experiments/claim_verification.py "
                               "build writes one).")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def read_leads(data_dir: Path) -> dict[str, dict[str, str]]:
    """``{set: {title: paragraph}}`` of the topic files.

    Raises:
        ClaimsError: a topic file is missing.
    """
    folder = data_dir / "wikipedia" / "topics"
    out = {}
    for key, name in TOPIC_FILES.items():
        if not (folder / name).is_file():
            raise ClaimsError(f"{folder / name}: missing",
                              hint="pass data_dir= the folder holding wikipedia/topics "
                                   "(../shared/data in this project).")
        out[key] = json.loads((folder / name).read_text(encoding="utf-8"))
    return out


class ClaimVerification:
    """Labelled claims, each with its paragraph, one template (``claim``).

    Args:
        items: The claims (as the claims file stores them).
        leads: ``{set: {title: paragraph}}``.
        described: What :meth:`describe` reports besides the count (no paths).
    """

    name = "claim_verification"
    templates: tuple[str, ...] = (TEMPLATE,)
    default_templates: tuple[str, ...] = (TEMPLATE,)
    breakdowns: tuple[str, ...] = ("kind", "label")

    def __init__(self, items: Sequence[dict[str, Any]], leads: Mapping[str, Mapping[str, str]],
                 *, described: Mapping[str, Any] | None = None) -> None:
        missing = [i["id"] for i in items if i["title"] not in leads.get(i["set"], {})]
        if missing:
            raise ClaimsError(f"{len(missing)} claims name a paragraph the topic files lack "
                              f"(first: {missing[0]})",
                              hint="check data_dir: it must be the corpus the claims were "
                                   "built from.")
        self.items = tuple(items)
        self._leads = leads
        self._described = dict(described or {})
        digest = hashlib.sha256()
        for item in self.items:  # claims and paragraphs, never labels
            digest.update(json.dumps(
                [item["id"], item["kind"], item["claim"], item["question"],
                 leads[item["set"]][item["title"]]], ensure_ascii=False).encode("utf-8"))
        self.dataset_hash = digest.hexdigest()

    location_options: tuple[str, ...] = ("path", "data_dir")
    """Options that only say where the data lives: its content hash identifies it."""

    def describe(self) -> Mapping[str, Any]:
        """Split, kinds and count: the data's choice, never where it was read from."""
        return {**self._described, "claims": len(self.items)}

    def samples(self) -> Iterator[Sample]:
        """One sample per claim: input the claim, target the label, the paragraph as document."""
        for item in self.items:
            yield Sample(
                id=str(item["id"]), input=str(item["claim"]), targets=(str(item["label"]),),
                documents=(Document(title=item["title"],
                                    text=self._leads[item["set"]][item["title"]],
                                    source=f"{item['set']}:{item['title']}"),),
                metadata={"kind": item["kind"], "label": item["label"], "split": item["split"],
                          "set": item["set"], "question": item["question"]})

    def render(self, sample: Sample, template: str) -> Task:
        """The claim as one user message; the question as the query (what the check reads)."""
        if template != TEMPLATE:
            raise ClaimsError(f"claim_verification has no template {template!r}",
                              hint=f"its only template is {TEMPLATE!r}.")
        return Task(sample=sample, template=template, messages=(Message.user(sample.input),),
                    query=str(sample.metadata["question"]))

    def scorers(self, judge: LLM | None) -> Sequence[Scorer]:
        """The verdict against the label (no judge needed)."""
        return [VerdictScorer()]


class VerdictScorer:
    """``claim-verdict``: 1 when the verdict is the claim's label; the verdict as the label."""

    name = "claim-verdict"

    async def score(self, task: Task, output: Output) -> Score:
        """Compare the output's verdict with the sample's label."""
        gold = str(task.sample.metadata.get("label") or (task.sample.targets or ("",))[0])
        verdict = str(output.trace.get("verdict") or output.text).strip()
        return Score(value=float(verdict == gold), label=verdict,
                     data={"gold": gold, "kind": task.sample.metadata.get("kind")})


def verdict_scorer(judge: LLM | None) -> Scorer:
    """``claim-verdict`` by name (needs no judge)."""
    return VerdictScorer()


def own_claims_benchmark(settings: Settings, values: Mapping[str, Any]) -> ClaimVerification:
    """The project's claims: options path, data_dir, split (test, dev, all), kinds, ids.

    Args:
        settings: For the default ``data_dir``.
        values: Every option, defaults filled in and names checked.

    Raises:
        ClaimsError: an unknown split or kind; a missing file.
    """
    path = Path(str(values["path"])).expanduser() if values["path"] else default_claims_path()
    if path is None:
        raise ClaimsError("no claims file found: this is not a source checkout",
                          hint="pass --benchmark-option path=claims.jsonl.")
    split = str(values["split"])
    if split not in ("test", "dev", "all"):
        raise ClaimsError(f"claim_verification: unknown split {split!r}",
                          hint="choose test, dev or all.")
    kinds = [k.strip() for k in str(values["kinds"]).split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ClaimsError(f"claim_verification: unknown kinds {bad}",
                          hint=f"choose from {', '.join(KINDS)}.")
    ids = {i.strip() for i in str(values["ids"]).split(",") if i.strip()}
    items = [i for i in read_claims(path) if (split == "all" or i["split"] == split)
             and i["kind"] in kinds and (not ids or i["id"] in ids)]
    data_dir = Path(str(values["data_dir"])).expanduser() if values["data_dir"] \
        else settings.data_dir
    described = {"set": "claims", "split": split, "kinds": kinds, "ids": len(ids) or None}
    return ClaimVerification(items, read_leads(data_dir), described=described)
