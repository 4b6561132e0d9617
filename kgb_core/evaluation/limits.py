"""Limits on the processes that run candidates: rlimits, and resident memory read from /proc."""

from __future__ import annotations

# Limits every runner gets: no core files (a crashing candidate must not fill the disk) and
# no file larger than 8 GiB. Its outputs and its inputs after the call travel to the judge as
# one file: 1 GiB was too little for aten.embedding's large case on the H200 (Errno 27).
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
