#!/usr/bin/env bash
# Which trees the pages of verification's commits belong to: verification alone (its default
# loops), SMS to its outbox, SQLite synchronous=FULL, PAIRS start + check pairs over 4
# connections (bench/verify_load.py), then kill -9 so the write-ahead log is left as the last
# commits wrote it. Every frame of the log's current cycle is counted under the table or index
# its page belongs to (SQLite's dbstat), per commit: a page a commit changes is written whole,
# checksummed and flushed, so fewer trees touched per commit is less work for the disk and the
# kernel. The log's current cycle may be short (it restarts after each checkpoint); the bytes
# and write calls per pair, from /proc/PID/io over the measured pairs, are the steadier figure.
# Two builds compare in the same run: run it once per BUILD_DIR.
# Usage: bench/wal-pages-per-verify.sh [BUILD_DIR] [PAIRS]   (default .build/release 200)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/processes.sh
build="${1:-.build/release}"
pairs="${2:-200}"
work=$(mktemp -d)
pid=""
trap 'if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
port=$(random_port)
lift_verification_send_limits
"$build/latchkey" verification --listen "127.0.0.1:$port" --data-dir "$work/data" 2>"$work/verify.log" &
pid=$!
wait_for_port "$port"
python3 bench/verify_load.py "$port" "$work/data/outbox.jsonl" 100 4 0 >/dev/null
written() { awk '/^wchar/ {w = $2} /^syscw/ {c = $2} END {print w, c}' "/proc/$pid/io"; }
read -r bytes_before calls_before < <(written)
python3 bench/verify_load.py "$port" "$work/data/outbox.jsonl" "$pairs" 4 100000 >/dev/null
read -r bytes_after calls_after < <(written)
python3 -c "import sys; b, c, p = map(int, sys.argv[1:]); print(f'written per pair: {b / p / 1024:.1f} KB in {c / p:.1f} write calls (log frames, outbox, log lines)')" \
  "$(( bytes_after - bytes_before ))" "$(( calls_after - calls_before ))" "$pairs"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
python3 bench/wal_pages.py "$work/data/verification.sqlite"
