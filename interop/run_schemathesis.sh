#!/usr/bin/env bash
# Schemathesis (`st run --checks all`) against the HTTP door of a running stack, from the
# generated protocol/openapi.json. Without BASE, starts its own `latchkey up --demo` in a
# temporary directory with the gateway's rate limits off (Schemathesis sends hundreds of
# requests from one address; the limits have suites of their own).
#
#   BASE=http://127.0.0.1:7480 OUTBOX=./.latchkey/outbox.jsonl LATCHKEY_DEMO_PASSWORD=... \
#   interop/run_schemathesis.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${BASE:-}" ]]; then
  work=$(mktemp -d)
  export LATCHKEY_DEMO_PASSWORD="schema suite $RANDOM harbour"
  LATCHKEY_RATE_LIMITS="auth=0:1,codes=0:1,reset=0:1,default=0:1,observe=0:1" \
    "$(swift build --show-bin-path)/latchkey" up --demo --data-dir "$work/.latchkey" >"$work/up.log" 2>&1 &
  up=$!
  trap 'kill -INT $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$work"' EXIT
  for _ in $(seq 300); do grep -q "demo user" "$work/up.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "demo user: username demo" "$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
  export BASE=http://127.0.0.1:7480 OUTBOX="$work/.latchkey/outbox.jsonl"
  # Schemathesis keeps its example database in the working directory: keep it out of the checkout.
  (cd "$work" && python3 "$OLDPWD/interop/schemathesis_door.py")
  exit $?
fi
python3 interop/schemathesis_door.py
