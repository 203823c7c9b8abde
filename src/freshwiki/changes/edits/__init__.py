"""Wikipedia edit streams → paragraph-level edits labelled accepted or rejected (HelloFresh).

Pipeline: history dumps or API exports (:func:`iter_history`) → revisions in page order →
:class:`EditLabeller` / :func:`label_revisions` → :class:`LabelledEdit` and
:class:`Discarded` records (JSONL via :func:`write_jsonl` / :func:`read_jsonl`) →
:func:`build_balanced` datasets per period.

How an edit is found: each revision's clean paragraphs (``clean_wikitext``) are diffed
against its parent's, section by section. A revision is an edit when exactly one run of
paragraphs changed substantially (more than 50 characters of text, not only URLs or markup);
a revision changing several places substantially is discarded, because its revert would
answer for all of them at once. The labelling rules (accepted after N = 2 + Lp/10 stable
later edits; rejected when reverted by identity or text undo and then stable for N edits;
a revert comment is supporting evidence only) are in :mod:`.labeller`.
"""

from freshwiki.changes.edits.api_json import (
    ApiExportError,
    iter_api_revisions,
    looks_like_api_export,
)
from freshwiki.changes.edits.datasets import (
    PERIODS,
    BalancedDataset,
    Period,
    build_balanced,
    period_key,
    write_balanced,
)
from freshwiki.changes.edits.labeller import (
    EditLabeller,
    LabelOptions,
    LabelReport,
    is_text_deleted,
    label_history,
    label_revisions,
    later_edits_required,
)
from freshwiki.changes.edits.records import (
    DISCARD_REASONS,
    Discarded,
    Edit,
    EditRecordError,
    Label,
    LabelledEdit,
    RecordWriter,
    UserType,
    read_jsonl,
    write_jsonl,
)
from freshwiki.changes.edits.reverts import is_revert_comment
from freshwiki.changes.edits.sources import HistorySourceError, history_files, iter_history

__all__ = [
    "DISCARD_REASONS",
    "PERIODS",
    "ApiExportError",
    "BalancedDataset",
    "Discarded",
    "Edit",
    "EditLabeller",
    "EditRecordError",
    "HistorySourceError",
    "Label",
    "LabelOptions",
    "LabelReport",
    "LabelledEdit",
    "Period",
    "RecordWriter",
    "UserType",
    "build_balanced",
    "history_files",
    "is_revert_comment",
    "is_text_deleted",
    "iter_api_revisions",
    "iter_history",
    "label_history",
    "label_revisions",
    "later_edits_required",
    "looks_like_api_export",
    "period_key",
    "read_jsonl",
    "write_balanced",
    "write_jsonl",
]
