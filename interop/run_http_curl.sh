#!/usr/bin/env bash
# Drives the gateway's HTTP door with curl against a running stack (`latchkey up --demo`):
# the seed app's password reset, then a login + transfer confirmed with the code from the
# outbox, then a few hostile requests. Exits non-zero on the first unexpected status.
#
#   BASE=http://127.0.0.1:7480 METRICS=http://127.0.0.1:7485 OUTBOX=./.latchkey/outbox.jsonl \
#   LATCHKEY_DEMO_PASSWORD=... interop/run_http_curl.sh
set -euo pipefail
# Without BASE, start our own `latchkey up --demo` in a temporary directory, as CI does.
if [[ -z "${BASE:-}" ]]; then
  cd "$(dirname "$0")/.."
  work=$(mktemp -d)
  export LATCHKEY_DEMO_PASSWORD="curl suite $RANDOM harbour"
  "$(swift build --show-bin-path)/latchkey" up --demo --data-dir "$work/.latchkey" >"$work/up.log" 2>&1 &
  up=$!
  trap 'kill -INT $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$work"' EXIT
  for _ in $(seq 300); do grep -q "demo user" "$work/up.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "demo user: username demo" "$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
  export BASE=http://127.0.0.1:7480 METRICS=http://127.0.0.1:7485 OUTBOX="$work/.latchkey/outbox.jsonl"
  bash "$0"
  exit $?
fi
BASE=${BASE:-http://127.0.0.1:7480}
METRICS=${METRICS:-http://127.0.0.1:7485}
OUTBOX=${OUTBOX:-./.latchkey/outbox.jsonl}
USER_NAME=${USER_NAME:-demo}
EMAIL=${EMAIL:-demo@example.com}
PASSWORD=${LATCHKEY_DEMO_PASSWORD:?set LATCHKEY_DEMO_PASSWORD to the demo user password}
NEW_PASSWORD=${NEW_PASSWORD:-"violet harbour lantern $RANDOM"}
BODY=$(mktemp)
trap 'rm -f "$BODY"' EXIT

# call EXPECTED_STATUS PATH JSON [extra curl args...]: POSTs JSON, checks the status, leaves the body in $BODY.
call() {
  local expected=$1 path=$2 data=$3; shift 3
  local status
  status=$(curl -sS -o "$BODY" -w '%{http_code}' -H 'Content-Type: application/json' --data "$data" "$@" "$BASE$path")
  if [[ "$status" != "$expected" ]]; then
    echo "FAIL $path: expected $expected, got $status: $(cat "$BODY")" >&2
    exit 1
  fi
  echo "ok   $status $path"
}
field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); [v := v[k] for k in sys.argv[2:]]; print(v)' "$BODY" "$@"; }
# newest outbox message matching a Python expression over `m`, printed as its text
outbox_text() {
  for _ in $(seq 100); do
    if text=$(python3 - "$OUTBOX" "$1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
hits = [m for m in lines if eval(sys.argv[2], {}, {"m": m})]
if not hits: sys.exit(1)
print(hits[-1]["text"])
PY
    ); then echo "$text"; return; fi
    sleep 0.1
  done
  echo "FAIL no outbox message matching $1" >&2; exit 1
}

echo "== health, metrics, AASA"
test "$(curl -sS "$BASE/healthz")" = '{"status":"ok"}' && echo "ok   200 /healthz (liveness only)"
test "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/metrics")" = 404 && echo "ok   404 /metrics on the public door"
curl -sS "$METRICS/metrics" | grep -q '^latchkey_requests_total' && echo "ok   200 $METRICS/metrics"
echo "     AASA: $(curl -sS -o /dev/null -w '%{http_code}' "$BASE/.well-known/apple-app-site-association") (404 unless --aasa-app-ids is set)"

echo "== the seed's password reset"
call 200 /auth/password/request "{\"email\":\"$EMAIL\"}"
call 200 /auth/password/request '{"email":"nobody@example.com"}'
TOKEN=$(outbox_text "m.get('to') == '$EMAIL' and 'lkr_' in m.get('text', '')" | grep -o 'lkr_[A-Za-z0-9_-]*' | tail -1)
call 200 /auth/password/validate "{\"token\":\"$TOKEN\"}"
call 400 /auth/password/validate '{"token":"lkr_forged"}'
call 200 /auth/password/reset "{\"token\":\"$TOKEN\",\"password\":\"$NEW_PASSWORD\"}"
call 400 /auth/password/validate "{\"token\":\"$TOKEN\"}"
echo "     the demo password is now: $NEW_PASSWORD"

echo "== login + transfer"
call 401 /v1/identity/login "{\"username\":\"$USER_NAME\",\"password\":\"$PASSWORD\",\"device_id\":\"curl-device\"}"
call 200 /v1/identity/login "{\"username\":\"$USER_NAME\",\"password\":\"$NEW_PASSWORD\",\"device_id\":\"curl-device\"}"
SESSION=$(field result session)
call 401 /v1/accounts/balances '{}'
# A new device (and a reset forgets every device) owes an SMS code before anything else.
call 403 /v1/accounts/balances '{}' -H "Authorization: Bearer $SESSION"
call 200 /v1/verification/start '{}' -H "Authorization: Bearer $SESSION"
FACTOR=$(field result request_id)
FACTOR_CODE=$(outbox_text "m.get('request_id') == '$FACTOR'" | grep -oE '[0-9]{4,8}' | head -1)
call 200 /v1/verification/check "{\"request_id\":\"$FACTOR\",\"code\":\"$FACTOR_CODE\"}" -H "Authorization: Bearer $SESSION"
call 200 /v1/accounts/balances '{}' -H "Authorization: Bearer $SESSION"
# A misspelt name is refused naming it, and the body's code is the HTTP status.
call 400 /v1/identity/preferences '{"sms_verifcation":false}' -H "Authorization: Bearer $SESSION"
test "$(field error data field)/$(field error code)" = "sms_verifcation/400" && echo "     refused: sms_verifcation, code 400"
call 200 /v1/accounts/transfer "{\"from\":\"checking\",\"to\":\"saving\",\"amount\":1250,\"idempotency_key\":\"curl-$RANDOM$RANDOM\"}" -H "Authorization: Bearer $SESSION"
TRANSFER=$(field result transfer_id); REQUEST=$(field result request_id)
CODE=$(outbox_text "m.get('request_id') == '$REQUEST'" | grep -oE '[0-9]{4,8}' | head -1)
call 200 /v1/accounts/confirm "{\"transfer_id\":\"$TRANSFER\",\"code\":\"$CODE\"}" -H "Authorization: Bearer $SESSION"
call 404 /v1/identity/introspect "{\"session\":\"$SESSION\"}"

echo "== hostile HTTP"
HOSTPORT=${BASE#http://}
hostile() {
  local expected=$1 request=$2
  local status
  status=$(printf '%b' "$request" | python3 -c '
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=15)
s.sendall(sys.stdin.buffer.read())
print(s.recv(64).split(b" ")[1].decode())' "$HOSTPORT")
  [[ "$status" == "$expected" ]] || { echo "FAIL hostile: expected $expected, got $status" >&2; exit 1; }
  echo "ok   $status hostile"
}
hostile 400 'POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
hostile 400 'POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'
hostile 501 'POST /rpc HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
hostile 413 'POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n'
hostile 431 "GET / HTTP/1.1\r\nHost: a\r\nX-Big: $(head -c 20000 /dev/zero | tr '\0' b)\r\n\r\n"
echo "all good"
