#!/usr/bin/env bash
# What the test suite needs beyond scripts/setup.sh: Chromium, for the tests that open the HTML
# report in a real headless browser (it renders, its tables sort and filter, it asks the network
# for nothing). Installed with apt-get as root; elsewhere it says what to install, and those
# tests skip with that reason.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
    command -v "$name" >/dev/null 2>&1 && exit 0
done
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: installing chromium (the HTML report's browser tests)" >&2
    (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 \
        || echo "setup: WARNING: could not install chromium; the browser tests will skip" >&2
else
    echo "setup: WARNING: no chromium here and no apt-get as root to install it; the HTML" \
         "report's browser tests will skip (Debian/Ubuntu: apt-get install chromium)" >&2
fi
