#!/usr/bin/env bash
# Create the project-local virtual environment with pinned versions, then the default models.
#
# Idempotent: `make` reruns it only when pyproject.toml, constraints.txt or this file change.
# Order matters: torch==2.13.0 (the machine's local CPU wheel) goes in before anything that
# depends on torch, or pip would pull the registry's newest build with gigabytes of CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PY=""
for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
        PY="$candidate"
        break
    fi
done
if [ -z "$PY" ]; then
    echo "error: freshwiki needs Python >= 3.11; none found on PATH" >&2
    exit 1
fi

step() { printf '\n==> %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
    step "creating $VENV with $($PY --version)"
    "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)

step "pinning pip"
"${PIP[@]}" install --quiet -c constraints.txt pip

step "installing torch==2.13.0 (CPU) first"
"${PIP[@]}" install --quiet -c constraints.txt torch==2.13.0

# llama.cpp's default build targets the building CPU (-march=native). On CPUs with Intel AMX it
# then takes AMX matrix kernels that crash in decode (segfault; llama.cpp issue #20824), so on
# x86-64 it is built for the portable AVX2 set instead (GGML_NATIVE=OFF), unless CMAKE_ARGS is
# set. pip's wheel cache keys a built wheel by version only, not by build flags, so a natively
# built wheel cached by an earlier install would come back: this one package skips the cache.
if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = x86_64 ]; then
    export CMAKE_ARGS="-DGGML_NATIVE=OFF"
fi
step "compiling llama-cpp-python once (~8 min; CMAKE_ARGS=${CMAKE_ARGS:-default})"
"${PIP[@]}" install --no-cache-dir -c constraints.txt llama-cpp-python

step "installing freshwiki and its pinned dependencies"
"${PIP[@]}" install -c constraints.txt -e ".[dev]"

step "assembling and verifying the default models (kept in FRESHWIKI_MODELS_DIR)"
"$VENV/bin/freshwiki" models install qwen2.5-coder-1.5b smollm2-135m

step "headless Chromium (Debian package) for the tests that check web pages in a real browser"
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
    else
        echo "chromium not found: install it (e.g. sudo apt-get install chromium) for the browser tests" >&2
        exit 1
    fi
fi

touch "$VENV/.freshwiki-installed"
step "ready: $VENV"
