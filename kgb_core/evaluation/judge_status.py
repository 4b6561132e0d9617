"""What a judge process is doing now, in a small file the harness can read.

Which operator, which check stage, and whether the judge waits for or holds its device's lock
(``device_lock.py``), each with the moment it began. A sweep whose workers stop finishing
operators can then say what each judge is stuck on (``benchmarks/full_sweep.py``'s stall
watch): on the H100 at ``228c481`` eight workers ran for over a minute with nothing finished,
and the harness could name only the operators. Written only where the judge process itself
set a path (``configure``, in ``judge.main``); a judge made in a test's process writes nothing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

# The file's name in the judge's working folder (the evaluator's scratch folder).
STATUS_NAME = "judge-status.json"

_path: Path | None = None
_fields: dict[str, Any] = {}


def configure(path: str | os.PathLike[str] | None) -> None:
    """Write the status to ``path`` from now on (None: write nothing)."""
    global _path
    _path = Path(path) if path is not None else None
    _fields.clear()


def note(**fields: Any) -> None:
    """Merge ``fields`` into the status and write it whole (a rename: never half a file)."""
    if _path is None:
        return
    _fields.update(fields)
    _fields["written_at"] = time.time()
    partial = _path.with_name(_path.name + ".part")
    try:
        partial.write_text(json.dumps(_fields, default=str))
        os.replace(partial, _path)
    except OSError:
        pass  # a status is for a person reading a stall, never worth a judge's failure


def read(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The status a judge working in ``folder`` wrote last, or {} where there is none."""
    try:
        return json.loads((Path(folder) / STATUS_NAME).read_text())
    except (OSError, ValueError):
        return {}


def describe(status: dict[str, Any], now: float | None = None) -> str:
    """One line: the stage and the lock, each with how long it has lasted."""
    if not status:
        return "no judge status"
    now = time.time() if now is None else now

    def since(key: str) -> str:
        at = status.get(key)
        return f" for {now - float(at):.0f} s" if at else ""

    lock = status.get("lock") or "no device lock"
    return (f"stage {status.get('stage') or '-'}{since('stage_since')}, "
            f"{lock}{since('lock_since')}")
