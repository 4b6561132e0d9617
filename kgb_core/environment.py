"""Where a number was made: recorded with every run so any result can be traced."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any

import kgb_core
from kgb_core.plugins import Registry


def source_commit() -> str | None:
    """The git commit of kgb's own source tree, when it runs from a checkout."""
    root = Path(kgb_core.__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def describe_environment(registry: Registry, worker_info: dict[str, Any]) -> dict[str, Any]:
    return {
        "kgb": kgb_core.__version__,
        "commit": source_commit(),
        "harness_python": platform.python_version(),
        "host": platform.node(),
        "worker": {key: worker_info.get(key) for key in
                   ("device", "device_name", "emulates", "python", "torch", "triton",
                    "platform")},
        "plugins": {p.name: {"distribution": p.distribution, "version": p.version}
                    for p in registry.plugins if p.error is None},
    }
