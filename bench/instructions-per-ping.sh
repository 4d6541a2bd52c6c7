#!/usr/bin/env bash
# Instructions per identity.ping, counted by valgrind's callgrind (deterministic where CPU time
# on a shared machine is not): identity answering directly, the gateway forwarding one, and
# identity answering one that came through the gateway. One event loop each; only the
# requests are counted (after a warm-up, instrumentation on, then off).
# Usage: bench/instructions-per-ping.sh [BUILD_DIR] [REQUESTS]   (default .build/release 20000)
# Needs valgrind and python3. Two builds compare in the same run: run it once per BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/processes.sh
build="${1:-.build/release}"
requests="${2:-20000}"
work=${KEEP_DIR:-$(mktemp -d)}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; if [ -z "${KEEP_DIR:-}" ]; then rm -rf "$work"; fi' EXIT
# valgrind cannot read the toolchain's DWARF 5: count on a copy without debug sections, each
# service started by its name linked to it.
strip --strip-debug -o "$work/latchkey" "$build/latchkey"
for name in identity gateway; do ln -s latchkey "$work/$name"; done
load="python3 bench/ping_load.py"

# count PORT PID OUTFILE: warm up, then count REQUESTS through PORT in process PID.
count() {
  $load "$1" 2000 >/dev/null
  callgrind_control -i on "$2" >/dev/null 2>&1
  $load "$1" "$requests" >/dev/null
  callgrind_control -i off "$2" >/dev/null 2>&1
  callgrind_control -d "$2" >/dev/null 2>&1
}

per_request() { echo $(( $(cat "$1".* | awk '/^totals:/ {print $2}' | sort -n | tail -1) / requests )); }

port=$(random_port)
# exec: the background job's pid is valgrind's own, for callgrind_control and kill.
under_valgrind() { exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$1" "${@:2}"; }
identity_flags=(--event-loops 1 --data-dir "$work/data")
gateway_flags=(--event-loops 1 --http-listen off --health-interval-ms 600000 --resolve-interval-ms 600000 --data-dir "$work/data")

(under_valgrind "$work/direct" "$work/identity" --listen "127.0.0.1:$port" "${identity_flags[@]}" 2>"$work/direct.log") &
pids=($!)
wait_for_port "$port"
count "$port" "${pids[0]}"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
echo "identity, answered directly:      $(per_request "$work/direct") instructions per ping"

"$work/identity" --listen "127.0.0.1:$((port + 1))" "${identity_flags[@]}" 2>/dev/null &
pids=($!)
wait_for_port $((port + 1))
(under_valgrind "$work/forward" "$work/gateway" --listen "127.0.0.1:$((port + 2))" --identity "127.0.0.1:$((port + 1))" "${gateway_flags[@]}" 2>"$work/forward.log") &
pids+=($!)
wait_for_port $((port + 2))
count $((port + 2)) "${pids[1]}"
kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
echo "gateway, forwarding:              $(per_request "$work/forward") instructions per ping"

(under_valgrind "$work/behind" "$work/identity" --listen "127.0.0.1:$((port + 3))" "${identity_flags[@]}" 2>"$work/behind.log") &
pids=($!)
wait_for_port $((port + 3))
"$work/gateway" --listen "127.0.0.1:$((port + 4))" --identity "127.0.0.1:$((port + 3))" "${gateway_flags[@]}" 2>/dev/null &
pids+=($!)
wait_for_port $((port + 4))
count $((port + 4)) "${pids[0]}"
kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
echo "identity, behind the gateway:     $(per_request "$work/behind") instructions per ping"
