"""simulated-chat: topics, the simulated user, both judges and the runner's dialogue path.

Every model is scripted here (routed by the system prompt each role sends), so each expected
number is worked out by hand from the script; ``test_simulated_chat_e2e.py`` runs real models.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from freshwiki.benchmarks import Dialogue, Output, Sample, Task, load_benchmark
from freshwiki.benchmarks.simulated_chat import (
    FactualityScorer,
    SimulatedChat,
    TopicsError,
    clean_user_message,
    conversationality_scorers,
    first_sentence,
    load_topics,
    next_user_message,
)
from freshwiki.config import Settings
from freshwiki.evaluation import EvaluationError, ResultsStore, evaluate
from freshwiki.llm import LLM, LLMOutputError, Message
from freshwiki.llm.backends.scripted import ScriptedBackend
from freshwiki.records import Passage
from freshwiki.systems.grounded import conversation_of
from freshwiki.systems.vanilla import VanillaSystem
from tests.chat.fakes import FakeIndex

TODAY = "2026-11-21"

ROLES = {
    "You write the messages of a USER": "user",
    "You are a helpful, knowledgeable assistant": "assistant",
    "You rate one reply": "judge",
    "You check one quality": "question",
    "You split an assistant's draft": "claims",
    "You are a fact checker": "verify",
}


def role_of(messages: Sequence[Message]) -> str:
    for marker, role in ROLES.items():
        if messages[0].content.startswith(marker):
            return role
    raise AssertionError(f"unexpected prompt {messages[0].content[:60]!r}")


class Roles:
    """Scripted replies per role; a list is consumed one reply per call of that role."""

    def __init__(self, **replies: Any) -> None:
        self.replies = replies
        self.calls: list[tuple[str, tuple[Message, ...]]] = []

    def __call__(self, messages: Sequence[Message]) -> str:
        role = role_of(messages)
        self.calls.append((role, tuple(messages)))
        reply = self.replies[role]
        if isinstance(reply, list):
            reply = reply.pop(0)
        return str(reply(messages) if callable(reply) else reply)

    def of(self, role: str) -> list[tuple[Message, ...]]:
        return [m for r, m in self.calls if r == role]


def llm_for(roles: Roles) -> LLM:
    return LLM(ScriptedBackend([roles] * 100), cache=None)


def topic(title: str = "Ada Lovelace", category: str = "head") -> Sample:
    lead = (f"{title} was an English mathematician. She wrote the first published "
            "algorithm for a machine.")
    return load_like(title, lead, category)


def load_like(title: str, lead: str, category: str) -> Sample:
    from freshwiki.benchmarks import Document

    return Sample(id=f"{category}/{title}", input=title,
                  documents=(Document(title=title, text=lead),),
                  metadata={"category": category, "title": title,
                            "first_sentence": first_sentence(lead)})


def bench(settings: Settings, samples: Sequence[Sample], turns: int = 2) -> SimulatedChat:
    return SimulatedChat(Path("."), samples, turns=turns, settings=settings,
                         index_name="unused", today=TODAY)


# -- topics ----------------------------------------------------------------------------------


def test_real_topics_interleave_categories_reproducibly(shared_data: Path) -> None:
    samples = load_topics(shared_data)
    # 5,000 head + 5,000 tail + 419 recent leads, none empty (counted with json + len).
    assert len(samples) == 10_419 and len({s.id for s in samples}) == 10_419
    first20 = [s.metadata["category"] for s in samples[:20]]
    assert first20[:3] == ["head", "tail", "recent"]
    assert (first20.count("head"), first20.count("tail"), first20.count("recent")) == (7, 7, 6)
    again = load_topics(shared_data)
    assert [s.id for s in again[:50]] == [s.id for s in samples[:50]]
    other = load_topics(shared_data, seed=1)
    assert [s.id for s in other[:50]] != [s.id for s in samples[:50]]
    # After the 419 recent topics run out, head and tail alternate.
    assert {s.metadata["category"] for s in samples[3 * 419:3 * 419 + 10]} == {"head", "tail"}


def test_the_simulated_user_knows_the_title_and_first_sentence_only(shared_data: Path) -> None:
    recent = {s.metadata["title"]: s for s in load_topics(shared_data, categories=["recent"])}
    legalism = recent["Legalism (Chinese philosophy)"]
    # The lead's first sentence, read off the file by hand.
    assert legalism.metadata["first_sentence"] == (
        "Fajia (Chinese: 法家; pinyin: fǎjiā), often translated as Legalism, was a school of "
        "thought derived of classical Chinese philosophy.")
    assert legalism.documents[0].text.startswith(legalism.metadata["first_sentence"])


def test_missing_topics_and_unknown_categories_are_clear_errors(tmp_path: Path,
                                                                settings: Settings) -> None:
    with pytest.raises(TopicsError, match=r"head_articles_en\.json") as missing:
        load_topics(tmp_path)
    assert "FRESHWIKI_DATA_DIR" in str(missing.value)
    with pytest.raises(TopicsError, match="unknown topic categories: popular"):
        load_topics(tmp_path, categories=["popular"])
    (tmp_path / "wikipedia" / "topics").mkdir(parents=True)
    (tmp_path / "wikipedia" / "topics" / "tail_articles_en.json").write_text("[1, 2]")
    with pytest.raises(TopicsError, match="not a JSON object"):
        load_topics(tmp_path, categories=["tail"])
    with pytest.raises(TopicsError, match="no option 'turn'"):
        load_benchmark("simulated-chat", settings, {"turn": "2", "data_dir": str(tmp_path)})
    with pytest.raises(TopicsError, match="bad option value"):
        load_benchmark("simulated-chat", settings, {"today": "yesterday"})


# -- the simulated user ----------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "clean"), [
    ("User: When was she born?", "When was she born?"),
    ('"What did she write?"', "What did she write?"),
    ("**User**: Why?\nChatbot: Because.", "Why?"),
    ("  Who   funded   it? ", "Who funded it?"),
])
def test_user_messages_are_cleaned_of_speaker_labels_and_invented_replies(raw: str,
                                                                          clean: str) -> None:
    assert clean_user_message(raw) == clean


async def test_a_repeated_question_is_asked_afresh_once_and_blank_ones_fall_back() -> None:
    roles = Roles(user=["When was she born?", "Where did she live?"])
    history = [Message.user("When was she born?"), Message.assistant("In 1815.")]
    text, _ = await next_user_message(llm_for(roles), topic(), history, dt.date(2026, 11, 21))
    assert text == "Where did she live?" and len(roles.of("user")) == 2
    roles = Roles(user=["   "])
    text, _ = await next_user_message(llm_for(roles), topic(), [], dt.date(2026, 11, 21))
    assert text == "Can you tell me about Ada Lovelace?"


async def test_a_conversation_alternates_simulator_and_system_with_the_history(
    settings: Settings,
) -> None:
    roles = Roles(user=["Who was Ada Lovelace?", "What did she write?"],
                  assistant=["An English mathematician.", "The first published algorithm."])
    llm = llm_for(roles)
    chat = bench(settings, [topic()])
    assert isinstance(chat, Dialogue)
    task = chat.render(topic(), "chat")
    output = await chat.converse(task, VanillaSystem(llm).respond, llm)

    assert [(t["user"], t["reply"]) for t in output.trace["turns"]] == [
        ("Who was Ada Lovelace?", "An English mathematician."),
        ("What did she write?", "The first published algorithm.")]
    assert output.trace["today"] == TODAY
    assert output.text == ("User: Who was Ada Lovelace?\nAssistant: An English mathematician."
                           "\n\nUser: What did she write?\nAssistant: The first published "
                           "algorithm.")
    second = roles.of("assistant")[1]
    assert [(m.role, m.content) for m in second[1:]] == [
        ("user", "Who was Ada Lovelace?"), ("assistant", "An English mathematician."),
        ("user", "What did she write?")]
    assert TODAY in second[0].content
    # The simulator saw the title, the first sentence only, and the conversation so far.
    simulated = roles.of("user")[1]
    assert "Ada Lovelace was an English mathematician." in simulated[0].content
    assert "first published algorithm for a machine" not in simulated[0].content
    assert "Chatbot: An English mathematician." in simulated[1].content


def test_the_grounded_system_gets_the_whole_conversation() -> None:
    sample = topic()
    messages = (Message.system("sys"), Message.user("Who?"), Message.assistant("Her."),
                Message.user("When?"))
    turns = conversation_of(Task(sample, "chat", messages, query="When?"))
    assert [(m.role, m.content) for m in turns] == [
        ("user", "Who?"), ("assistant", "Her."), ("user", "When?")]
    single = conversation_of(Task(sample, "4", (Message.user("Passages... Q?"),), query="Q?"))
    assert [(m.role, m.content) for m in single] == [("user", "Q?")]


# -- judges ----------------------------------------------------------------------------------


def conversation(*turns: tuple[str, str]) -> Output:
    return Output(text="", trace={"today": TODAY, "turns": [
        {"user": u, "reply": r} for u, r in turns]})


def rating(relevant: int, informational: int, natural: int, non_repetitive: int,
           temporal: bool) -> str:
    return json.dumps({"rationale": "because", "relevant": relevant,
                       "informational": informational, "natural": natural,
                       "non_repetitive": non_repetitive, "temporally_correct": temporal})


async def test_conversationality_means_per_dimension_with_one_judge_call_per_reply() -> None:
    roles = Roles(judge=[rating(5, 2, 4, 5, True), rating(3, 4, 4, 1, False)])
    scorers = conversationality_scorers(llm_for(roles))
    output = conversation(("Who?", "Ada."), ("When?", "Ada, Ada."))
    scores = {s.name: await s.score(Task(topic(), "chat", (), ""), output) for s in scorers}
    # relevant (5+3)/2 = 4 -> (4-1)/4; informational 3 -> .5; natural 4; non-repetitive 3;
    # temporally correct 1 of 2.
    assert {n: s.value for n, s in scores.items()} == {
        "chat-relevant": 0.75, "chat-informational": 0.5, "chat-natural": 0.75,
        "chat-non-repetitive": 0.5, "chat-temporally-correct": 0.5}
    assert scores["chat-non-repetitive"].data["ratings"] == [5, 1]
    assert scores["chat-relevant"].label == "4.0"
    assert len(roles.of("judge")) == 2
    # The second reply is judged with the first exchange as its context.
    second = roles.of("judge")[1][1].content
    assert "User: Who?\nChatbot: Ada.\nUser: When?" in second and "Ada, Ada." in second


async def test_a_rating_that_is_not_json_is_asked_once_more_sampled_then_raised() -> None:
    # The 15-topic run's judge looped on one character until its token cap; greedy decoding
    # loops the same way on every run, so after the client's repair call fails too, the
    # judge asks once more with sampling, seeded by the turn.
    loop = '{"rationale": "The reply ' + "\\u201D" * 5
    roles = Roles(judge=[rating(4, 4, 4, 4, True), loop, loop, rating(2, 3, 4, 5, False)])
    backend = ScriptedBackend([roles] * 10)
    scorers = conversationality_scorers(LLM(backend, cache=None))
    output = conversation(("Who?", "Ada."), ("When?", "In 1843."))
    score = await scorers[0].score(Task(topic(), "chat", (), ""), output)
    assert score.data["ratings"] == [4, 2]
    assert [t.get("retried", False) for t in score.data["turns"]] == [False, True]
    params = [call.params for call in backend.requests]
    # first turn greedy; second turn greedy, the repair call, then the sampled retry.
    assert [(p.temperature, p.seed) for p in params] == [(0.0, 0), (0.0, 0), (0.0, 0),
                                                        (0.7, 1)]
    # A retry that fails as well is raised: the runner records it, nothing is made up.
    again = Roles(judge=[loop] * 4)
    with pytest.raises(LLMOutputError):
        await conversationality_scorers(llm_for(again))[0].score(
            Task(topic(), "chat", (), ""), conversation(("Who?", "Ada.")))
    assert len(again.of("judge")) == 4


def test_repeated_share_leaves_out_the_question_and_maps_to_five_levels() -> None:
    from freshwiki.benchmarks.simulated_chat import Turn, repeated_share, repetition_level

    before = [Turn("Where does Kopua vermiculata live?",
                   "Kopua vermiculata is found only around Japan.")]
    # Reply words without stop words: kopua, vermiculata, eats, small, crabs, japan; the
    # question's (kopua, vermiculata, eat) are left out: eats, small, crabs, japan -> japan
    # was said before: 1 / 4.
    turn = Turn("What does Kopua vermiculata eat?",
                "Kopua vermiculata eats small crabs in Japan.")
    assert repeated_share(before, turn) == 0.25
    # found, only, japan after leaving out kopua, vermiculata, habitat: all said before.
    again = Turn("What is Kopua vermiculata's habitat?",
                 "Kopua vermiculata is found only around Japan.")
    assert repeated_share(before, again) == 1.0
    assert repeated_share([], again) == 0.0
    assert [repetition_level(x) for x in (1.0, 0.85, 0.84, 0.7, 0.55, 0.4, 0.39, 0.0)] == [
        1, 1, 2, 2, 3, 4, 5, 5]


async def test_per_question_judge_asks_each_quality_and_skips_what_an_abstention_fixes() -> None:
    def answer(messages: Sequence[Message]) -> str:
        system = messages[0].content
        picked = ("yes" if "Does the reply answer the user's message" in system
                  else "stiff" if "Does the reply read like natural conversation" in system
                  else "wrong")
        return json.dumps({"answer": picked})

    roles = Roles(question=answer)
    scorers = conversationality_scorers(llm_for(roles), "per-question")
    output = conversation(("Who wrote the first algorithm?", "Ada Lovelace did, in 1843."),
                          ("And the second?", "I don't know: the passages I found don't say "
                           "that, and I'd rather not guess."))
    scores = {s.name: await s.score(Task(topic(), "chat", (), ""), output) for s in scorers}
    # Turn 1: relevant yes 5; two specific facts (the name Ada Lovelace, 1843) -> 4; natural
    # stiff 3; temporal wrong; nothing said before: non-repetitive 5. Turn 2 only abstains:
    # relevant 3, informational 1, natural asked (stiff 3), temporally correct without a
    # call; its words (don, know, passages, found, say, rather, guess) are all new: 5.
    assert scores["chat-relevant"].data["ratings"] == [5, 3]
    assert scores["chat-informational"].data["ratings"] == [4, 1]
    assert scores["chat-natural"].data["ratings"] == [3, 3]
    assert scores["chat-non-repetitive"].data["ratings"] == [5, 5]
    assert scores["chat-temporally-correct"].value == 0.5
    asked = [m[0].content for m in roles.of("question")]
    assert len(asked) == 4  # three questions on turn 1, one (natural) on turn 2
    assert sum("Today's date is 2026-11-21" in a for a in asked) == 1  # the temporal one
    # Each call shows the exchange before the reply, not the whole conversation.
    last = roles.of("question")[-1][1].content
    assert "Exchange before this one:\nUser: Who wrote the first algorithm?" in last
    assert "User's message: And the second?" in last


def test_specific_facts_count_new_names_and_numbers() -> None:
    from freshwiki.benchmarks.simulated_chat import information_level, specific_facts

    # American, DJ, Brooklyn, New York City: four names; the asker's own words and the
    # citation marker do not count.
    assert specific_facts("Kathy Yaeji Lee is an American singer, DJ, and producer based in "
                          "Brooklyn, New York City [1].",
                          "What is Kathy Yaeji Lee's current status?") == 4
    # "Yaeji's House": Yaeji was asked about, House is new: one.
    assert specific_facts('Her latest album is "Yaeji\'s House" [1].',
                          "What is Kathy Yaeji Lee's latest album?") == 1
    # 2.7 and 1.1: two numbers; "This" is a stop word, not a name.
    assert specific_facts("This species reaches a length of 2.7 cm (1.1 in).", "Diet?") == 2
    assert specific_facts("It is a small fish.", "What is it?") == 0
    assert [information_level(n) for n in (0, 1, 2, 7)] == [2, 3, 4, 4]


def test_ratings_option_names_the_judge(tmp_path: Path) -> None:
    from freshwiki.benchmarks.simulated_chat import simulated_chat_benchmark

    settings = Settings(data_dir=tmp_path)
    with pytest.raises(TopicsError, match="ratings='best' is not a judge"):
        simulated_chat_benchmark(settings, {"ratings": "best"})
    with pytest.raises(ValueError, match="unknown ratings judge"):
        conversationality_scorers(llm_for(Roles()), "best")


def ada_passages() -> list[Passage]:
    texts = ["Ada Lovelace was an English mathematician and writer.",
             "Ada Lovelace published the first algorithm intended for a computing machine."]
    return [Passage(id=f"p{i}", page_id=1, revision_id=1, title="Ada Lovelace",
                    section_path=(), text=t, timestamp=None) for i, t in enumerate(texts)]


class Ready:
    def __init__(self, index: FakeIndex) -> None:
        self.index = index

    async def get(self) -> FakeIndex:
        return self.index


def verdict(word: str) -> Callable[[Sequence[Message]], str]:
    return lambda _m: json.dumps({"reason": "r", "verdict": word, "passages": [1]})


async def test_factuality_is_supported_claims_over_all_claims_of_the_conversation() -> None:
    roles = Roles(
        claims=[json.dumps({"claims": ["Ada Lovelace was an English mathematician.",
                                       "Ada Lovelace was a French painter."]}),
                json.dumps({"claims": ["Ada Lovelace published the first algorithm."]})],
        verify=[verdict("SUPPORTS"), verdict("REFUTES"), verdict("SUPPORTS")])
    index = FakeIndex(ada_passages())
    scorer = FactualityScorer(llm_for(roles), Ready(index))
    output = conversation(("Who?", "An English mathematician, and a French painter."),
                          ("What else?", "She published the first algorithm."))
    score = await scorer.score(Task(topic(), "chat", (), ""), output)
    assert (score.value, score.label) == (2 / 3, "2/3")
    assert score.data["refuted"] == 1
    # One search per claim, with the claim itself as the query.
    assert [q for q, _, _ in index.searches] == [
        "Ada Lovelace was an English mathematician.", "Ada Lovelace was a French painter.",
        "Ada Lovelace published the first algorithm."]


async def test_a_conversation_without_claims_is_not_counted_false() -> None:
    roles = Roles(claims=json.dumps({"claims": []}))
    scorer = FactualityScorer(llm_for(roles), Ready(FakeIndex(ada_passages())))
    score = await scorer.score(Task(topic(), "chat", (), ""),
                               conversation(("Who?", "I'm not sure, sorry.")))
    assert (score.value, score.label) == (1.0, "no_claims")
    with pytest.raises(ValueError, match="no conversation turns"):
        await scorer.score(Task(topic(), "chat", (), ""), Output(text="plain"))


# -- through the runner ----------------------------------------------------------------------


async def test_the_runner_drives_dialogues_commits_once_and_keys_the_simulator(
    settings: Settings, tmp_path: Path,
) -> None:
    def answer(messages: Sequence[Message]) -> str:
        return f"Answer to: {messages[-1].content}"

    def ask(messages: Sequence[Message]) -> str:
        return f"Question {messages[1].content.count('User:') + 1} about it?"

    roles = Roles(user=ask, assistant=answer, judge=rating(4, 4, 4, 4, True))
    llm = llm_for(roles)
    samples = [topic("Ada Lovelace"), topic("Alan Turing", "tail")]
    chat = bench(settings, samples, turns=2)
    judged = [s for s in chat.scorers(llm) if s.name != "chat-factuality"]
    with ResultsStore(tmp_path / "runs.sqlite") as store:
        summary = await evaluate(chat, VanillaSystem(llm), llm=llm, store=store,
                                 scorers=judged, model_spec="scripted:x", judge=llm,
                                 simulator=llm)
        assert (summary.complete, summary.new_outputs, summary.new_scores) == (2, 2, 10)
        assert summary.info.config["simulator"] == "scripted:scripted"
        output = store.get_output(summary.info.run_id, "tail/Alan Turing", "chat")
        assert output is not None
        assert [t["user"] for t in output.trace["turns"]] == [
            "Question 1 about it?", "Question 2 about it?"]
        calls = len(roles.calls)
        again = await evaluate(chat, VanillaSystem(llm), llm=llm, store=store, scorers=judged,
                               model_spec="scripted:x", judge=llm, simulator=llm)
        assert (again.info.run_id, again.new_outputs, again.already_done) == (
            summary.info.run_id, 0, 2)
        assert len(roles.calls) == calls
        with pytest.raises(EvaluationError, match="needs a simulated user"):
            await evaluate(chat, VanillaSystem(llm), llm=llm, store=store, scorers=judged,
                           model_spec="scripted:x")


def test_editing_a_prompt_changes_the_benchmark_identity(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    from freshwiki import prompting
    from freshwiki.benchmarks.simulated_chat import _benchmark

    before = bench(settings, [topic()]).describe()
    assert before == bench(settings, [topic()]).describe()
    copy = tmp_path / "freshwiki"
    prompts = copy / _benchmark.PROMPTS
    prompts.mkdir(parents=True)
    real = Path(_benchmark.__file__).parent / "prompts"
    for file in real.glob("*.j2"):
        (prompts / file.name).write_bytes(file.read_bytes())
    (prompts / "user_turn.j2").write_text("Ask something.")
    monkeypatch.setattr(prompting.resources, "files", lambda _package: copy)
    assert bench(settings, [topic()]).describe()["prompts"] != before["prompts"]
