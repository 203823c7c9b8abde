# The two commands of the README: `make run` and `make test`. Both set up .venv when needed.
VENV   := .venv
STAMP  := $(VENV)/.freshwiki-installed
Q      ?= When did the Israel–Hamas war begin, and where is it being fought?

.PHONY: run chat test lint docs setup lock bench bench-server figures

$(STAMP): pyproject.toml constraints.txt scripts/bootstrap.sh
	bash scripts/bootstrap.sh

setup: $(STAMP)

## The main job: grounded chat on the default corpus (built once) with the default local model.
run: $(STAMP)
	printf '%s\n' "$(Q)" | $(VENV)/bin/freshwiki chat

## The same, interactively (/trace shows the evidence of the last reply).
chat: $(STAMP)
	$(VENV)/bin/freshwiki chat

## Lint, type-check and the whole test suite (what CI runs).
test: $(STAMP) lint
	$(VENV)/bin/python -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests experiments scripts
	$(VENV)/bin/mypy

## The documentation site, strict (a broken link fails), into site/: open site/index.html.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build

## Every figure of the README, docs/results.md and docs/chat.md rendered from the committed
## result files (no model, seconds), then the leaderboard site from the committed runs.
figures: $(STAMP)
	$(VENV)/bin/python experiments/figures.py
	@if [ -n "$$(find experiments/runs \( -name '*.json.gz' -o -name '*.jsonl.gz' \) 2>/dev/null | head -n 1)" ]; then \
	  $(VENV)/bin/freshwiki leaderboard --from experiments/runs --out site/leaderboard; \
	else echo "figures: no run bundles in experiments/runs; leaderboard not built"; fi

bench: $(STAMP)
	$(VENV)/bin/python experiments/llm_backends.py

## The evaluation runner against llama.cpp's own parallel server (~15 min; the first run also
## builds llama-server into ~/.cache/freshwiki/bin, ~10 min). QUICK=1 for a short run.
bench-server: $(STAMP)
	$(VENV)/bin/python experiments/server_throughput.py $(if $(QUICK),--quick)

## Re-pin every package after changing dependencies in pyproject.toml.
lock: $(STAMP)
	{ echo "# Pinned versions of every package in the project venv (a lock): scripts/bootstrap.sh installs"; \
	  echo "# with -c constraints.txt. Regenerate with: make lock"; \
	  $(VENV)/bin/pip freeze --exclude-editable | sed 's/+cpu$$//'; \
	  echo "pip==$$($(VENV)/bin/pip --version | cut -d' ' -f2)"; } > constraints.txt
