#!/usr/bin/env bash
# Instructions per verification.start + verification.check pair, counted by valgrind's callgrind
# (deterministic where CPU time on a shared machine is not): verification alone, one event loop,
# SMS to its outbox, SQLite synchronous=FULL, every thread counted (loop, workers, delivery).
# Only the pairs are counted (after a warm-up, instrumentation on, then off).
# Usage: bench/instructions-per-verify.sh [BUILD_DIR] [PAIRS]   (default .build/release 400)
# Needs valgrind and python3. Two builds compare in the same run: run it once per BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/processes.sh
build="${1:-.build/release}"
pairs="${2:-400}"
work=${KEEP_DIR:-$(mktemp -d)}
mkdir -p "$work"
pid=""
# KEEP_DIR=DIR keeps the callgrind output there, for callgrind_annotate.
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; fi; if [ -z "${KEEP_DIR:-}" ]; then rm -rf "$work"; fi' EXIT
# valgrind cannot read the toolchain's DWARF 5: count on a copy without debug sections.
strip --strip-debug -o "$work/latchkey" "$build/latchkey"
ln -s latchkey "$work/verification"
port=$(random_port)
lift_verification_send_limits
# exec: the background job's pid is valgrind's own, for callgrind_control and kill.
(exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/verify" \
  "$work/verification" --listen "127.0.0.1:$port" --event-loops 1 --data-dir "$work/data" 2>"$work/verify.log") &
pid=$!
wait_for_port "$port"
load() { python3 bench/verify_load.py "$port" "$work/data/outbox.jsonl" "$@" >/dev/null; }
load 40 4 0
callgrind_control -i on "$pid" >/dev/null 2>&1
load "$pairs" 4 100000
callgrind_control -i off "$pid" >/dev/null 2>&1
callgrind_control -d "$pid" >/dev/null 2>&1
# Every thread's counts, summed (the loop, the workers, the delivery threads).
total=$(cat "$work"/verify* 2>/dev/null | awk '/^totals:/ {sum += $2} END {print sum}')
echo "verification, start + check:      $(( total / pairs )) instructions per pair"
