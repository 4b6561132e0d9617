"""A plugin installed into a fresh venv that holds only the core: discovered with its version;
uninstalled, gone; a plugin that raises at import is reported and kgb keeps working.

The machine is offline, so the core's dependencies (torch, triton, pluggy, typer ...) come from
this interpreter's site-packages, seen through a folder of links that leaves out every kgb
distribution (the core and every plugin installed here): the new venv starts with none of them.
pip then installs the core (editable, as a developer would) and the example plugin from a copy
of ``plugins/kgb-backend-example``, resolving its dependency on ``kernelgenbench`` for real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

from conftest import REPO

EXAMPLE = REPO / "plugins" / "kgb-backend-example"


def _is_kgb(name: str) -> bool:
    lowered = name.lower().replace("-", "_")
    return "kgb" in lowered or "kernelgenbench" in lowered


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("fresh")
    deps = root / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not _is_kgb(entry.name) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True).stdout
    Path(site.strip(), "_kgb_test_dependencies.pth").write_text(f"{deps}\n")
    # Nothing of the harness's environment may point the new venv back at this checkout.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KGB_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return root, python, env


def _run(env_info, *args, check=True):
    root, python, env = env_info
    done = subprocess.run([str(python), *args], capture_output=True, text=True, env=env,
                          cwd=str(root), timeout=120)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def _pip(env_info, *args):
    return _run(env_info, "-m", "pip", *args)


def _kgb(env_info, *args, check=True):
    return _run(env_info, "-c", "from kgb_core.cli import main; main()", *args, check=check)


def _plugins(env_info):
    return {p["name"]: p for p in json.loads(_kgb(env_info, "plugins", "--json").stdout)}


def test_install_discover_uninstall_and_a_broken_plugin(fresh_venv):
    root, _, _ = fresh_venv
    no_core = _run(fresh_venv, "-c", "import kgb_core", check=False)
    assert no_core.returncode != 0, "the fresh venv must start without kgb"
    _pip(fresh_venv, "install", "--no-deps", "--no-build-isolation", "-e", str(REPO))
    before = _plugins(fresh_venv)
    assert "cpu" in before and "kgb-backend-example" not in before
    assert all(p["distribution"] == "kernelgenbench" for p in before.values()), before

    copy = root / "kgb-backend-example"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(
        "*.egg-info", "build", "__pycache__", ".pytest_cache"))
    _pip(fresh_venv, "install", "--no-build-isolation", str(copy))  # resolves kernelgenbench
    after = _plugins(fresh_venv)
    plugin = after["kgb-backend-example"]
    assert plugin["distribution"] == "kgb-backend-example"
    assert plugin["version"] == "0.1.0" and plugin["error"] is None
    backends = {b["name"]: b for b in json.loads(_kgb(fresh_venv, "backends", "--json").stdout)}
    assert backends["example"]["distribution"] == "kgb-backend-example 0.1.0"
    assert backends["example"]["available"], backends["example"]
    table = _kgb(fresh_venv, "plugins").stdout
    assert "kgb-backend-example 0.1.0" in table

    _pip(fresh_venv, "uninstall", "-y", "kgb-backend-example")
    assert "kgb-backend-example" not in _plugins(fresh_venv)

    broken = root / "kgb-broken"
    (broken / "kgb_broken").mkdir(parents=True)
    (broken / "kgb_broken" / "__init__.py").write_text(
        'raise RuntimeError("kgb_broken fails at import, on purpose")\n')
    (broken / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "kgb-broken"
        version = "0.0.1"
        [project.entry-points.kgb]
        broken = "kgb_broken"
        [tool.setuptools]
        packages = ["kgb_broken"]
        """))
    _pip(fresh_venv, "install", "--no-deps", "--no-build-isolation", str(broken))
    failed = _plugins(fresh_venv)["broken"]
    assert failed["distribution"] == "kgb-broken" and "on purpose" in failed["error"]
    assert "FAILED: RuntimeError: kgb_broken fails at import" in _kgb(fresh_venv, "plugins").stdout
    assert "cpu" in {b["name"] for b in json.loads(_kgb(fresh_venv, "backends", "--json").stdout)}
    doctor = _kgb(fresh_venv, "doctor", "--backend", "cpu", check=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "plugin broken [kgb-broken 0.0.1] failed to load" in doctor.stdout
