#!/usr/bin/env bash
# Interop: passkeys (WebAuthn L3) against a real identity + gateway (built by .ci/run
# beforehand), on their own ports in a temporary directory. Headless Chromium's virtual
# authenticator runs every ceremony from a page served on http://localhost:$PROXY
# (interop/passkey_browser.py); then a software authenticator in Python sends some 600 mutated
# registrations and assertions both to Latchkey and to py_webauthn, which must agree
# (interop/passkey_oracle.py). Needs chromium and chromium-driver (apt) and selenium, webauthn
# and fido2 (pip, interop/requirements.txt).
#
#   interop/run_passkeys.sh [BIN_DIR]        (default: swift build --show-bin-path)
#   ports: PASSKEY_IDENTITY_PORT (27501) PASSKEY_GATEWAY_PORT (27500) PASSKEY_GATEWAY_HTTP_PORT (27580)
#          PASSKEY_PROXY_PORT (27590, the configured origin) PASSKEY_OTHER_PROXY_PORT (27591, a foreign one)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null || { echo "run_passkeys.sh: $tool is missing: apt-get install chromium chromium-driver" >&2; exit 1; }
done
python3 -c 'import selenium, webauthn, fido2, cbor2' \
  || { echo "run_passkeys.sh: python packages missing: pip install -r interop/requirements.txt" >&2; exit 1; }
bin=${1:-$(swift build --show-bin-path)}
work=$(mktemp -d)
identity_port=${PASSKEY_IDENTITY_PORT:-27501}
gateway_port=${PASSKEY_GATEWAY_PORT:-27500}
http_port=${PASSKEY_GATEWAY_HTTP_PORT:-27580}
origin="http://localhost:${PASSKEY_PROXY_PORT:-27590}"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
"$bin/latchkey" identity --listen "127.0.0.1:$identity_port" --data-dir "$work" --scrypt-log-n 10 \
  --webauthn-rp-id localhost --webauthn-origins "$origin" 2>"$work/identity.log" &
pids+=($!)
# The suites make hundreds of calls from one address; the gateway's limits have suites of their own.
LATCHKEY_RATE_LIMITS="auth=0:1,codes=0:1,reset=0:1,default=0:1,observe=0:1" \
  "$bin/latchkey" gateway --listen "127.0.0.1:$gateway_port" --http-listen "127.0.0.1:$http_port" \
  --identity "127.0.0.1:$identity_port" 2>"$work/gateway.log" &
pids+=($!)
listening() { grep -q '"msg":"listening"' "$work/identity.log" 2>/dev/null && grep -q '"msg":"listening"' "$work/gateway.log" 2>/dev/null; }
for _ in $(seq 1 300); do listening && break; sleep 0.1; done
if ! listening; then
  echo "run_passkeys.sh: identity and gateway did not start listening within 30 s" >&2
  tail -n 20 "$work/identity.log" "$work/gateway.log" >&2
  exit 1
fi
export PASSKEY_IDENTITY="127.0.0.1:$identity_port" PASSKEY_GATEWAY_HTTP="127.0.0.1:$http_port" PASSKEY_ORIGIN="$origin"
status=0
python3 interop/passkey_browser.py "$bin" | tee "$work/browser.out" || status=1
python3 interop/passkey_oracle.py "$bin" | tee "$work/oracle.out" || status=1
if [ "$status" -ne 0 ]; then
  echo "--- the services' last log lines" >&2
  tail -n 15 "$work/identity.log" "$work/gateway.log" >&2
fi
grep -h -E '^passkey_(browser|oracle):' "$work/browser.out" "$work/oracle.out" || echo "passkeys: a suite ended before its summary"
exit "$status"
