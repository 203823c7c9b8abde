"""Real weights through the real llama.cpp runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshwiki.config import load_settings
from freshwiki.llm import LLMRequestError, Message, ModelError, open_llm

pytestmark = pytest.mark.e2e


async def test_smollm2_answers_through_local_backend(smollm2_path: Path) -> None:
    llm = open_llm("local:smollm2-135m")
    result = await llm.chat(
        [Message.user("What is the capital of France? Answer in one sentence.")], max_tokens=40
    )
    assert "paris" in result.text.lower()
    assert result.backend == "local" and result.model.startswith("smollm2-135m@b179c952")
    assert result.usage.prompt_tokens > 10 and 0 < result.usage.completion_tokens <= 40
    assert not result.cache_hit
    again = await llm.chat(
        [Message.user("What is the capital of France? Answer in one sentence.")], max_tokens=40
    )
    assert again.cache_hit and again.text == result.text


async def test_smollm2_streams_tokens(smollm2_path: Path) -> None:
    llm = open_llm("local:smollm2-135m", cache=False)
    chat = llm.stream([Message.user("Count from one to five in words.")], max_tokens=30)
    deltas = [d async for d in chat]
    assert len(deltas) > 3  # token by token, not one blob
    assert chat.result is not None and chat.result.text == "".join(deltas)
    # Streamed usage is derived from the context; it must agree with llama.cpp's own count
    # for the same request made without streaming (same greedy output too).
    plain = await llm.chat([Message.user("Count from one to five in words.")], max_tokens=30)
    assert chat.result.usage.prompt_tokens == plain.usage.prompt_tokens
    assert plain.text == chat.result.text
    assert abs(chat.result.usage.completion_tokens - plain.usage.completion_tokens) <= 1


async def test_local_path_spec_and_context_overflow_is_typed(smollm2_path: Path) -> None:
    settings = load_settings({"n_ctx": 256}).settings
    llm = open_llm(f"local:{smollm2_path}", settings=settings, cache=False)
    with pytest.raises(LLMRequestError, match="N_CTX"):
        await llm.chat([Message.user("word " * 600)], max_tokens=8)


async def test_qwen_json_schema_call_returns_parsed_object(qwen15_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "country": {"type": "string"},
            "capital": {"type": "string"},
            "population_millions": {"type": "number"},
        },
        "required": ["country", "capital", "population_millions"],
        "additionalProperties": False,
    }
    llm = open_llm("local:qwen2.5-coder-1.5b", cache=False)
    result = await llm.chat(
        [
            Message.system("You extract facts as JSON."),
            Message.user("France's capital is Paris; France has about 68 million people."),
        ],
        json_schema=schema,
        max_tokens=200,
    )
    assert isinstance(result.parsed, dict)
    assert set(result.parsed) == {"country", "capital", "population_millions"}
    assert result.parsed["capital"].lower() == "paris"
    assert 60 <= result.parsed["population_millions"] <= 70
    assert not result.repaired  # grammar-constrained: valid on the first try


async def test_damaged_gguf_is_refused_not_crashed(tmp_path: Path, smollm2_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(smollm2_path.read_bytes()[:4096])  # real header, truncated body
    llm = open_llm(f"local:{broken}", cache=False)
    with pytest.raises(ModelError) as info:
        await llm.chat([Message.user("hi")], max_tokens=4)
    assert str(broken) in info.value.message and "re-install" in (info.value.hint or "")


async def test_prompt_cache_keeps_prefixes_without_hoarding_logits(smollm2_path: Path) -> None:
    """Regression: each saved state used to carry a 100 MB logits copy (8 GB in a benchmark)."""
    from freshwiki.llm.backends.local import load_llama

    settings = load_settings().settings
    llm = open_llm("local:smollm2-135m", settings=settings, cache=False)
    for i in range(4):
        await llm.chat([Message.user(f"Variant {i}: " + "a long prompt " * 120)], max_tokens=2)
    llama, _ = load_llama(smollm2_path, settings.n_ctx, settings.n_threads)
    states = list(llama.cache.cache_state.values())
    assert len(states) >= 4  # earlier prefixes are kept for interleaved prompts
    assert sum(state.scores.nbytes for state in states) < 10 * 2**20
    # A kept prefix is still usable: an earlier prompt answers identically after the others.
    again = await llm.chat([Message.user("Variant 0: " + "a long prompt " * 120)], max_tokens=2)
    fresh = open_llm(f"local:{smollm2_path}", settings=load_settings({"n_ctx": 2048}).settings,
                     cache=False)
    cold = await fresh.chat([Message.user("Variant 0: " + "a long prompt " * 120)], max_tokens=2)
    assert again.text == cold.text


async def test_shared_prompt_prefix_is_reused_not_recomputed(smollm2_path: Path) -> None:
    """Few-shot prompts repeat long prefixes: the second call evaluates only its new tail."""
    llm = open_llm("local:smollm2-135m", cache=False)
    prefix = Message.system("You answer questions about fruit. " + "Pears are pomes. " * 150)
    first = await llm.chat([prefix, Message.user("What is a pear?")], max_tokens=4)
    second = await llm.chat([prefix, Message.user("Is an apple a pome?")], max_tokens=4)
    assert first.usage.prompt_tokens > 600
    assert first.usage.cached_prompt_tokens < 50  # cold: at most the chat template's opening
    reused = second.usage.cached_prompt_tokens
    assert reused >= first.usage.prompt_tokens - 20  # all of the shared prefix
    assert reused < second.usage.prompt_tokens  # but the new question was evaluated
    # Interleaving an unrelated prompt does not lose the prefix (RAM prompt cache).
    await llm.chat([Message.user("Unrelated: name a colour.")], max_tokens=4)
    third = await llm.chat([prefix, Message.user("Where do pears grow?")], max_tokens=4)
    assert third.usage.cached_prompt_tokens >= first.usage.prompt_tokens - 20


async def test_prompt_lookup_decoding_gives_the_same_greedy_reply(smollm2_path: Path) -> None:
    # A reply that copies its prompt is where lookup guesses right; at temperature 0 the
    # tokens must be the ones plain decoding picks, and the guesses must really be used
    # (batches of more than one token after the prompt).
    text = ("The 2023 Korea Masters was a badminton tournament that took place at Gwangju "
            "Women's University Stadium in Gwangju, South Korea, from 7 to 12 November 2023.")
    # Over 512 prompt tokens (one llama.cpp batch): lookup keeps every position's logits,
    # and a buffer sized for one batch failed there ("could not broadcast").
    filler = " ".join(f"Note {i}: the tournament had a total prize of $210,000." for i in range(60))
    messages = [Message.user(f"{filler}\nRepeat this sentence exactly:\n{text}")]
    plain = open_llm("local:smollm2-135m", cache=False)
    lookup = open_llm("local:smollm2-135m", cache=False,
                      settings=load_settings({"lookup_tokens": 8}).settings)
    want = await plain.chat(messages, max_tokens=60)
    got = await lookup.chat(messages, max_tokens=60)
    assert got.text == want.text and "Gwangju" in got.text
    from freshwiki.llm.backends.local import load_llama

    settings = load_settings().settings
    llama, _ = load_llama(smollm2_path, settings.n_ctx, settings.n_threads, 8)
    assert max(llama.freshwiki_eval_batches[1:]) > 1
