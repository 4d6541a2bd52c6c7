#!/usr/bin/env bash
# The compose topology without Docker: same executables, same environment, two verification replicas.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/compose_topology.py "$(swift build --show-bin-path)"
