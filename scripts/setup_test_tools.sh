#!/usr/bin/env bash
# What the test suite needs beyond scripts/setup.sh: Chromium, for the tests that open the HTML
# report in a real headless browser (it renders, its tables sort and filter, it asks the network
# for nothing). Installed with apt-get as root; elsewhere it says what to install, and those
# tests skip with that reason.
set -euo pipefail
cd "$(dirname "$0")/.."
for name in chromium chromium-browser google-chrome; do
    command -v "$name" >/dev/null 2>&1 && exit 0
done
source scripts/apt_install.sh
install_system_package chromium "the HTML report's browser tests" "the browser tests will skip"
