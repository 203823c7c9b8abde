"""WikiContradict (Hou et al., 2024): do models notice when Wikipedia contradicts itself?

253 questions over 130 pairs of Wikipedia passages that an editor tagged as inconsistent. Each
question has two gold answers, one per passage; a good answer to a two-passage prompt gives both
and says that the sources disagree.

Data. ``wikicontradict.json`` (the IBM release, via ``../shared/data/wikicontradict/``) is a list
of 130 items. Questions live in ``annotationResult.question{N}`` with
``question{N}_answer1``/``_answer2``; the annotation tool also left answer slots without a
question, holding placeholders such as "add the answer based on Passage 1" (245 of them). The
loader takes exactly the slots that have a question (130 + 83 + 21 + 7 + 3 + 3 + 2 + 2 + 1 + 1 =
253, every one with two real answers) and refuses orphan answers that are not placeholders.
``Sample.id`` is ``wc-<item index, 3 digits>-q<N>``; ``targets`` = (answer 1, answer 2);
``documents`` = (passage A, passage B) from ``paragraphA/B_information`` with their article
titles, minus inline markers such as ``[inconsistent]`` that would point at the conflict.

Taxonomy. The paper's four facets are the ``annotationResult.taxonomy`` list of ``[facet, value]``
pairs (the flat ``Contradict type I..IV`` keys keep only one value where the list has several, so
the list is what is read):

* ``Contradict type IV`` (reasoning) -> ``metadata["contradiction"]``: "Explicit" -> explicit,
  "Implicit (reasoning required)" -> implicit. Items 0 and 9 (one question each) have no type IV
  label and get "unknown"; the file thus has 161 explicit and 90 implicit questions, where the
  paper reports 161 and 92, so the paper evidently counted those two as implicit.
* ``Contradict type III`` (source) -> ``metadata["scope"]``: "Within the same article" -> within,
  "Across different articles" -> across. It agrees everywhere with whether
  ``paragraphA_article`` equals ``paragraphB_article``, which fills in the same two unlabelled
  items (both within).
* ``Contradict type I`` (what differs) -> ``metadata["types"]``, a list: date, number, person,
  location, organization, event, facility, language, work_of_art, entity_other, relation,
  noun_phrase (phrase level) and discourse_relation, discourse_noun_phrase (discourse level).
* ``Contradict type II`` (modality) -> ``metadata["modality"]``: text-text, text-infobox,
  infobox-infobox.

Also in the metadata: ``question_type`` (yes_no when both answers are Yes/No, else wh; 134 vs
the paper's 133 Yes/No questions), ``tag`` (the template name, e.g. "Inconsistent"),
``tag_date``, ``tag_reason``, ``title``, ``url``, ``item`` and ``question_number``.

Templates: see ``_templates`` (1, 2, 3, 4, 5, 5.1, 5.2, 5.3, 5.4; greedy decoding, 250 new
tokens). 5.3 and 5.4 run on conflict-free revisions of the passages (``_revisions``; the
shipped ones in ``data/revisions.jsonl`` cover 40 questions), and only on revised questions
(:meth:`WikiContradict.applies`). Benchmark options ``sample=N`` and ``seed=S`` keep a
reproducible subset of N questions from across the file (:func:`select_questions`).

Scorers, reported side by side: ``wikicontradict-judge`` (an LLM reads the response and fills
in a checklist, see ``_judge``) and ``wikicontradict-match`` (deterministic, see ``_match``).
Both apply the paper's rules for the template (in ``_templates``) and give ``correct``,
``partially_correct`` (templates 1, 4, 5, 5.1 only) or ``incorrect``; the score value is 1 for
correct and 0 otherwise, so a mean is the paper's share of correct answers, and reports add
the share of each class (the paper's Tables 2 and 5). ``experiments/wikicontradict_judge.py``
measures both against the human labels below.

Human labels. Agreement with people is measured on a JSONL file, one object per line::

    {"sample_id": "wc-044-q1", "template": "4", "response": "...", "label": "correct"}

with ``label`` one of ``correct``, ``partially_correct``, ``incorrect`` (all four fields are
strings; blank lines are skipped), and optionally the strings ``model``, ``system``, ``reason``
and ``run_id`` (who produced the response, and why it got its label). :func:`load_human_labels`
reads one; :func:`builtin_human_labels` gives the 40 hand-written, hand-labelled responses in
``validation/human_labels.jsonl``, and :func:`builtin_real_labels` the real responses of the
local models labelled by reading in ``validation/real_labels.jsonl``.
:func:`agreement_report` lays a scorer's labels against them out as the paper's Table 3.
"""

from __future__ import annotations

from freshwiki.benchmarks.wikicontradict._agreement import (
    AgreementReport,
    ClassScores,
    HumanLabel,
    HumanLabelsError,
    agreement_report,
    builtin_human_labels,
    builtin_real_labels,
    confusion_matrix,
    load_human_labels,
    percent_agreement,
    precision_recall_f1,
)
from freshwiki.benchmarks.wikicontradict._benchmark import (
    DATASET_FILE,
    MAX_NEW_TOKENS,
    Selection,
    WikiContradict,
    select_questions,
    wikicontradict_benchmark,
)
from freshwiki.benchmarks.wikicontradict._data import (
    EXPECTED_QUESTIONS,
    DatasetError,
    clean_passage,
    load_wikicontradict,
)
from freshwiki.benchmarks.wikicontradict._judge import (
    CHECKLIST,
    JUDGE_SCHEMA,
    JudgeScorer,
    judge_messages,
    judge_scorer_factory,
)
from freshwiki.benchmarks.wikicontradict._labels import LABELS, VALUES, Label
from freshwiki.benchmarks.wikicontradict._match import (
    Facts,
    MatchResult,
    MatchScorer,
    classify,
    match_response,
    normalize,
)
from freshwiki.benchmarks.wikicontradict._revisions import (
    NO_REVISIONS,
    Edit,
    Revision,
    Revisions,
    RevisionsError,
    builtin_revisions,
    load_revisions,
    revised_samples,
)
from freshwiki.benchmarks.wikicontradict._templates import (
    TEMPLATES,
    Rule,
    TemplateSpec,
    UnknownTemplateError,
    template_spec,
)
from freshwiki.llm import LLM
from freshwiki.seams import Scorer


def match_scorer(judge: LLM | None) -> Scorer:
    """``wikicontradict-match``: deterministic, so it ignores the judge."""
    del judge
    return MatchScorer()


__all__ = [
    "CHECKLIST",
    "DATASET_FILE",
    "EXPECTED_QUESTIONS",
    "JUDGE_SCHEMA",
    "LABELS",
    "MAX_NEW_TOKENS",
    "NO_REVISIONS",
    "TEMPLATES",
    "VALUES",
    "AgreementReport",
    "ClassScores",
    "DatasetError",
    "Edit",
    "Facts",
    "HumanLabel",
    "HumanLabelsError",
    "JudgeScorer",
    "Label",
    "MatchResult",
    "MatchScorer",
    "Revision",
    "Revisions",
    "RevisionsError",
    "Rule",
    "Selection",
    "TemplateSpec",
    "UnknownTemplateError",
    "WikiContradict",
    "agreement_report",
    "builtin_human_labels",
    "builtin_real_labels",
    "builtin_revisions",
    "classify",
    "clean_passage",
    "confusion_matrix",
    "judge_messages",
    "judge_scorer_factory",
    "load_human_labels",
    "load_revisions",
    "load_wikicontradict",
    "match_response",
    "match_scorer",
    "normalize",
    "percent_agreement",
    "precision_recall_f1",
    "revised_samples",
    "select_questions",
    "template_spec",
    "wikicontradict_benchmark",
]
