#!/usr/bin/env bash
# identity.export from a Python client, validated with jsonschema against protocol/export.schema.json.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/export_check.py "$(swift build --show-bin-path)"
