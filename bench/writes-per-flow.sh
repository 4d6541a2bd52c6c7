#!/usr/bin/env bash
# Bytes and write system calls per operation, from /proc/PID/io of the services that write
# (what a build writes does not move with the shared host's speed, where CPU and rates do).
# Usage: bench/writes-per-flow.sh verify|transfer [BUILD_DIR] [SECONDS]   (default .build/release 5)
#   verify:   verification's writes per start+check pair
#   transfer: accounts' per transfer (both rows), verification's per SMS-confirmed transfer
# Each service is read every 0.2 s until it exits; its last reading counts. Outside the measured
# phases they write only their migrations (and, for a transfer, the bench users' funding).
set -euo pipefail
scenario="${1:?verify or transfer}"
build="${2:-.build/release}"
seconds="${3:-5}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$build/latchkey" bench "$scenario" --connections 8 --seconds "$seconds" >"$out" 2>&1 &
bench=$!

newest() { for _ in $(seq 1 600); do pgrep -n -x "$1" && return 0; sleep 0.1; done; echo "no $1 process" >&2; exit 1; }
verification=$(newest verification)
accounts=$(newest accounts)
declare -A last
while kill -0 "$verification" 2>/dev/null; do
  for pid in "$verification" "$accounts"; do
    reading=$(awk '/^(wchar|syscw):/ {printf "%s ", $2}' "/proc/$pid/io" 2>/dev/null || true)
    [ -n "$reading" ] && last[$pid]=$reading
  done
  sleep 0.2
done
wait "$bench"

rate() { grep "$1" "$out" | head -1 | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/ && $(i+1) ~ /(ms|us)$/) {print $i; exit}}'; }
per() { echo "${last[$1]}" | awk -v n="$2" '{printf "%.1f KB and %.1f write calls", $1 / n / 1024, $2 / n}'; }
if [ "$scenario" = verify ]; then
  pairs=$(( $(rate "verify start+check") * seconds ))
  echo "verification: $(per "$verification" "$pairs") per start+check ($(rate "verify start+check") pairs/s)"
else
  sms=$(rate "confirmed by SMS code"); keyed=$(rate "confirmed by device key")
  echo "accounts: $(per "$accounts" $(( (sms + keyed) * seconds ))) per transfer (SMS $sms/s, device key $keyed/s)"
  echo "verification: $(per "$verification" $(( sms * seconds ))) per SMS-confirmed transfer"
fi
