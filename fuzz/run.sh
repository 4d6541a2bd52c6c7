#!/usr/bin/env bash
# Builds the fuzzers with the toolchain's libFuzzer + AddressSanitizer and runs each for a
# bounded time on its seed corpus: LineProtocol (framing, JSON-RPC) for the first half of the
# time, then WebAuthn's CBOR decoder for the rest. Usage: fuzz/run.sh [seconds]  (default 60, in all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
first=$(( seconds / 2 > 0 ? seconds / 2 : 1 ))
second=$(( seconds - first > 0 ? seconds - first : 1 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# An input that fails is kept in fuzz/crashes/ (ignored by git), not in the checkout's root.
mkdir -p fuzz/crashes

# build NAME SOURCES...: one fuzzer, a module of its own.
build() {
  local name="$1"; shift
  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "$name" "$@" -o "$work/$name" >"$work/build-$name.log" 2>&1 \
    || { cat "$work/build-$name.log"; exit 1; }
}

# run NAME CORPUS SECONDS: on a copy of the corpus, so new inputs found in CI do not dirty the checkout.
run() {
  local name="$1" corpus="$2" time="$3"
  cp -r "$corpus" "$work/corpus-$name"
  "$work/$name" "$work/corpus-$name" -max_total_time="$time" -max_len=8192 -timeout=10 \
    -artifact_prefix=fuzz/crashes/ -print_final_stats=1 2>"$work/fuzz-$name.log" || { tail -n 60 "$work/fuzz-$name.log"; exit 1; }
  echo "$name:"
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/fuzz-$name.log" | tail -n 2
}

build LineProtocolFuzz fuzz/LineProtocolFuzzer.swift Sources/LineProtocol/*.swift
build CBORFuzz fuzz/CBORFuzzer.swift Sources/WebAuthn/CBOR*.swift
run LineProtocolFuzz fuzz/corpus "$first"
run CBORFuzz fuzz/corpus-cbor "$second"
