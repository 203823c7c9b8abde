// freshwiki chat page: streams replies from /v1/chat/completions (SSE), renders [n] markers as
// links into each reply's evidence panel, and keeps the conversation id (also in ?c=ID, so a
// reload continues the same conversation). Model text is only ever set through textContent.
"use strict";

(() => {
  const MAX_CHARS = Number(document.body.dataset.maxChars || 8000);
  const CHAT_ON = document.body.dataset.chat === "on";
  const log = document.getElementById("log");
  const form = document.getElementById("ask");
  const box = document.getElementById("message");
  const send = document.getElementById("send");
  const status = document.getElementById("status");
  const conversationLine = document.getElementById("conversation");
  const conversationCode = document.getElementById("conversation-id");
  let conversationId = null;
  let turns = 0;
  let busy = false;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function setConversation(id) {
    conversationId = id;
    conversationLine.hidden = !id;
    conversationCode.textContent = id || "";
    const url = new URL(window.location.href);
    if (id) url.searchParams.set("c", id); else url.searchParams.delete("c");
    window.history.replaceState(null, "", url);
  }

  function heading(evidence) {
    return [evidence.title, ...(evidence.section || [])].join(" › ");
  }

  // Text with [n] markers → text nodes and citation links (plain spans until citations are known).
  function renderText(target, text, turnId, numbers) {
    target.replaceChildren();
    const pattern = /\[(\d+)\]/g;
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      target.append(document.createTextNode(text.slice(last, match.index)));
      const n = Number(match[1]);
      if (numbers && numbers.has(n)) {
        const link = el("a", "cite", `[${n}]`);
        link.href = `#${turnId}-source-${n}`;
        link.dataset.cite = String(n);
        link.addEventListener("click", (event) => {
          event.preventDefault();
          showSource(turnId, n);
        });
        target.append(link);
      } else {
        target.append(el("span", "cite", `[${n}]`));
      }
      last = match.index + match[0].length;
    }
    target.append(document.createTextNode(text.slice(last)));
  }

  function showSource(turnId, n) {
    const item = document.getElementById(`${turnId}-source-${n}`);
    if (!item) return;
    item.closest("details").open = true;
    document.querySelectorAll("ol.sources li.highlight").forEach((li) => li.classList.remove("highlight"));
    item.classList.add("highlight");
    item.scrollIntoView({ behavior: "smooth", block: "nearest" });
  }

  function evidencePanel(turnId, ext) {
    const trace = ext.trace || {};
    const citations = ext.citations || [];
    const claims = trace.claims || [];
    const byPassage = new Map(citations.map((c) => [c.evidence.passage_id, c.number]));
    const panel = el("details", "evidence");
    panel.open = true;
    panel.append(el("summary", null,
      `Evidence: ${citations.length} cited passage${citations.length === 1 ? "" : "s"}` +
      (claims.length ? `, ${claims.length} checked claim${claims.length === 1 ? "" : "s"}` : "")));

    if (citations.length) {
      panel.append(el("h3", null, "Sources"));
      const list = el("ol", "sources");
      for (const c of citations) {
        const item = el("li");
        item.id = `${turnId}-source-${c.number}`;
        const head = el("div", "source-head");
        head.append(el("span", "num", `[${c.number}]`), document.createTextNode(heading(c.evidence)));
        if (c.evidence.timestamp) head.append(el("span", "when", c.evidence.timestamp.slice(0, 10)));
        item.append(head, el("p", "source-text", c.evidence.text));
        list.append(item);
      }
      panel.append(list);
    }

    if (claims.length) {
      panel.append(el("h3", null, "Claims"));
      const list = el("ul", "claims");
      for (const claim of claims) {
        const item = el("li");
        const verdict = claim.verdict || "NOT ENOUGH INFO";
        item.append(el("span", `verdict ${verdict === "NOT ENOUGH INFO" ? "NEI" : verdict}`, verdict),
          document.createTextNode(claim.claim));
        const refs = (claim.evidence || []).map((e) =>
          byPassage.has(e.passage_id) ? `[${byPassage.get(e.passage_id)}]` : heading(e));
        if (refs.length) item.append(document.createTextNode(" — " + refs.join(", ")));
        if (claim.rationale) item.append(el("div", "rationale", claim.rationale));
        list.append(item);
      }
      panel.append(list);
    }

    const conflicts = trace.conflicts || [];
    if (conflicts.length) {
      panel.append(el("h3", null, "Sources disagree"));
      const list = el("ul", "conflicts");
      const facts = trace.facts || [];
      for (const conflict of conflicts) {
        const item = el("li", null, conflict.about + ": ");
        item.append(document.createTextNode(conflict.facts
          .map((i) => facts[i] ? `“${facts[i].text}” (${heading(facts[i].source)})` : "")
          .filter(Boolean).join(" vs ")));
        list.append(item);
      }
      panel.append(list);
    }

    const queries = trace.queries || [];
    if (queries.length) {
      panel.append(el("h3", null, "Searches"));
      const list = el("ul", "queries");
      for (const q of queries) {
        list.append(el("li", null, q.text + (q.time_intent && q.time_intent !== "none" ? ` (${q.time_intent})` : "")));
      }
      panel.append(list);
    }

    const total = trace.timings && trace.timings.total;
    const tokens = (trace.prompt_tokens || 0) + (trace.completion_tokens || 0);
    panel.append(el("p", "meta",
      `${trace.mode || "?"} mode · ${trace.llm_calls || 0} LLM calls · ${tokens.toLocaleString()} tokens · ` +
      `${trace.cache_hits || 0} cache hits` + (total ? ` · ${total.toFixed(1)} s` : "")));
    panel.append(el("p", "attribution", ext.attribution || "Text from Wikipedia, CC BY-SA 4.0."));
    return panel;
  }

  function newTurn(question) {
    turns += 1;
    const turnId = `turn-${turns}`;
    const article = el("article", "turn");
    article.id = turnId;
    article.append(el("div", "msg user", question));
    const hint = document.getElementById("empty-hint");
    if (hint) hint.remove();
    log.append(article);
    return { turnId, article };
  }

  function finishReply(turn, bubble, textNode, ext) {
    const numbers = new Set((ext.citations || []).map((c) => c.number));
    textNode.classList.remove("pending");
    renderText(textNode, ext.text, turn.turnId, numbers);
    if (ext.grounded === false) {
      bubble.append(el("p", "ungrounded", "Nothing in the corpus supported an answer, so the reply says so."));
    }
    bubble.append(evidencePanel(turn.turnId, ext));
  }

  function showError(turn, message, hint) {
    const node = el("div", "msg error", message);
    if (hint) node.append(el("span", "hint", hint));
    turn.article.append(node);
  }

  async function errorOf(response) {
    try {
      const body = await response.json();
      const error = body.error || {};
      return [error.message || body.detail || `HTTP ${response.status}`, error.hint];
    } catch (_) {
      return [`HTTP ${response.status}`, null];
    }
  }

  async function ask(question) {
    const turn = newTurn(question);
    const bubble = el("div", "msg assistant");
    const textNode = el("div", "text pending");
    const thinking = el("span", "thinking", "searching the corpus and checking claims…");
    textNode.append(thinking);
    bubble.append(textNode);
    turn.article.append(bubble);
    bubble.scrollIntoView({ block: "nearest" });

    const body = { model: "freshwiki", stream: true, messages: [{ role: "user", content: question }] };
    if (conversationId) body.conversation_id = conversationId;
    let response;
    try {
      response = await fetch("/v1/chat/completions", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
    } catch (err) {
      bubble.remove();
      showError(turn, "The server could not be reached.", String(err));
      return;
    }
    if (!response.ok) {
      bubble.remove();
      const [message, hint] = await errorOf(response);
      showError(turn, message, hint);
      return;
    }

    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let text = "";
    let finished = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event.split("\n").filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart()).join("\n");
        if (!data || data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) {
          textNode.classList.remove("pending");
          showError(turn, chunk.error.message, chunk.error.hint);
          finished = true;
          continue;
        }
        const choice = (chunk.choices || [])[0];
        if (choice && choice.delta && choice.delta.content) {
          text += choice.delta.content;
          renderText(textNode, text, turn.turnId, null);
        }
        if (chunk.freshwiki) {
          setConversation(chunk.freshwiki.conversation_id);
          finishReply(turn, bubble, textNode, chunk.freshwiki);
          finished = true;
        }
      }
    }
    if (!finished) {
      textNode.classList.remove("pending");
      showError(turn, "The reply stopped before it was complete.", "Send the message again.");
    }
  }

  async function loadConversation(id) {
    const response = await fetch(`/v1/conversations/${encodeURIComponent(id)}`);
    if (!response.ok) {
      const [message] = await errorOf(response);
      status.textContent = message;
      setConversation(null);
      return;
    }
    const conversation = await response.json();
    let turn = null;
    for (const message of conversation.messages) {
      if (message.role === "user") {
        turn = newTurn(message.content);
      } else if (turn) {
        const bubble = el("div", "msg assistant");
        const textNode = el("div", "text");
        bubble.append(textNode);
        turn.article.append(bubble);
        if (message.freshwiki) finishReply(turn, bubble, textNode, message.freshwiki);
        else renderText(textNode, message.content, turn.turnId, null);
      }
    }
    setConversation(conversation.id);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const question = box.value;
    if (busy || !CHAT_ON) return;
    if (!question.trim()) { status.textContent = "Write a message first."; return; }
    if (question.length > MAX_CHARS) {
      status.textContent = `The message has ${question.length} characters; the limit is ${MAX_CHARS}.`;
      return;
    }
    busy = true;
    send.disabled = true;
    status.textContent = "";
    box.value = "";
    try {
      await ask(question);
    } finally {
      busy = false;
      send.disabled = false;
      box.focus();
    }
  });

  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  document.getElementById("new-conversation").addEventListener("click", () => {
    if (busy) return;
    setConversation(null);
    log.replaceChildren();
    status.textContent = "New conversation.";
    box.focus();
  });

  if (!CHAT_ON) { box.disabled = true; send.disabled = true; }
  const resume = new URL(window.location.href).searchParams.get("c");
  if (resume && CHAT_ON) loadConversation(resume);
})();
