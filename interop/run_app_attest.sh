#!/usr/bin/env bash
# App Attest: `latchkey app-attest-check` against one real iPhone's attestation and assertion and
# every refusal derived from them (flipped bytes, other App IDs, times, counters, chains, roots),
# read from the shared data at run time (LATCHKEY_SHARED_DATA, else ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
data="${LATCHKEY_SHARED_DATA:-../shared/data}/appattest"
python3 interop/app_attest_check.py "$(swift build --show-bin-path)/latchkey" "$data"
