"""kgb_core.api: what a plugin may import from kgb, and the only way the plugins under
plugins/ import it (their separately installable distributions must not depend on where the
core keeps things)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import kgb_core.api as api

REPO = Path(__file__).resolve().parent.parent


def test_every_public_name_resolves():
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_an_unknown_name_says_where_the_list_is():
    with pytest.raises(AttributeError, match="kgb_core/api.py"):
        api.ResultStore  # noqa: B018 - the store is the harness's, no plugin's


def test_importing_it_and_a_backends_names_loads_no_torch():
    code = ("import sys\nfrom kgb_core.api import TorchDeviceBackend, Quirks, hookimpl\n"
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _core_imports(path: Path) -> list[str]:
    """Each import of kgb_core in the file other than kgb_core.api and hookimpl."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module == "kgb_core" or node.module.startswith("kgb_core.")):
            if node.module == "kgb_core.api":
                continue
            if node.module == "kgb_core" and [a.name for a in node.names] == ["hookimpl"]:
                continue
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{path.relative_to(REPO)}:{node.lineno}: import {a.name}"
                      for a in node.names if a.name.split(".")[0] == "kgb_core"]
    return found


def test_the_plugins_import_the_core_through_the_api_alone():
    packages = [p for p in (REPO / "plugins").glob("*/kgb_*") if p.is_dir()]
    assert len(packages) >= 10  # the vendor backends, the example, the two problem sources
    offending = [line for package in packages for path in sorted(package.rglob("*.py"))
                 for line in _core_imports(path)]
    assert not offending, "\n".join(offending)
