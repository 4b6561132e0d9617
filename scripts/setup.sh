#!/usr/bin/env bash
# Make .venv/ with torch, triton and kgb (editable, with test extras) on a fresh machine.
#
# torch is installed first and explicitly: an unpinned torch pulls a multi-GB CUDA build,
# while torch==2.13.0 is the CPU build this project's CI machines carry. Override with
# KGB_TORCH="torch==X.Y" (or set it empty to keep whatever torch the venv already has).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
# The runners' OS sandbox: bubblewrap (kgb_core/evaluation/sandbox.py says why this tool). Without
# it kgb still runs, but every candidate runs unsandboxed and every result says so.
source scripts/apt_install.sh
if ! command -v bwrap >/dev/null 2>&1; then
    install_system_package bubblewrap "the runners' sandbox" \
        "candidates will run unsandboxed" "; Fedora: dnf install bubblewrap"
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
torch_spec=${KGB_TORCH-torch==2.13.0}
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1 && [ -n "$torch_spec" ]; then
    echo "setup: installing $torch_spec" >&2
    .venv/bin/python -m pip install -q "$torch_spec"
fi
echo "setup: installing kgb and its dependencies" >&2
.venv/bin/python -m pip install -q -e ".[test]"
# Every distribution under plugins/ (vendor backends, the example), each editable, in one pip
# call: a new plugin folder is picked up with no change here. Their tests run with the suite
# (testpaths in pyproject.toml).
plugin_dirs=()
for project in plugins/*/pyproject.toml; do
    [ -e "$project" ] && plugin_dirs+=(-e "$(dirname "$project")")
done
if [ ${#plugin_dirs[@]} -gt 0 ]; then
    echo "setup: installing $(( ${#plugin_dirs[@]} / 2 )) plugin distribution(s) from plugins/" >&2
    .venv/bin/python -m pip install -q "${plugin_dirs[@]}"
fi
.venv/bin/kgb plugins >&2
.venv/bin/kgb backends >&2
