"""Community Notes downloads parsed into labelled notes and balanced monthly datasets.

The public downloads (notes, ratings, noteStatusHistory, or the scorer's scoredNotes) become
:class:`LabelledNote` records: a note, whether it ended up currently rated helpful or not
helpful, its vote counts, and the post text when the user supplies a posts file (the downloads
never carry it; without one the records are in the note-only regime). The HelloFresh benchmark
loads these records to ask a model, month by month, whether a note will be rated helpful.

- :mod:`.tables`: files recognised by their header, plain/gzip/zip, early and current columns;
- :mod:`.load`: the streaming reader and labeller, :func:`load_notes`;
- :mod:`.posts`: the optional posts file (CSV, TSV or JSONL);
- :mod:`.filters`: the paper's filters (posts in English, posts without media);
- :mod:`.dataset`: per-period counts, :func:`build_balanced`, JSONL files.
"""

from freshwiki.changes.notes.dataset import (
    BalancedDataset,
    PeriodBalance,
    build_balanced,
    counts_by_period,
    label_totals,
    read_jsonl,
    write_jsonl,
    write_summary,
)
from freshwiki.changes.notes.filters import (
    FILTERS,
    PAPER_FILTERS,
    FilterReport,
    detect_language,
    filter_notes,
    is_english,
    language_evidence,
    media_evidence,
)
from freshwiki.changes.notes.load import FileReport, LoadReport, LoadResult, load_notes
from freshwiki.changes.notes.posts import (
    PostsReport,
    parse_has_media,
    parse_post_date,
    read_posts,
)
from freshwiki.changes.notes.records import (
    HELPFUL,
    LABELS,
    NOT_HELPFUL,
    PERIODS,
    Label,
    LabelledNote,
    Note,
    NotesRecordError,
    Period,
    Post,
    Regime,
    StatusSource,
    VoteCounts,
    period_key,
)
from freshwiki.changes.notes.tables import NotesFormatError, TableKind, classify

__all__ = [
    "FILTERS",
    "HELPFUL",
    "LABELS",
    "NOT_HELPFUL",
    "PAPER_FILTERS",
    "PERIODS",
    "BalancedDataset",
    "FileReport",
    "FilterReport",
    "Label",
    "LabelledNote",
    "LoadReport",
    "LoadResult",
    "Note",
    "NotesFormatError",
    "NotesRecordError",
    "Period",
    "PeriodBalance",
    "Post",
    "PostsReport",
    "Regime",
    "StatusSource",
    "TableKind",
    "VoteCounts",
    "build_balanced",
    "classify",
    "counts_by_period",
    "detect_language",
    "filter_notes",
    "is_english",
    "label_totals",
    "language_evidence",
    "load_notes",
    "media_evidence",
    "parse_has_media",
    "parse_post_date",
    "period_key",
    "read_jsonl",
    "read_posts",
    "write_jsonl",
    "write_summary",
]
