#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` (parallel slots, continuous batching) into a cache folder.
#
# Why: `experiments/server_throughput.py` measures the evaluation runner against a server that
# really serves several requests at once; llama-cpp-python's server serialises them. The only
# place this machine can get llama.cpp from is a package registry, so the source is the very
# `llama-cpp-python` sdist the project already pins (it vendors llama.cpp), downloaded by pip
# and checked against its sha256. Only the `llama-server` target is compiled (static, Release,
# no web UI, no HTTPS, nothing fetched at build time), so it takes minutes, not the whole tree.
#
# Nothing lands in the repository: the binary goes to $FRESHWIKI_BIN_DIR (default
# ~/.cache/freshwiki/bin) through a temporary name and a rename, with a stamp naming the sdist
# it came from. A second call finds the stamp and returns at once, so callers may run it
# unconditionally; `make setup` and CI never do (the build costs ~10 minutes on 2 cores).
#
# Usage: scripts/build_llama_server.sh        prints the binary's path on its last line
#        JOBS=4 scripts/build_llama_server.sh   more compile jobs (default: the core count)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.3.36
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
BIN_DIR="${FRESHWIKI_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/freshwiki/bin}"
TARGET="$BIN_DIR/llama-server"
STAMP="$TARGET.source"
WANT="llama-cpp-python==$VERSION sha256:$SDIST_SHA256"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

if [ -x "$TARGET" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "$TARGET"
    exit 0
fi

for tool in cmake c++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: building llama-server needs $tool on PATH (Debian: apt-get install cmake g++)" >&2
        exit 1
    fi
done
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3

mkdir -p "$BIN_DIR"
WORK="$(mktemp -d "$BIN_DIR/.build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "==> downloading the llama-cpp-python $VERSION sdist (hash-checked)" >&2
printf 'llama-cpp-python==%s --hash=sha256:%s\n' "$VERSION" "$SDIST_SHA256" > "$WORK/req.txt"
"$PY" -m pip --disable-pip-version-check download --quiet --no-deps --no-binary :all: \
    --require-hashes -r "$WORK/req.txt" -d "$WORK" >&2
echo "$SDIST_SHA256  $WORK/llama_cpp_python-$VERSION.tar.gz" | sha256sum --check --quiet >&2
tar -xzf "$WORK/llama_cpp_python-$VERSION.tar.gz" -C "$WORK"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"

GENERATOR=()
command -v ninja >/dev/null 2>&1 && GENERATOR=(-G Ninja)
echo "==> configuring llama.cpp (server only; $JOBS jobs)" >&2
cmake -S "$SRC" -B "$WORK/build" "${GENERATOR[@]}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF >&2
echo "==> compiling llama-server (several minutes on 2 cores)" >&2
cmake --build "$WORK/build" --target llama-server -j "$JOBS" >&2

BUILT="$WORK/build/bin/llama-server"
"$BUILT" --version >&2
cp "$BUILT" "$TARGET.part"
mv -f "$TARGET.part" "$TARGET"
printf '%s\n' "$WANT" > "$STAMP.part"
mv -f "$STAMP.part" "$STAMP"
echo "$TARGET"
