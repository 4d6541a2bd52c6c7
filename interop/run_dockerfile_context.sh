#!/usr/bin/env bash
# compose/Dockerfile's build stage, built from exactly the context its COPY lines lay out (no
# Docker engine needed): its own release build, which strips the binary, prints its size and
# what the image adds, and fails over the size budget.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/dockerfile_context.py
