#!/usr/bin/env bash
# The operator guide's nc sessions, replayed against `latchkey up` (needs nc: netcat-openbsd).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/guide_sessions.py "$(swift build --show-bin-path)"
