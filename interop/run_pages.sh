#!/usr/bin/env bash
# The pages mailed links open (password reset, e-mail verification), driven in headless
# Chromium by Selenium against `latchkey up --demo` (interop/pages_browser.py).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null || { echo "run_pages.sh: $tool is missing: apt-get install chromium chromium-driver" >&2; exit 1; }
done
python3 interop/pages_browser.py "$(swift build --show-bin-path)"
