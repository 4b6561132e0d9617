"""docs/inventory.md is generated from the sources; a stale page fails here."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_the_inventory_page_matches_the_installed_sources():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "write_inventory.py"), "--check"],
                          capture_output=True, text=True, cwd=str(REPO), timeout=300)
    assert done.returncode == 0, done.stderr
