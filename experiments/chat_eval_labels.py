"""Blind reading of chat replies the rules cannot place: export them, then merge the labels.

``chat_accuracy.py`` places a reply by rules where it can (it states the gold answer, it says it
does not know); the rest are read. Reading is blind: ``export`` writes every reply to read with
its question, the lead's answer or the premise, and the reply, under an anonymous number, in a
shuffled order and without the system's name; ``merge`` turns the readers' labels (number →
outcome + one line of reason) into ``experiments/data/chat_eval/labels.jsonl``, keyed by system,
item and the exact reply (``chat_accuracy.reply_key``), so a label never applies to another
reply. What is exported:

- every reply whose rule outcome is ``other`` (false premises and FalseQA always: whether a
  reply goes along with a premise is read, never ruled);
- for the absent kinds, every reply the rules call ``answered`` (an abstention in words the
  rule does not know is then read as one);
- for the answerable kinds, every rag, checked and wikichat reply the rules call ``correct`` or
  ``partial``, so that a reply stating the answer and something false besides is caught
  (``overrides``).

The readers' sheet holds no system name and no rule outcome; the key file beside it maps each
number back.

Run::

    .venv/bin/python experiments/chat_eval_labels.py export --out /tmp/to_read.json
    .venv/bin/python experiments/chat_eval_labels.py merge /tmp/to_read.key.json /tmp/read.jsonl

``--new-only`` exports only replies not labelled yet, so a long run can be read in batches.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import chat_accuracy as ca

LABELLER = "project maintainers (blind reading; not independent human annotation)"
OUTCOMES = {
    "answerable": ("correct", "partial", "wrong", "unspecific", "dont_know"),
    "two_part": ("correct", "partial", "wrong", "unspecific", "dont_know"),
    "followup": ("correct", "partial", "wrong", "unspecific", "dont_know"),
    "absent_subject": ("abstained", "answered"),
    "absent_fact": ("abstained", "answered"),
    "false_premise": ("corrected", "rejected", "affirmed", "abstained", "unrelated"),
    "falseqa": ("corrected", "rejected", "affirmed", "abstained", "unrelated"),
}


def to_read(items: list[dict[str, Any]], replies: dict[str, dict[str, Any]]
            ) -> list[dict[str, Any]]:
    """The replies to read (see the module docstring), shuffled, numbered, names hidden."""
    out = []
    for item in items:
        kind = item["kind"]
        if kind == "conflict":
            continue
        for system, rows in replies.items():
            if system.startswith("_") or item["id"] not in rows:
                continue
            reply = rows[item["id"]]
            ruled = ca.rule_outcome(item, reply["reply"], reply["grounded"])
            wanted = (ruled == "other" or kind in ("false_premise", "falseqa")
                      or (kind in ca.ABSENT and ruled == "answered")
                      or (kind in ca.ANSWERABLE and system in ("rag", "checked", "wikichat")
                          and ruled in ("correct", "partial")))
            if wanted:
                out.append({"system": system, "id": item["id"], "kind": kind,
                            "rule_outcome": ruled, "reply": reply["reply"],
                            "first_reply": reply.get("first_reply", ""),
                            "key": ca.reply_key(system, item["id"], reply["reply"])})
    random.Random(31).shuffle(out)
    return out


def export(args: argparse.Namespace) -> int:
    items = {i["id"]: i for i in ca.load_items(args.split, ca.KINDS, [], args.falseqa)}
    raw = ca.RESULTS.with_name(args.replies)
    replies = json.loads(raw.read_text(encoding="utf-8"))
    rows = to_read(list(items.values()), replies)
    if args.new_only and ca.LABELS.exists():
        done = {json.loads(line)["key"] for line in ca.LABELS.read_text(encoding="utf-8")
                .splitlines() if line.strip()}
        rows = [row for row in rows if row["key"] not in done]
    sheet, keys = [], []
    for number, row in enumerate(rows, start=1):
        item = items[row["id"]]
        sheet.append({
            "n": number, "kind": row["kind"], "outcomes": OUTCOMES[row["kind"]],
            "question": item.get("question"), "turns": item.get("turns"),
            "first_reply": row["first_reply"] or None,
            "gold_answer": item.get("answers"), "premise": item.get("premise"),
            "expected": item.get("expected"), "lead_titles": item.get("titles"),
            "reply": row["reply"]})
        keys.append({"n": number, "key": row["key"], "system": row["system"], "id": row["id"],
                     "rule_outcome": row["rule_outcome"], "kind": row["kind"],
                     "reply": row["reply"]})
    out = Path(args.out)
    out.write_text(json.dumps(sheet, indent=1, ensure_ascii=False), encoding="utf-8")
    out.with_name(out.stem + ".key.json").write_text(
        json.dumps(keys, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"{len(sheet)} replies to read written to {out} (the readers' sheet: no system "
          f"names, no rule outcomes); the key to merge with: {out.stem}.key.json")
    return 0


def merge(args: argparse.Namespace) -> int:
    sheet = {row["n"]: {**row, "outcomes": OUTCOMES[row["kind"]]}
             for row in json.loads(Path(args.key).read_text(encoding="utf-8"))}
    read = [json.loads(line) for line in Path(args.labels).read_text(encoding="utf-8")
            .splitlines() if line.strip()]
    labels = {row["key"]: row for row in (json.loads(line) for line in ca.LABELS.read_text(
        encoding="utf-8").splitlines() if line.strip())} if ca.LABELS.exists() else {}
    for row in read:
        entry = sheet[int(row["n"])]
        if row["outcome"] not in entry["outcomes"]:
            raise SystemExit(f"{args.labels}: n={row['n']}: outcome {row['outcome']!r} is not "
                             f"one of {entry['outcomes']}")
        label = {"key": entry["key"], "system": entry["system"], "id": entry["id"],
                 "outcome": row["outcome"], "reason": row["reason"], "labeller": LABELLER,
                 "reply_sha256": hashlib.sha256(entry["reply"].encode()).hexdigest()[:16]}
        if entry["rule_outcome"] != "other" and row["outcome"] != entry["rule_outcome"]:
            label["overrides"] = entry["rule_outcome"]
        labels[label["key"]] = label
    ca.LABELS.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n"
                                 for v in labels.values()), encoding="utf-8")
    print(f"{len(read)} labels merged; {len(labels)} in {ca.LABELS}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    out = sub.add_parser("export")
    out.add_argument("--out", required=True)
    out.add_argument("--split", default="test")
    out.add_argument("--replies", default="chat_accuracy_eval_replies.json")
    out.add_argument("--falseqa", type=Path, default=None)
    out.add_argument("--new-only", action="store_true",
                     help="leave out replies already labelled in labels.jsonl (read a run in "
                          "batches while it is still writing replies)")
    out.set_defaults(run=export)
    back = sub.add_parser("merge")
    back.add_argument("key", help="the .key.json file export wrote beside the sheet")
    back.add_argument("labels")
    back.set_defaults(run=merge)
    args = parser.parse_args()
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
