"""A scripted model for a whole simulated-chat run of the grounded system, as a plugin.

Importing this module registers the model backend ``chatkit:`` (spec ``chatkit:wikichat``),
so a real ``freshwiki eval`` subprocess gets it with ``FRESHWIKI_PLUGINS=tests.evaluation.chatkit``
(and the repository on ``PYTHONPATH``). It plays every part: the simulated user, each stage of
the full-mode pipeline, and the factuality judge. Every reply is chosen by what the prompt
says (the stage, the question, the passage, the draft), never by call order, so concurrent
stages and conversations cannot change the run.

Two conversations of two turns each (today 2024-06-01), designed so each analysis number can
be worked out by reading this file:

* KickassTorrents (head)
  1. "When did KickassTorrents go offline?": 3 facts from the lead passage; draft claims
     "went offline in July 2016" (SUPPORTS: the evidence reads 20 July 2016) and "founded
     in 2010" (REFUTES: 2008); stage 7 scores natural 70, so the reply is rewritten into one
     sentence citing the facts' passage.
  2. "When was KickassTorrents founded?": no fact; one claim, "founded in 2008" (SUPPORTS);
     stage 7 scores 100 everywhere, so the composed sentence, citing only the claim's
     evidence, goes out unchanged.
* Clasmatocolea fasciculata (tail)
  1. "Which family does Clasmatocolea fasciculata belong to?": 1 fact; claims "belongs to
     the family Lophocoleaceae" (SUPPORTS) and "grows in Chile" (NOT ENOUGH INFO); relevant
     90, rewritten; the sentence cites the fact's passage.
  2. "How many species of Clasmatocolea fasciculata exist in 2024?": no fact, one claim
     (NOT ENOUGH INFO): "I don't know".

The judge splits the replies into 2, 1, 1 and 0 claims and supports each.

:func:`build_run` makes that run with the real ``freshwiki eval`` executable, on an index of
four real topic leads.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from freshwiki.config import Settings, load_settings
from freshwiki.llm import Message, register_backend
from freshwiki.llm.backends.scripted import ScriptedBackend
from tests.chat.fakes import StageScript, feedback, stage_of

KAT_1 = "When did KickassTorrents go offline?"
KAT_2 = "When was KickassTorrents founded?"
CLAS_1 = "Which family does Clasmatocolea fasciculata belong to?"
CLAS_2 = "How many species of Clasmatocolea fasciculata exist in 2024?"
QUESTIONS = (KAT_1, KAT_2, CLAS_1, CLAS_2)

QUERIES = {KAT_1: "KickassTorrents offline", KAT_2: "KickassTorrents founded",
           CLAS_1: "Clasmatocolea fasciculata family", CLAS_2: "Clasmatocolea fasciculata species"}
DRAFTS = {
    KAT_1: "KickassTorrents went offline in July 2016. It was founded in 2010.",
    KAT_2: "KickassTorrents was founded in 2008 by a group of friends.",
    CLAS_1: "It belongs to the family Lophocoleaceae and grows in Chile.",
    CLAS_2: "There are 12 species of it.",
}
CLAIMS = {  # the pipeline's draft claims, by draft; then the judge's, by reply
    DRAFTS[KAT_1]: ["KickassTorrents went offline in July 2016.",
                    "KickassTorrents was founded in 2010."],
    DRAFTS[KAT_2]: ["KickassTorrents was founded in 2008."],
    DRAFTS[CLAS_1]: ["Clasmatocolea fasciculata belongs to the family Lophocoleaceae.",
                     "Clasmatocolea fasciculata grows in Chile."],
    DRAFTS[CLAS_2]: ["Clasmatocolea fasciculata has 12 species."],
    "KickassTorrents, founded in 2008, went offline on 20 July 2016.": [
        "KickassTorrents was founded in 2008.", "KickassTorrents went offline on 20 July 2016."],
    "KickassTorrents was founded in 2008.": ["KickassTorrents was founded in 2008."],
    "Clasmatocolea fasciculata is in the family Lophocoleaceae.": [
        "Clasmatocolea fasciculata is in the family Lophocoleaceae."],
}
CLOZE = {"went offline in ___": "20 July 2016", "founded in ___": "2008",
         "the family ___": "Lophocoleaceae"}
"""What the evidence says for each blank; any other blank (Chile, 12 species) stays empty."""
FEEDBACK = {KAT_1: feedback(natural=70), KAT_2: feedback(), CLAS_1: feedback(relevant=90)}


def _user_text(messages: Sequence[Message]) -> str:
    return "\n".join(m.content for m in messages if m.role == "user")


def _asked(text: str) -> str:
    """Which scripted question a prompt is about (the last one it mentions)."""
    found = [(text.rfind(q), q) for q in QUESTIONS if q in text]
    if not found:
        raise AssertionError(f"no scripted question in the prompt: {text[-300:]!r}")
    return max(found)[1]


def simulated_user(messages: Sequence[Message]) -> str:
    system, user = messages[0].content, _user_text(messages)
    if "KickassTorrents" in system:
        return KAT_2 if KAT_1 in user else KAT_1
    return CLAS_2 if CLAS_1 in user else CLAS_1


def query(messages: Sequence[Message]) -> str:
    message = _user_text(messages).split("Latest user message:")[-1].strip()
    return json.dumps({"search": True, "query": QUERIES[message], "time": "none", "year": 0})


def facts(messages: Sequence[Message]) -> str:
    text = _user_text(messages)
    if "go offline" in text and "went offline on 20 July 2016" in text:
        return json.dumps({"facts": ["KAT went offline on 20 July 2016.",
                                     "KickassTorrents was founded in 2008.",
                                     "KAT became the most visited BitTorrent directory in 2014."]})
    if "belong to" in text and "Lophocoleaceae" in text:
        return json.dumps({"facts": ["Clasmatocolea fasciculata belongs to the family "
                                     "Lophocoleaceae."]})
    return json.dumps({"facts": []})


def draft(messages: Sequence[Message]) -> str:
    return DRAFTS[messages[-1].content.strip()]


def claims(messages: Sequence[Message]) -> str:
    block = _user_text(messages).split("<draft>\n")[-1].split("\n</draft>")[0].strip()
    return json.dumps({"claims": CLAIMS.get(block, [])})


def cloze(messages: Sequence[Message]) -> str:
    lines = re.findall(r"^\d+\. (.*)$", _user_text(messages).split("Statements:")[-1],
                       flags=re.MULTILINE)
    return json.dumps({"answers": [next((v for k, v in CLOZE.items() if k in line), "")
                                   for line in lines]})


def _cite(notes: str, words: str) -> str:
    """The marker of the note that contains ``words``."""
    line = next(n for n in notes.splitlines() if words in n)
    return re.findall(r"\[\d+\]", line)[0]


def compose(messages: Sequence[Message]) -> str:
    text = _user_text(messages)
    asked = _asked(text.split("User: ")[-1])
    notes = text.split("<notes>")[1].split("</notes>")[0]
    if asked == KAT_1:
        n = _cite(notes, "went offline on 20 July 2016")
        return f"KickassTorrents went offline on 20 July 2016 {n}. It was founded in 2008 {n}."
    if asked == KAT_2:
        return f"KickassTorrents was founded in 2008 {_cite(notes, 'founded in 2008')}."
    return ("Clasmatocolea fasciculata belongs to the family Lophocoleaceae "
            f"{_cite(notes, 'Lophocoleaceae')}.")


def scores(messages: Sequence[Message]) -> str:
    return FEEDBACK[_asked(_user_text(messages).split("<reply>")[0])]


def rewrite(messages: Sequence[Message]) -> str:
    text = _user_text(messages)
    reply = text.split("<reply>\n")[1].split("\n</reply>")[0]
    marker = re.findall(r"\[\d+\]", reply)[0]
    if "KickassTorrents" in reply:
        return f"KickassTorrents, founded in 2008, went offline on 20 July 2016 {marker}."
    return f"Clasmatocolea fasciculata is in the family Lophocoleaceae {marker}."


def judge_verdict(messages: Sequence[Message]) -> str:
    return json.dumps({"reason": "The passage states it.", "verdict": "SUPPORTS",
                       "passages": [1]})


def route(messages: Sequence[Message]) -> str:
    """The stage a prompt belongs to, with the two parts the chat fakes do not know."""
    system = messages[0].content
    if system.startswith("You write the messages of a USER"):
        return "user"
    if system.startswith("You are a fact checker"):
        return "judge-verify"
    return stage_of(messages)


SCRIPT = {"user": simulated_user, "query": query, "facts": facts, "draft": draft,
          "claims": claims, "verify": cloze, "compose": compose, "refine-feedback": scores,
          "refine": rewrite, "judge-verify": judge_verdict}


class ChatkitBackend(ScriptedBackend):
    """Answers every call from :data:`SCRIPT` by the stage its prompt belongs to."""

    def __init__(self) -> None:
        self.script = StageScript(dict(SCRIPT))  # type: ignore[arg-type]
        super().__init__([self._answer] * 1000, model_id="chatkit:wikichat")

    def _answer(self, messages: Sequence[Message]) -> str:
        stage = route(messages)
        if stage in ("user", "judge-verify"):
            return str(SCRIPT[stage](messages))
        return self.script.answer(messages)


def _chatkit(rest: str, settings: Settings) -> ChatkitBackend:
    if rest != "wikichat":
        raise ValueError(f"chatkit has only the script 'wikichat', not {rest!r}")
    return ChatkitBackend()


register_backend("chatkit", _chatkit)


REPO = Path(__file__).resolve().parents[2]
LEADS = ("KickassTorrents", "Clasmatocolea fasciculata", "Cecil Lowell",
         "List of Homeland episodes")
"""The index: the two topics' leads and two others (one per passage, as ingest cuts them)."""
EVAL = ["eval", "simulated-chat", "--system", "grounded", "--model", "chatkit:wikichat",
        "--judge", "chatkit:wikichat", "--scorer", "chat-factuality",
        "--option", "mode=full", "--option", "k=2", "--option", "index=mini",
        "--benchmark-option", "index=mini", "--benchmark-option", "turns=2",
        "--benchmark-option", "today=2024-06-01", "--benchmark-option", "categories=head,tail",
        "--json"]


def build_run(shared_data: Path, root: Path) -> tuple[Path, str]:
    """The scripted run, made through the real executable: ``(FRESHWIKI_HOME, run id)``.

    The topics folder holds the first lead of each category (KickassTorrents, Clasmatocolea
    fasciculata, ...), so the two conversations are exactly the ones scripted here.
    """
    from freshwiki.retrieval import Embedder, HybridIndex, default_index_dir
    from tests.conftest import write_small_topics
    from tests.retrieval.data import passages_of, topic_leads

    home, data = root / "home", root / "data"
    write_small_topics(shared_data, data, per_file=1)
    env = {**{k: v for k, v in os.environ.items()
              if k not in ("FRESHWIKI_CONFIG", "FRESHWIKI_MODEL")},
           "FRESHWIKI_HOME": str(home), "FRESHWIKI_DATA_DIR": str(data),
           "FRESHWIKI_PLUGINS": "tests.evaluation.chatkit",
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    leads = topic_leads(shared_data)
    settings = load_settings(environ=env).settings
    embedder = Embedder.default(settings)
    HybridIndex.build(passages_of({t: leads[t] for t in LEADS}),
                      default_index_dir(settings, "mini"), embedder=embedder).close()
    embedder.close()
    proc = subprocess.run([str(Path(sys.executable).with_name("freshwiki")), *EVAL],
                          capture_output=True, text=True, timeout=600, env=env, cwd=root)
    if proc.returncode != 0:
        raise AssertionError(f"freshwiki eval failed:\n{proc.stderr[-3000:]}")
    summary = json.loads(proc.stdout)
    if summary["failures"] or summary["complete"] != 2:
        raise AssertionError(f"the scripted run did not complete: {summary['failures']}")
    return home, str(summary["run_id"])
