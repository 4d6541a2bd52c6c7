#!/usr/bin/env bash
# Every command of compose/README.md and compose/.env.example, as written, against `latchkey up`
# (the Docker ones checked against the compose files, their in-container part run here).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/guide_commands.py "$(swift build --show-bin-path)"
