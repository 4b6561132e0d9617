"""Limits on the processes of an evaluation: rlimits, resident memory read from /proc, and
their end (a process group killed whole)."""

from __future__ import annotations

import os
import signal
import subprocess

# Limits every runner gets: no core files (a crashing candidate must not fill the disk) and
# no file larger than 8 GiB. Its outputs and its inputs after the call cross to the judge in its
# reply arena, a file too (a memfd, kgb_core/evaluation/arena.py): 1 GiB was too little for
# aten.embedding's large case on the H200 (Errno 27).
MAX_FILE_BYTES = 8 << 30
BASE_LIMITS = {"RLIMIT_CORE": 0, "RLIMIT_FSIZE": MAX_FILE_BYTES}


def apply_limits(limits: dict[str, int]) -> None:
    """Lower this process's rlimits; a limit the OS refuses is left as it was."""
    import resource

    for name, value in {**BASE_LIMITS, **limits}.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, hard = resource.getrlimit(which)
        soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def resident_bytes(pid: int) -> int:
    """The process's resident set size (Linux), 0 where it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL a child started with its own session, and everything in its process group."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
        process.wait()


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"
