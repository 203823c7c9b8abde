#!/usr/bin/env python
r"""HelloFresh's rephrased instructions, written by local models (the paper's §5.1).

The paper measures how much the wording of a classification prompt matters by asking four
other models to rephrase the hand-written instruction. This script does the same with the
local models: for each kind (notes, edits), each ``--models`` spec and each ``--seeds`` seed,
one sampled rephrasing (temperature 0.7, at most 200 tokens) of the ``manual`` instruction in
``src/freshwiki/benchmarks/hellofresh/data/instructions.jsonl``, asked with
``--prompt`` (default ``experiments/prompts/hellofresh_rephrase_v2.j2``; the first wording,
``hellofresh_rephrase.j2``, got no usable rephrasing from the local models). Each candidate
is appended to that file with the model spec, the weights' sha256, the seed, the request
sent and the raw reply, marked ``"review": "pending"``. A person then reads each one and
sets ``review`` to ``accepted`` (with ``template`` ``r1``..``r4``) or ``rejected`` (with the
reason); the benchmark uses only the accepted ones. Re-running skips the (kind, model, seed,
request) candidates already in the file; ``--kinds edits`` asks for one kind only (the other
kind's rephrasings may already be complete).

Run from the repository root (one model thread keeps a shared machine usable)::

    FRESHWIKI_N_THREADS=1 .venv/bin/python experiments/hellofresh_rephrase.py \
        --models local:qwen2.5-coder-1.5b,local:qwen2.5-coder-0.5b --seeds 1,2
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sys
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from _provenance import ROOT, _git
from freshwiki.llm import Message, open_llm

DATA = ROOT / "src" / "freshwiki" / "benchmarks" / "hellofresh" / "data" / "instructions.jsonl"
PROMPTS = Path(__file__).with_name("prompts")
TEMPERATURE = 0.7
MAX_TOKENS = 200


def read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def write(path: Path, rows: list[dict[str, object]]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    os.replace(tmp, path)


async def generate(models: list[str], seeds: list[int], prompt: str,
                   kinds: list[str] | None = None) -> int:
    rows = read(DATA)
    manual = {str(r["kind"]): str(r["instruction"]) for r in rows
              if r.get("template") == "manual" and (kinds is None or r["kind"] in kinds)}
    if kinds is not None and set(kinds) - set(manual):
        raise SystemExit(f"no manual instruction of kind {sorted(set(kinds) - set(manual))} "
                         f"in {DATA}; kinds there: notes, edits")
    done = {(r.get("kind"), r.get("model"), r.get("seed"), r.get("request_template"))
            for r in rows if "model" in r}
    template = Environment(loader=FileSystemLoader(str(PROMPTS)), undefined=StrictUndefined,
                           keep_trailing_newline=False).get_template(prompt)
    added = 0
    for spec in models:
        llm = open_llm(spec)
        try:
            for kind, instruction in manual.items():
                for seed in seeds:
                    if (kind, spec, seed, f"experiments/prompts/{prompt}") in done:
                        continue
                    request = template.render(instruction=instruction).strip()
                    result = await llm.chat([Message.user(request)], max_tokens=MAX_TOKENS,
                                            temperature=TEMPERATURE, seed=seed,
                                            tag="experiment:hellofresh-rephrase")
                    rows.append({
                        "kind": kind, "template": None, "review": "pending", "reason": "",
                        "model": spec, "model_sha256": llm.backend.model_id, "seed": seed,
                        "temperature": TEMPERATURE, "max_tokens": MAX_TOKENS,
                        "request_template": f"experiments/prompts/{prompt}",
                        "request": request, "reply": result.text,
                        "instruction": result.text.strip(),
                        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                        "freshwiki_commit": _git("rev-parse", "HEAD"),
                    })
                    write(DATA, rows)  # after each one: an interrupted run keeps its work
                    added += 1
                    print(f"{kind} {spec} seed {seed}: {result.text.strip()}\n", flush=True)
        finally:
            await llm.aclose()
    return added


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="local:qwen2.5-coder-1.5b,local:qwen2.5-coder-0.5b")
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--prompt", default="hellofresh_rephrase_v2.j2",
                        help="request template in experiments/prompts/")
    parser.add_argument("--kinds", default="notes,edits",
                        help="which instructions to rephrase (notes, edits or both)")
    args = parser.parse_args()
    added = asyncio.run(generate([m for m in args.models.split(",") if m],
                                 [int(s) for s in args.seeds.split(",") if s], args.prompt,
                                 [k for k in args.kinds.split(",") if k]))
    print(f"{added} candidate(s) added to {DATA}; review them by reading", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
