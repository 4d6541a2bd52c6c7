#!/usr/bin/env bash
# The confirmed transfer's floor on this machine: bench/transfer-floor.c (its header says what it
# keeps and what it leaves out), built here and run on a scratch directory, once as the flow is,
# once as the services' design runs it (an epoll loop handing requests to a worker pool in each
# process, and again with answers written by the loop, and with Unix-domain sockets between the
# services), and once per structural change (no gateway, one process, the transfer written once,
# five transactions, no fsync at all). Compare with
# `latchkey bench transfer` run alternately in the same session.
# Usage: bench/transfer-floor.sh [SECONDS] [CONNECTIONS]   (default 4 8). Needs gcc and libsqlite3-dev.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-4}"
connections="${2:-8}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -Wextra -o "$work/floor" transfer-floor.c -lsqlite3 -lpthread
for variant in "as the flow is:" "loops and pools:LOOPS=1" "answers by loop:LOOPS=1 REPLY=1" "unix sockets:LOOPS=1 REPLY=1 UNIX=1" "no gateway:GATEWAY=0" "one process:GATEWAY=0 IDENTITY=0 VERIFICATION=0" "no attach:ATTACH=0" "5 transactions:ATTACH=0 OUTCOME=0" "no fsync at all:NOSYNC=1"; do
  name="${variant%%:*}"
  settings="${variant#*:}"
  rm -rf "$work/data" && mkdir "$work/data"
  printf "%-16s " "$name"
  env $settings "$work/floor" "$work/data" "$seconds" "$connections"
done
