"""The OS sandbox around runners: bubblewrap (``bwrap``), or none, said loudly.

Why bubblewrap: it is maintained (it is what Flatpak runs every app in), packaged by every
distribution (Debian's ``bubblewrap``, which ``scripts/setup.sh`` installs), a single small
binary that needs no daemon, and it does exactly the few things kgb needs with namespaces:
a private mount namespace over a read-only view of the host, a PID namespace (the harness, the
judge and their ``/proc`` entries are invisible), no network, a new session, every capability
dropped, and death with its parent. nsjail does more (seccomp policies, cgroups) but is not
packaged by Debian, and code of our own around ``unshare`` would be code to get wrong.

Inside the sandbox the template (``kgb_core.evaluation.template``) forks one runner per
candidate. What a runner sees:

- the host file system read-only, with ``/tmp``, ``/run``, ``/var/run`` and ``/var/tmp`` empty
  and read-only too (``/dev/shm`` is the sandbox's own, emptied after every runner); the directories of every source plugin (references, held-out case tables) and
  the result store masked; the device files the backend names bound in; a fresh ``/dev``;
- the judge's work folder, read-write, where each runner gets its own new folder (its scratch:
  home, temp and Triton cache, and the exchange files of its inputs and outputs);
- Python started with ``-P``, so neither its folder nor the working directory is importable.

``KGB_SANDBOX=none`` turns the sandbox off (or ``bwrap`` to insist on it); ``KGB_BWRAP`` names
the binary. Without it, runners still start fresh from the template, but nothing stops a
runner from writing the host's files or reading the harness's memory with the user's rights:
kgb says so once per sweep and records ``sandbox = none`` in every result.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Iterable, Sequence

from kgb_core.errors import UserError

BWRAP = "bwrap"
NONE = "none"

# Host folders a runner gets empty: places where sockets of other services live, and the
# host's temporary files.
_EMPTIED = ("/tmp", "/run", "/var/run", "/var/tmp")


@dataclass(frozen=True)
class SandboxTool:
    """Which sandbox runners get here, and why (one line for warnings and ``kgb doctor``)."""

    name: str  # "bwrap" or "none"
    detail: str
    binary: str = ""

    @property
    def sandboxed(self) -> bool:
        return self.name != NONE


def _base_arguments() -> list[str]:
    # --as-pid-1: the template is the namespace's init, so no other process of the sandbox
    # (bubblewrap's reaper included) is there for a runner to ptrace or signal, and signals a
    # runner sends its init without a handler (SIGKILL) are ignored by the kernel.
    arguments = ["--unshare-all", "--as-pid-1", "--die-with-parent", "--new-session",
                 "--cap-drop", "ALL",
                 "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in _emptied():
        arguments += ["--tmpfs", folder]
    return arguments


def _emptied() -> list[str]:
    """The folders of ``_EMPTIED`` this machine has as real folders (``/var/run`` is often a
    link to ``/run``, emptied through it)."""
    return [folder for folder in _EMPTIED
            if os.path.isdir(folder) and not os.path.islink(folder)]


@functools.lru_cache(maxsize=None)
def find_sandbox(choice: str | None = None, binary: str | None = None) -> SandboxTool:
    """The sandbox this machine gives runners: bwrap when it is installed and works here.

    Probed once per process by starting ``bwrap ... true``: a binary that exists but cannot
    make namespaces (a container that forbids them) reads as missing, with its error.
    """
    choice = (choice if choice is not None else os.environ.get("KGB_SANDBOX", "")).strip()
    if choice == NONE:
        return SandboxTool(NONE, "turned off (KGB_SANDBOX=none)")
    if choice not in ("", BWRAP):
        raise UserError(f"KGB_SANDBOX={choice!r}: give bwrap or none")
    path = binary or os.environ.get("KGB_BWRAP") or shutil.which("bwrap")
    if not path:
        return _missing(choice, "bubblewrap (bwrap) is not installed; scripts/setup.sh installs "
                                "it (Debian package bubblewrap)")
    try:
        probe = subprocess.run([path, *_base_arguments(), "--", "true"], capture_output=True,
                               text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return _missing(choice, f"{path} could not run: {error}")
    if probe.returncode != 0:
        return _missing(choice, f"{path} cannot make a sandbox here: "
                                f"{(probe.stderr or probe.stdout).strip()[:300]}")
    version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
    return SandboxTool(BWRAP, f"{version or 'bwrap'} ({path}): own mount, PID, network, IPC "
                              f"and user namespaces, file system read-only", path)


def _missing(choice: str, why: str) -> SandboxTool:
    if choice == BWRAP:
        raise UserError(f"KGB_SANDBOX=bwrap, but {why}")
    return SandboxTool(NONE, why)


def warning(tool: SandboxTool) -> str:
    """What kgb prints once per sweep when runners are not sandboxed."""
    return (f"WARNING: candidates run WITHOUT an OS sandbox ({tool.detail}). Each still gets a "
            f"fresh process, but it can read and write whatever this user can, so a cheating "
            f"candidate could reach the harness. Results are recorded with sandbox = none.")


def _python_inside_emptied() -> list[str]:
    """What Python and kgb need that lies inside a folder the sandbox empties (a checkout or a
    virtual environment under /tmp, as a CI clone may be): the top folder holding each, bound
    back read-only before the masks, which still hide the sources inside it."""
    import kgb_core

    needed = [sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix,
              os.path.dirname(os.path.dirname(os.path.abspath(kgb_core.__file__))),
              *[entry for entry in sys.path if entry]]
    found: list[str] = []
    for path in needed:
        path = os.path.abspath(path)
        for folder in _emptied():
            if path.startswith(folder + os.sep):
                top = os.path.join(folder, path[len(folder) + 1:].split(os.sep)[0])
                if os.path.exists(top) and top not in found:
                    found.append(top)
    return found


def device_paths(patterns: Iterable[str]) -> list[str]:
    """The device files matching the backend's patterns that exist here."""
    found: list[str] = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            if path not in found:
                found.append(path)
    return found


def source_locations(modules: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """Where the named modules live on disk, to be masked: a package's folder, a module's file,
    and the git history of the checkout they are in. Modules in ``keep`` (the one that
    registers the runner's backend) stay visible."""
    kept = {name.partition(":")[0] for name in keep}
    found: list[str] = []
    for name in modules:
        module = sys.modules.get(name.partition(":")[0])
        path = getattr(module, "__file__", None)
        if not path or name.partition(":")[0] in kept:
            continue
        if os.path.basename(path) == "__init__.py":
            path = os.path.dirname(path)
        path = os.path.realpath(path)
        for hidden in (path, _repository_of(path)):
            if hidden and hidden not in found:
                found.append(hidden)
    return found


def _repository_of(path: str) -> str | None:
    """The ``.git`` of the checkout holding ``path``, if any: its history holds the same files
    (``git show HEAD:kgb_sources/...`` printed the held-out cases from inside a sandbox)."""
    folder = os.path.dirname(path)
    while True:
        candidate = os.path.join(folder, ".git")
        if os.path.exists(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def command(tool: SandboxTool, program: Sequence[str], *, writable: Iterable[str] = (),
            devices: Iterable[str] = (), masked: Iterable[str] = (),
            readable: Iterable[str] = ()) -> list[str]:
    """The command line that starts ``program`` in the sandbox (``program`` itself without).
    ``readable``: folders it reads that may lie in an emptied one (a problem folder in /tmp)."""
    if not tool.sandboxed:
        return list(program)
    arguments = [tool.binary, *_base_arguments()]
    for path in [*_python_inside_emptied(), *readable]:
        arguments += ["--ro-bind", path, path]
    for path in devices:
        arguments += ["--dev-bind", path, path]
    for path in masked:
        if os.path.isdir(path):
            arguments += ["--tmpfs", path]
        elif os.path.exists(path):
            arguments += ["--ro-bind", "/dev/null", path]
    for path in writable:
        arguments += ["--bind", path, path]
    # The emptied folders become read-only last, so that writable folders bound inside them
    # stay writable and a write anywhere else fails at once, with the error in the verdict.
    for folder in _emptied():
        arguments += ["--remount-ro", folder]
    return [*arguments, "--", *program]
