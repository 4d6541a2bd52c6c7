#!/usr/bin/env bash
# The compose topology without Docker: same executables, same environment, two verification replicas;
# then the PostgreSQL mode with two replicas of every service, and the TLS override.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/compose_topology.py "$(swift build --show-bin-path)"
# The PostgreSQL mode too, on the server .ci/run started (skipped when there is none).
if [ -n "${LATCHKEY_TEST_DATABASE_URL:-}" ]; then
  python3 interop/compose_topology.py "$(swift build --show-bin-path)" --postgres "$LATCHKEY_TEST_DATABASE_URL"
fi
# The TLS override: its health check and both doors over TLS.
python3 interop/compose_topology.py "$(swift build --show-bin-path)" --tls
