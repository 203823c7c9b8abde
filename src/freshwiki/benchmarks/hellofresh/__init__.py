"""HelloFresh: can a model tell, at the time, which crowd contributions will last?

Two benchmarks over living data, each a yes/no question per item, balanced per period:

* ``hellofresh-notes``: will this Community Note be rated helpful? Samples come from the
  balanced notes file (``freshwiki notes build``; default ``HOME/notes/balanced-month-seed0
  .jsonl``), one per note, period = month.
* ``hellofresh-edits``: will this Wikipedia edit be kept (not reverted)? Samples come from the
  balanced edits file (``freshwiki edits build``; default ``HOME/edits/balanced-week-seed0
  .jsonl``), period = the file's (ISO week by default).

The positive class is ``yes`` (helpful / kept). Each item is asked with the paper's five
phrasings by default (:mod:`._prompts`): templates ``manual`` (our wording of the paper's
question: is the post misleading and the note helpful; is the edit correct and should it be
accepted) and ``r1``..``r4`` (rephrasings written by local models, stored with their authors
in ``data/instructions.jsonl``), in the paper's layout (``templates/{kind}/paper.j2``). Our
older phrasings ``p1``..``p5`` (predict the community's verdict; with editor type, edit
summary and minor flag) are still there by name (``--templates p1,p2,p3,p4,p5``). The runner
runs sample x template; answers are capped at 15 tokens (the paper's cap).
The scorer ``hellofresh-correct`` parses the answer (:func:`parse_answer`: yes / no / none /
blocked) and scores 1.0 when it equals the gold answer; its label is the parsed answer, from
which ``freshwiki.evaluation`` computes precision, recall, F1, the majority vote over the five
phrasings, rankings per period and the deployment simulation.

Two regimes are systems (``freshwiki.systems``): ``zero-shot`` asks the question as rendered;
``search-agent`` first searches (a query it writes, top-5 documents, a summary of each) and
asks with the summaries in context, and with ``--option control=true`` shows the summaries of
an unrelated sample's search instead (the pairing is fixed here, see
:func:`control_partners`). The prompts the search agent uses live in ``prompts/``.

Sample metadata is described in :mod:`._data`.
"""

from __future__ import annotations

from freshwiki.benchmarks.hellofresh._benchmark import (
    EDITS_FILE,
    MAX_NEW_TOKENS,
    NOTES_FILE,
    SCORER,
    TEMPLATES,
    CorrectScorer,
    HelloFresh,
    UnknownTemplateError,
    edits_factory,
    notes_factory,
)
from freshwiki.benchmarks.hellofresh._data import (
    EDIT_TEXT_CHARS,
    POST_SITES,
    DatasetError,
    Item,
    control_partners,
    edit_subject,
    fit_texts,
    load_edit_items,
    load_note_items,
    quartile_labels,
    wikipedia_url,
)
from freshwiki.benchmarks.hellofresh._parse import ANSWERS, Answer, is_blocked, parse_answer
from freshwiki.benchmarks.hellofresh._prompts import (
    INSTRUCTIONS_FILE,
    OUR_TEMPLATES,
    PAPER_TEMPLATES,
    Instruction,
    PromptDataError,
    paper_instruction,
    paper_instructions,
)
from freshwiki.llm import LLM
from freshwiki.seams import Scorer
from freshwiki.systems.search_agent import PROMPTS


def correct_scorer(judge: LLM | None) -> Scorer:
    """``hellofresh-correct``: parses the answer text, so it needs no model."""
    del judge
    return CorrectScorer()


__all__ = [
    "ANSWERS",
    "EDITS_FILE",
    "EDIT_TEXT_CHARS",
    "INSTRUCTIONS_FILE",
    "MAX_NEW_TOKENS",
    "NOTES_FILE",
    "OUR_TEMPLATES",
    "PAPER_TEMPLATES",
    "POST_SITES",
    "PROMPTS",
    "SCORER",
    "TEMPLATES",
    "Answer",
    "CorrectScorer",
    "DatasetError",
    "HelloFresh",
    "Instruction",
    "Item",
    "PromptDataError",
    "UnknownTemplateError",
    "control_partners",
    "correct_scorer",
    "edit_subject",
    "edits_factory",
    "fit_texts",
    "is_blocked",
    "load_edit_items",
    "load_note_items",
    "notes_factory",
    "paper_instruction",
    "paper_instructions",
    "parse_answer",
    "quartile_labels",
    "wikipedia_url",
]
