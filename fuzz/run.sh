#!/usr/bin/env bash
# Builds the LineProtocol fuzzer with the toolchain's libFuzzer + AddressSanitizer and runs it
# for a bounded time on the seed corpus. Usage: fuzz/run.sh [seconds]  (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name LineProtocolFuzz \
  fuzz/LineProtocolFuzzer.swift Sources/LineProtocol/*.swift -o "$work/fuzz-lineprotocol" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log"; exit 1; }
# Work on a copy so new inputs found in CI do not dirty the checkout.
cp -r fuzz/corpus "$work/corpus"
# An input that fails is kept in fuzz/crashes/ (ignored by git), not in the checkout's root.
mkdir -p fuzz/crashes
"$work/fuzz-lineprotocol" "$work/corpus" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
  -artifact_prefix=fuzz/crashes/ -print_final_stats=1 2>"$work/fuzz.log" || { tail -n 60 "$work/fuzz.log"; exit 1; }
grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/fuzz.log" | tail -n 2
