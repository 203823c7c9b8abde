"""Knowledge that changes: snapshot alignment, edit streams and revert labels, community notes.

Sits above ``corpus``, ``retrieval`` and ``llm`` (it reads dumps, embeds sentences and asks a
model about ambiguous pairs) and below ``benchmarks``, which turns its typed records into
living benchmarks (GrowOVER, HelloFresh). Each capability is its own subpackage:

- :mod:`freshwiki.changes.snapshots`: sentence alignment between two versions of an article
  and snapshot series sliced from one history dump;
- :mod:`freshwiki.changes.edits`: paragraph-level edits, revert detection, accepted/rejected
  labels and balanced datasets;
- :mod:`freshwiki.changes.notes`: Community Notes downloads parsed and labelled.
"""
