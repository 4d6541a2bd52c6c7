#!/usr/bin/env bash
# compose/Dockerfile's build stage, built from exactly the context its COPY lines lay out
# (no Docker engine needed). LATCHKEY_DOCKERFILE_CHECK=release runs the stage's own release
# build; the default, a debug build of `latchkey` there, needs every path as well and is faster.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${LATCHKEY_DOCKERFILE_CHECK:-debug}" = release ]; then
  python3 interop/dockerfile_context.py
else
  python3 interop/dockerfile_context.py --debug-build
fi
