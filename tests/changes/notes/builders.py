"""Small Community Notes downloads in the current column format, written by hand.

Headers follow the current download documentation and the scorer's column lists
(twitter/communitynotes ``scoring/src/scoring/constants.py``): notes carry
``noteAuthorParticipantId`` and ``isMediaNote``, ratings ``raterParticipantId`` and
``helpfulnessLevel`` beside the deprecated ``helpful``/``notHelpful`` pair.
"""

from __future__ import annotations

import datetime as dt
import gzip
from collections.abc import Sequence
from pathlib import Path

MISLEADING = ["misleadingOther", "misleadingFactualError", "misleadingManipulatedMedia",
              "misleadingOutdatedInformation", "misleadingMissingImportantContext",
              "misleadingUnverifiedClaimAsFact", "misleadingSatire"]
NOT_MISLEADING = ["notMisleadingOther", "notMisleadingFactuallyCorrect",
                  "notMisleadingOutdatedButNotWhenWritten", "notMisleadingClearlySatire",
                  "notMisleadingPersonalOpinion"]
NOTES_HEADER = ["noteId", "noteAuthorParticipantId", "createdAtMillis", "tweetId",
                "classification", "believable", "harmful", "validationDifficulty",
                *MISLEADING, *NOT_MISLEADING, "trustworthySources", "summary", "isMediaNote",
                "isCollaborativeNote"]
RATINGS_HEADER = ["noteId", "raterParticipantId", "createdAtMillis", "version", "agree",
                  "disagree", "helpful", "notHelpful", "helpfulnessLevel", "helpfulOther",
                  "helpfulClear", "helpfulGoodSources", "notHelpfulOther", "notHelpfulIncorrect",
                  "ratedOnTweetId", "ratingSourceBucketed"]
STATUS_HEADER = ["noteId", "noteAuthorParticipantId", "createdAtMillis",
                 "timestampMillisOfFirstNonNMRStatus", "firstNonNMRStatus",
                 "timestampMillisOfCurrentStatus", "currentStatus",
                 "timestampMillisOfLatestNonNMRStatus", "mostRecentNonNMRStatus",
                 "timestampMillisOfStatusLock", "lockedStatus", "currentCoreStatus",
                 "currentDecidedBy"]
SCORED_HEADER = ["noteId", "noteIntercept", "noteFactor1", "ratingStatus", "firstTag",
                 "secondTag", "activeRules", "activeFilterTags", "classification",
                 "createdAtMillis"]

CRH = "CURRENTLY_RATED_HELPFUL"
CRNH = "CURRENTLY_RATED_NOT_HELPFUL"
NMR = "NEEDS_MORE_RATINGS"


def millis(year: int, month: int, day: int, hour: int = 12) -> int:
    return int(dt.datetime(year, month, day, hour, tzinfo=dt.UTC).timestamp() * 1000)


def note_row(note_id: int, created: int, tweet_id: int, summary: str, *,
             misleading: Sequence[str] = ("misleadingFactualError",), media: str = "0",
             classification: str = "MISINFORMED_OR_POTENTIALLY_MISLEADING") -> list[str]:
    values = {name: "0" for name in NOTES_HEADER}
    values.update({"noteId": str(note_id), "noteAuthorParticipantId": f"AUTHOR{note_id}",
                   "createdAtMillis": str(created), "tweetId": str(tweet_id),
                   "classification": classification, "believable": "", "harmful": "",
                   "validationDifficulty": "", "trustworthySources": "1", "summary": summary,
                   "isMediaNote": media})
    for name in misleading:
        values[name] = "1"
    return [values[name] for name in NOTES_HEADER]


def rating_row(note_id: int, rater: str, *, level: str = "", helpful: str = "",
               not_helpful: str = "") -> list[str]:
    values = {name: "0" for name in RATINGS_HEADER}
    values.update({"noteId": str(note_id), "raterParticipantId": rater,
                   "createdAtMillis": "1714000000000", "version": "2", "helpful": helpful,
                   "notHelpful": not_helpful, "helpfulnessLevel": level,
                   "ratedOnTweetId": "-1", "ratingSourceBucketed": "DEFAULT"})
    return [values[name] for name in RATINGS_HEADER]


def status_row(note_id: int, status: str) -> list[str]:
    values = dict.fromkeys(STATUS_HEADER, "")
    values.update({"noteId": str(note_id), "noteAuthorParticipantId": f"AUTHOR{note_id}",
                   "createdAtMillis": "1714000000000", "timestampMillisOfCurrentStatus":
                   "1714100000000", "currentStatus": status, "currentDecidedBy": "CoreModel"})
    return [values[name] for name in STATUS_HEADER]


def scored_row(note_id: int, status: str) -> list[str]:
    return [str(note_id), "0.4", "0.01", status, "", "", "CoreModel (v1.1)", "",
            "MISINFORMED_OR_POTENTIALLY_MISLEADING", "1714000000000"]


def tsv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return "".join("\t".join(line) + "\n" for line in [header, *rows])


def write(path: Path, text: str, *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


# The scenario every format test reads, with its expected outcome worked out by hand:
#   101  May 3   NSH CRH        ratings: HELPFUL x2, SOMEWHAT x1, NOT x1, early helpful=1 x1
#   102  May 20  NSH CRNH       ratings: NOT_HELPFUL x2
#   103  Jun 1   NSH NMR        -> excluded, needs more ratings
#   104  Jun 2   scored CRH     (absent from NSH) -> helpful via scoredNotes
#   105  Jun 3   NSH CRNH, scored CRH -> NSH wins: not_helpful
#   106  Jun 4   no status anywhere -> excluded, no status
#   107  Jun 5   NSH empty status, scored CRNH -> not_helpful via scoredNotes
NOTES = [
    note_row(101, millis(2024, 5, 3), 9001, "The photo is from 2019, not from this week."),
    note_row(102, millis(2024, 5, 20), 9002, "This is satire.", misleading=(),
             classification="NOT_MISLEADING"),
    note_row(103, millis(2024, 6, 1), 9003, "Needs a source."),
    note_row(104, millis(2024, 6, 2), 9004, "The quote is fabricated.", media="1"),
    note_row(105, millis(2024, 6, 3), 9005, "Opinion, not fact."),
    note_row(106, millis(2024, 6, 4), 9006, "Unrated note."),
    note_row(107, millis(2024, 6, 5), 9007, "Outdated figures."),
]
RATINGS = [
    rating_row(101, "R1", level="HELPFUL"),
    rating_row(101, "R2", level="HELPFUL"),
    rating_row(101, "R3", level="SOMEWHAT_HELPFUL"),
    rating_row(101, "R4", level="NOT_HELPFUL"),
    rating_row(101, "R5", helpful="1", not_helpful="0"),
    rating_row(102, "R1", level="NOT_HELPFUL"),
    rating_row(102, "R2", level="NOT_HELPFUL"),
    rating_row(103, "R1", level="HELPFUL"),
]
STATUSES = [status_row(101, CRH), status_row(102, CRNH), status_row(103, NMR),
            status_row(105, CRNH), status_row(107, "")]
SCORED = [scored_row(104, CRH), scored_row(105, CRH), scored_row(107, CRNH)]


def write_scenario(folder: Path, *, gz: bool = False) -> Path:
    """The scenario under deliberately unhelpful file names: kinds come from headers."""
    write(folder / "a.tsv", tsv(NOTES_HEADER, NOTES), gz=gz)
    write(folder / "b.tsv", tsv(RATINGS_HEADER, RATINGS), gz=gz)
    write(folder / "c.tsv", tsv(STATUS_HEADER, STATUSES), gz=gz)
    write(folder / "d.tsv", tsv(SCORED_HEADER, SCORED), gz=gz)
    return folder
