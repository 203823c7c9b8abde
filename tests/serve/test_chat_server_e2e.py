"""The real `freshwiki serve` executable: GroundedChat over the small corpus, a scripted model.

The model is scripted so the wording is known; everything else is real: the pipeline, the
index, uvicorn, SSE, the conversation store, OpenAI's client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import pytest

from freshwiki.serve import ATTRIBUTION
from tests.e2e.fixtures import free_port
from tests.serve.serving import wait_until_healthy

# The checked mode: an answer, then one check call reading the values back. (Lead: "... is a
# species of liverwort ... It is known from South Africa where it grows on woody debris.")
ANSWER = "Clasmatocolea fasciculata is a liverwort found in South Africa. It grows on woody debris."
CHECKED = {"answers": ["South Africa", "grows on woody debris"]}
REPLY = ("Clasmatocolea fasciculata is a liverwort found in South Africa [1]. It grows on woody "
         "debris [1].")


@pytest.mark.e2e
def test_serve_chats_through_the_real_pipeline(small_data_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    steps = [{"error": "connection"}, {"text": ANSWER}, {"text": json.dumps(CHECKED)},
             {"text": "You're welcome!"},
             # A model that returns no usable JSON for the check (then for its repair), then
             # one that returns nothing at all: each turn is answered and stored.
             {"text": "Clasmatocolea fasciculata grows on woody debris in South Africa."},
             {"text": "not json"},
             {"text": "still not json"}, {"text": ""}]
    script.write_text("\n".join(json.dumps(s) for s in steps) + "\n", encoding="utf-8")
    port = free_port()
    exe = str(Path(sys.executable).with_name("freshwiki"))
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [exe, "serve", "--port", str(port), "-m", f"scripted:{script}"], stdout=log,
            stderr=log, env={**os.environ, "FRESHWIKI_MAX_RETRIES": "0"})
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_healthy(server, base, log_path, timeout_s=300, interval_s=0.5)
            api = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
            question = [{"role": "user", "content": "What is Clasmatocolea fasciculata?"}]

            with pytest.raises(openai.InternalServerError) as down:
                api.chat.completions.create(model="m", messages=question)  # type: ignore[arg-type]
            assert down.value.status_code == 503 and "connection dropped" in str(down.value)

            chunks = list(api.chat.completions.create(
                model="m", messages=question, stream=True))  # type: ignore[arg-type]
            pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
            text = "".join(pieces)
            assert text == REPLY
            # Released text arrives in word-sized pieces, not a sentence at a time.
            assert len([p for p in pieces if p]) >= len(REPLY.split()) - 2
            extension = (chunks[-1].model_extra or {})["freshwiki"]
            assert extension["text"] == REPLY and extension["attribution"] == ATTRIBUTION
            assert extension["citations"][0]["evidence"]["title"] == "Clasmatocolea fasciculata"
            assert [c["verdict"] for c in extension["trace"]["reply_checks"]] == [
                "SUPPORTS", "SUPPORTS"]
            assert [s["stage"] for s in extension["trace"]["stages"]] == ["answer", "check"]
            assert extension["trace"]["mode"] == "checked"

            thanks = api.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "thanks!"}],
                extra_body={"conversation_id": extension["conversation_id"]})
            assert thanks.choices[0].message.content == "You're welcome!"
            stored = httpx.get(f"{base}/v1/conversations/{extension['conversation_id']}",
                               timeout=10).json()
            assert [m["content"] for m in stored["messages"]] == [
                question[0]["content"], REPLY, "thanks!", "You're welcome!"]
            assert stored["model"] == f"scripted:{script}"

            # Unusable check output: the rules alone release what they settle.
            where = api.chat.completions.create(model="m", messages=[
                {"role": "user", "content": "Where is Clasmatocolea fasciculata found?"}])
            assert where.choices[0].message.content == (
                "Clasmatocolea fasciculata grows on woody debris in South Africa [1].")
            where_trace = where.model_extra["freshwiki"]["trace"]  # type: ignore[index]
            assert [s["stage"] for s in where_trace["stages"]] == ["answer", "check"]
            assert where_trace["stages"][1]["error"]  # unusable even after the repair
            # An empty answer: "I don't know", stored like any other turn.
            empty = api.chat.completions.create(model="m", messages=[
                {"role": "user", "content": "Who first described Clasmatocolea fasciculata?"}])
            said = empty.choices[0].message.content or ""
            assert said.startswith("I don't know") and not empty.model_extra["freshwiki"][
                "grounded"]  # type: ignore[index]
            assert len(httpx.get(f"{base}/v1/conversations", timeout=10).json()["data"]) == 3

            page = httpx.get(f"{base}/", timeout=10)
            assert page.status_code == 200 and f"scripted:{script}" in page.text
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert "serving chat with" in log_path.read_text()
    assert "Traceback" not in log_path.read_text()
