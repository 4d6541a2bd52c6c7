#!/usr/bin/env bash
# Interop: Python `cryptography` plays the iPhone (device keys, a transfer confirmed by the
# device key) and Python's `hmac` an authenticator app (TOTP) against a real identity +
# accounts + gateway (built by .ci/run beforehand), on ephemeral-ish ports in a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)
work=$(mktemp -d)
identity_port=${IDENTITY_INTEROP_PORT:-27401}
gateway_port=${GATEWAY_INTEROP_PORT:-27400}
accounts_port=${ACCOUNTS_INTEROP_PORT:-27403}
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
"$bin/latchkey" identity --listen "127.0.0.1:$identity_port" --data-dir "$work" --scrypt-log-n 10 2>"$work/identity.log" &
pids+=($!)
# Accounts never calls verification for a device-key transfer: its address is never dialled.
"$bin/latchkey" accounts --listen "127.0.0.1:$accounts_port" --data-dir "$work" --identity "127.0.0.1:$identity_port" \
  --verification "127.0.0.1:9" 2>"$work/accounts.log" &
pids+=($!)
"$bin/latchkey" gateway --listen "127.0.0.1:$gateway_port" --identity "127.0.0.1:$identity_port" \
  --accounts "127.0.0.1:$accounts_port" 2>"$work/gateway.log" &
pids+=($!)
for _ in $(seq 1 100); do
  if grep -q '"msg":"listening"' "$work/identity.log" 2>/dev/null && grep -q '"msg":"listening"' "$work/accounts.log" 2>/dev/null \
    && grep -q '"msg":"listening"' "$work/gateway.log" 2>/dev/null; then break; fi
  sleep 0.1
done
python3 interop/identity_device_key.py "127.0.0.1:$gateway_port" "127.0.0.1:$identity_port" "127.0.0.1:$accounts_port"
python3 interop/identity_totp.py "127.0.0.1:$gateway_port" "127.0.0.1:$identity_port"
