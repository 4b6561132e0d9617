"""Checks side by side, timings alone: a device's lock, shared between judge processes.

A timed sweep spent most of its time checking (compiling, drawing inputs, computing
references, comparing: host work, with short bursts on the device), one candidate at a time,
because a timed kernel must have its device to itself. With this lock several judges check at
once on one device, each holding the lock *shared* for one step of device work at a time (a
trial, a probe, a runner's start or end), and a judge about to time a candidate takes it
*exclusive* for its whole timing stage (the candidate's timed calls, the baseline's, the
checks between them): it waits for the steps running to end, no new step starts until its
timing is done, and the steps then go on where they stopped. So timing numbers are
the device's alone, as before, while the checks around them overlap (issue 25).

The lock is a file locked with ``flock(2)``, one per device and user, so judges of different
sweeps (two ``kgb run`` on one GPU) keep out of each other's timings too. Writers come first:
a judge that wants the lock exclusive holds a turnstile *shared* while it waits and while it
times, and every shared taker passes through that turnstile *exclusively*, so a stream of
checks cannot starve a timing, and no check starts while any timing waits or holds. Timings
that wait together therefore go one after another before the checks go on: a timing first
waits for the check steps under way to end, and each timing that came in after a check slipped
in between would wait for one more such drain (on the H100, six judges waited 1044 s for the
lock in a 461 s sweep, h100-full-sweep-4885326). A timing stream cannot starve the checks
either: a judge's next timing needs a check step of its own first. Runners never see the files
(``/tmp`` is empty in their sandbox, and the folder is masked besides): a candidate cannot hold
the device.

Reentrant within a process: an exclusive holder's shared steps (the judge's own checks of its
timed samples) go through without waiting on themselves.

Gathering (``gather_s``, off by default): every hold alone costs a drain, the wait for the
check steps under way to end, and every judge on the device waits through it. Timings that
wait together share one drain. A judge ready to time with no other timing waiting or holding
may first wait up to ``gather_s``, holding nothing (the checks go on), for another timing to
start waiting; it then queues behind that one at once, and the timings that came in go one
after another. Its own worker idles meanwhile: a trade measured by ``benchmarks/full_sweep.py``
(``--timing-gather-s``), not assumed.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kgb_core.evaluation import judge_status

# The variable that hands a judge its device's lock file (never passed on to a runner), and
# the one that hands it the seconds a timing may gather others (``DeviceLock.gather_s``).
LOCK_VARIABLE = "KGB_JUDGE_DEVICE_LOCK"
GATHER_VARIABLE = "KGB_JUDGE_TIMING_GATHER_S"
# How often a gathering judge looks for another timing (a lock tried, and let go at once: a
# timing that starts to wait meanwhile waits that long at most).
GATHER_POLL_S = 0.02


def lock_folder() -> Path:
    """Where this user's device locks live: a folder of its own, private to the user
    (``KGB_DEVICE_LOCKS`` names another, for tests that must not share the machine's)."""
    chosen = os.environ.get("KGB_DEVICE_LOCKS")
    folder = Path(chosen) if chosen else (Path(tempfile.gettempdir())
                                         / f"kgb-device-locks-{os.getuid()}")
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def lock_path(backend: str, device: int | None) -> Path:
    """The lock of one device of a backend; an unpinned worker's device is device 0."""
    return lock_folder() / f"{backend}-{device if device is not None else 0}.lock"


class DeviceLock:
    """Shared for checking, exclusive for timing; ``waited_s`` is the time spent waiting."""

    def __init__(self, path: str | os.PathLike[str], gather_s: float = 0.0) -> None:
        self.path = Path(path)
        self.gather_s = gather_s
        # Of waited_alone_s, the seconds spent gathering (``_gather``).
        self.gathered_s = 0.0
        self._device = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        turnstile = self.path.with_name(self.path.name + ".turnstile")
        self._turnstile = os.open(turnstile, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        # Held shared by every timing that waits or holds, and by nothing else: what a
        # gathering judge looks at (the turnstile will not do, as every check passing through
        # holds it for a moment too).
        timings = self.path.with_name(self.path.name + ".timings")
        self._timings = os.open(timings, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._shared_depth = 0
        self._exclusive_depth = 0
        self.waited_s = 0.0
        # Of waited_s, the seconds spent waiting to hold the device alone: for the checks
        # other judges had under way to end (every other judge waits meanwhile too).
        self.waited_alone_s = 0.0
        # Seconds this process held the device alone: what every other judge on it waited for.
        self.held_alone_s = 0.0

    @contextmanager
    def shared(self) -> Iterator[None]:
        if self._exclusive_depth or self._shared_depth:  # already holding it
            self._shared_depth += 1
            try:
                yield
            finally:
                self._shared_depth -= 1
            return
        self._take_shared()
        self._shared_depth = 1
        try:
            yield
        finally:
            self._shared_depth = 0
            self._let_go_shared()

    @contextmanager
    def set_aside(self) -> Iterator[None]:
        """Host work in the middle of a step held shared (a reference that loops in Python on
        host copies): the lock let go meanwhile, and taken shared again after, behind any
        timing that came. Held through it, such work kept every judge about to time waiting,
        and every judge behind that one (steps of 20 to 40 s on the H100, 45f5df4). Held
        alone, or not held: nothing changes."""
        if self._exclusive_depth or not self._shared_depth:
            yield
            return
        depth, self._shared_depth = self._shared_depth, 0
        self._let_go_shared()
        try:
            yield
        finally:
            self._take_shared()
            self._shared_depth = depth

    def _take_shared(self) -> None:
        started = time.monotonic()
        judge_status.note(lock="waiting to share", lock_since=time.time())
        fcntl.flock(self._turnstile, fcntl.LOCK_EX)  # behind every timing that waits or holds
        fcntl.flock(self._turnstile, fcntl.LOCK_UN)
        fcntl.flock(self._device, fcntl.LOCK_SH)
        self.waited_s += time.monotonic() - started
        judge_status.note(lock="sharing", lock_since=time.time())

    def _let_go_shared(self) -> None:
        fcntl.flock(self._device, fcntl.LOCK_UN)
        judge_status.note(lock="", lock_since=None)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        if self._exclusive_depth:
            self._exclusive_depth += 1
            try:
                yield
            finally:
                self._exclusive_depth -= 1
            return
        if self._shared_depth:
            raise RuntimeError("a device lock held shared cannot be taken exclusive: two "
                               "judges doing that at once would wait on each other forever")
        started = time.monotonic()
        if self.gather_s > 0:
            self._gather(started + self.gather_s)
        judge_status.note(lock="waiting to hold alone", lock_since=time.time())
        fcntl.flock(self._timings, fcntl.LOCK_SH)
        fcntl.flock(self._turnstile, fcntl.LOCK_SH)  # no check passes until every timing is done
        try:
            fcntl.flock(self._device, fcntl.LOCK_EX)
        except BaseException:
            fcntl.flock(self._turnstile, fcntl.LOCK_UN)
            fcntl.flock(self._timings, fcntl.LOCK_UN)
            raise
        taken = time.monotonic()
        self.waited_s += taken - started
        self.waited_alone_s += taken - started
        judge_status.note(lock="holding alone", lock_since=time.time())
        self._exclusive_depth = 1
        try:
            yield
        finally:
            self.held_alone_s += time.monotonic() - taken
            self._exclusive_depth = 0
            fcntl.flock(self._device, fcntl.LOCK_UN)
            fcntl.flock(self._turnstile, fcntl.LOCK_UN)
            fcntl.flock(self._timings, fcntl.LOCK_UN)
            judge_status.note(lock="", lock_since=None)

    def _gather(self, until: float) -> None:
        """Wait, holding nothing, until another timing waits or holds (the timings' file is
        held shared: trying it exclusive fails) or ``until`` passes."""
        began = time.monotonic()
        judge_status.note(lock="gathering", lock_since=time.time())
        while time.monotonic() < until:
            try:
                fcntl.flock(self._timings, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                break  # a timing waits or holds: queue behind it now
            fcntl.flock(self._timings, fcntl.LOCK_UN)
            time.sleep(GATHER_POLL_S)
        self.gathered_s += time.monotonic() - began

    def close(self) -> None:
        for descriptor in (self._device, self._turnstile, self._timings):
            try:
                os.close(descriptor)
            except OSError:
                pass


class NoLock:
    """For a judge alone on its device (one worker per device, the CPU's interpreter)."""

    waited_s = 0.0
    waited_alone_s = 0.0
    gathered_s = 0.0

    def __init__(self) -> None:
        self.held_alone_s = 0.0

    @contextmanager
    def shared(self) -> Iterator[None]:
        yield

    @contextmanager
    def set_aside(self) -> Iterator[None]:
        yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        taken = time.monotonic()
        try:
            yield
        finally:
            self.held_alone_s += time.monotonic() - taken

    def close(self) -> None:
        pass


def from_environment() -> "DeviceLock | NoLock":
    """The judge's lock: the file the harness named, or none."""
    path = os.environ.get(LOCK_VARIABLE)
    if not path:
        return NoLock()
    return DeviceLock(path, gather_s=float(os.environ.get(GATHER_VARIABLE) or 0.0))
