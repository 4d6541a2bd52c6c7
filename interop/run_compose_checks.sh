#!/usr/bin/env bash
# The deployment checks that run without a Docker engine: schema + drift.
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${LATCHKEY_SHARED:-$(pwd)/../shared}"
python3 interop/compose_check.py "$shared/data/compose-spec.json" "$(swift build --show-bin-path)/latchkey"
