"""The judge's side of runners: the sandboxed template process, and one channel per runner.

``RunnerTemplate`` starts the template (``kgb_core.evaluation.template``) in the sandbox and
keeps its control socket. ``RunnerTemplate.spawn`` makes a socket pair and the runner's two
arenas (``kgb_core.evaluation.arena``), hands one end and the arenas to the template
(``SCM_RIGHTS``), which forks the runner with them as its only channel; the judge keeps the
other end and its own mappings of the arenas in a ``RunnerChannel``.

The channel is where forgery would happen, so it is strict: each request carries a sequence
number and the candidate's nonce (random, made by the judge), and exactly one reply per request
is accepted, carrying both. A reply to nothing, a second reply, a line that is not JSON or one
longer than ``MAX_REPLY_BYTES`` is ``ChannelViolation`` (verdict ``tampering``); a runner that
dies, or that exits other than cleanly after ``exit``, is ``RunnerDied`` (``crashed``, or
``oom`` when the template killed it for host memory); no reply in time is ``RunnerTimedOut``.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgb_core.evaluation.limits import MAX_FILE_BYTES, describe_exit, kill_group
from kgb_core.evaluation.sandbox import SandboxTool, command

if TYPE_CHECKING:  # arena.py imports torch: a judge starts its template before that
    from kgb_core.evaluation.arena import Arenas

MAX_REPLY_BYTES = 16 << 20
TEMPLATE_MODULE = "kgb_core.evaluation.template"
TEMPLATE_TMP = ".template"
WORK_PREFIX = "kgb-runners-"  # then the judge's pid and a random part
ORPHAN_AGE_S = 3600.0


def runners_root() -> str | None:
    """Where the runners' folders go: ``KGB_RUNNER_DIR``, else (None) the system's temporary
    folder. A call's tensors cross in the runner's arenas, not in this folder: it holds the
    candidate's file, its log and its Triton cache."""
    return os.environ.get("KGB_RUNNER_DIR", "").strip() or None


def remove_orphans(root: str | None) -> None:
    """Remove the work folders of judges that are gone (killed before they could clean up,
    leaving a killed sweep's exchange files, up to gigabytes, behind). A folder is an orphan
    when the judge whose pid its name carries no longer runs and nothing in it changed for
    ``ORPHAN_AGE_S``: a judge of another PID namespace sharing this folder has a pid that
    means nothing here, but a live one touches its folder at every candidate."""
    root = root or tempfile.gettempdir()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        pid = entry.name.removeprefix(WORK_PREFIX).partition("-")[0]
        if not entry.name.startswith(WORK_PREFIX) or not pid.isdigit():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != os.getuid() or time.time() - info.st_mtime < ORPHAN_AGE_S:
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            remove_tree(entry.path)
        except OSError:  # alive under another user, or not ours to look at
            continue


class ChannelViolation(Exception):
    """The runner's channel carried something the judge did not ask for."""


class RunnerDied(Exception):
    def __init__(self, message: str, returncode: int | None = None,
                 killed_for_memory: int = 0) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.killed_for_memory = killed_for_memory


class RunnerTimedOut(Exception):
    pass


class TemplateFailed(Exception):
    """The template process could not start or stopped answering: a harness fault."""


def _exit_text(returncode: int | None) -> str:
    return "ended" if returncode is None else describe_exit(returncode)


class _Lines:
    """JSON lines from a socket, with a size limit on each."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.closed = False

    def pending(self) -> bool:
        return b"\n" in self.buffer

    def fill(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            self.closed = True
        self.buffer += chunk
        if len(self.buffer) > MAX_REPLY_BYTES and b"\n" not in self.buffer:
            raise ChannelViolation(f"a message longer than {MAX_REPLY_BYTES} bytes")

    def pop(self) -> dict[str, Any]:
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > MAX_REPLY_BYTES:
            raise ChannelViolation(f"a message longer than {MAX_REPLY_BYTES} bytes")
        try:
            message = json.loads(line)
        except ValueError:
            raise ChannelViolation(f"a line that is not JSON: {line[:80]!r}") from None
        if not isinstance(message, dict):
            raise ChannelViolation(f"a message that is not an object: {line[:80]!r}")
        return message


@dataclass
class Exit:
    returncode: int | None
    killed_for_memory: int = 0
    strays: int = 0


class RunnerTemplate:
    """The template process in its sandbox, serving one judge; one runner alive at a time."""

    def __init__(self, tool: SandboxTool, config: dict[str, Any], env: dict[str, str],
                 *, devices: list[str], masked: list[str], startup_timeout_s: float,
                 seed_cache: str | None = None, wait: bool = True) -> None:
        self.tool = tool
        self.seed_cache = seed_cache
        # The runners' folders, and nothing else: what a runner leaves here beside its own
        # folder it wrote outside its scratch (``stray_files``). The template's log lies apart.
        root = runners_root()
        remove_orphans(root)
        self.work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-", dir=root))
        os.chmod(self.work, 0o700)
        # The template's own temporary folder (torch makes a cache folder at import); what is
        # in it once the template is ready must be all there ever is.
        self.template_tmp = self.work / TEMPLATE_TMP
        self.template_tmp.mkdir()
        descriptor, log_name = tempfile.mkstemp(prefix="kgb-template-", suffix=".log")
        os.close(descriptor)
        self.log_path = Path(log_name)
        control, theirs = socket.socketpair()
        self.control = control
        self._lines = _Lines(control)
        self.exits: list[Exit] = []
        template_env = {**env, "TMPDIR": str(self.template_tmp),
                        # Whether a GPU is there, asked through NVML: the CUDA runtime's own
                        # count would make every forked runner unable to initialise CUDA.
                        "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
                        "TORCHINDUCTOR_CACHE_DIR": str(self.template_tmp / "inductor"),
                        "KGB_TEMPLATE_FD": str(theirs.fileno()),
                        "KGB_TEMPLATE_CONFIG": json.dumps({**config,
                                                           "sandboxed": tool.sandboxed,
                                                           "work": str(self.work)})}
        program = [sys.executable, "-P", "-m", TEMPLATE_MODULE]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command(tool, program, writable=[str(self.work)], devices=devices,
                        masked=masked),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(theirs.fileno(),), env=template_env, cwd=str(self.work),
                start_new_session=True)
        theirs.close()
        self._startup_timeout_s = startup_timeout_s
        self._ready = False
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait for the template's ``ready`` (it imports torch meanwhile: seconds)."""
        if self._ready:
            return
        try:
            message = self._next(self._startup_timeout_s)
        except (RunnerTimedOut, TemplateFailed, ChannelViolation) as error:
            self.close()
            raise TemplateFailed(f"the runner template did not start ({error}); its log ends "
                                 f"with: {self.log_tail()[-1500:]}") from None
        if message.get("type") != "ready":
            self.close()
            raise TemplateFailed(f"the runner template did not start: "
                                 f"{message.get('error', message)}\n"
                                 f"{message.get('traceback', '')[-1500:]}")
        self._template_files = _listing(self.template_tmp)
        self._ready = True

    def log_tail(self, limit: int = 4000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", errors="replace")
        except OSError:
            return ""

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _next(self, timeout_s: float) -> dict[str, Any]:
        """The template's next message (it is harness code: trusted, but it may die)."""
        deadline = time.monotonic() + timeout_s
        while not self._lines.pending():
            if self._lines.closed:
                raise TemplateFailed(f"the runner template {_exit_text(self.process.poll())}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerTimedOut()
            ready, _, _ = select.select([self.control], [], [], min(remaining, 1.0))
            if ready:
                self._lines.fill()
        return self._lines.pop()

    def _take_exits(self, timeout_s: float = 0.0) -> None:
        """Read whatever the template has said; only ``exited`` messages come unasked."""
        deadline = time.monotonic() + timeout_s
        while True:
            ready, _, _ = select.select([self.control], [], [],
                                        max(0.0, deadline - time.monotonic()))
            if not ready:
                return
            self._lines.fill()
            if self._lines.closed and not self._lines.pending():
                raise TemplateFailed(f"the runner template {_exit_text(self.process.poll())}")
            while self._lines.pending():
                message = self._lines.pop()
                if message.get("type") == "exited":
                    self.exits.append(Exit(message.get("returncode"),
                                           int(message.get("killed_for_memory") or 0),
                                           int(message.get("strays") or 0)))
            if self.exits:
                return

    def spawn(self, startup_timeout_s: float) -> "RunnerChannel":
        self.wait_ready()
        folder = Path(tempfile.mkdtemp(prefix="runner-", dir=self.work))
        if self.seed_cache:  # the runner's own copy: what it writes there reaches no other
            shutil.copytree(self.seed_cache, folder / "triton-cache", symlinks=True)
        from kgb_core.evaluation.arena import Arenas

        ours, theirs = socket.socketpair()
        arenas = Arenas.create(MAX_FILE_BYTES)  # this runner's alone
        self.exits.clear()
        message = {"type": "spawn", "scratch": str(folder), "io": str(folder)}
        try:
            try:
                socket.send_fds(self.control, [(json.dumps(message) + "\n").encode()],
                                [theirs.fileno(), *arenas.fds()])
            except OSError as error:
                raise TemplateFailed(f"the runner template is gone ({error})") from None
            finally:
                theirs.close()
            reply = self._next(startup_timeout_s)
            while reply.get("type") == "exited":  # a previous runner's late news
                reply = self._next(startup_timeout_s)
            if reply.get("type") != "spawned":
                raise TemplateFailed(f"the runner template could not fork: {reply}")
        except BaseException:
            # No runner to hand them to (a timeout included): the judge keeps no descriptor.
            arenas.close()
            ours.close()
            raise
        return RunnerChannel(self, ours, folder, int(reply["pid"]), arenas)

    def kill_runner(self) -> None:
        try:
            self.control.sendall(b'{"type": "kill"}\n')
        except OSError:
            pass

    def wait_exit(self, timeout_s: float) -> Exit:
        deadline = time.monotonic() + timeout_s
        while not self.exits:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerTimedOut()
            self._take_exits(remaining)
        return self.exits[0]

    def close(self) -> None:
        kill_group(self.process)
        try:
            self.control.close()
        except OSError:
            pass
        remove_tree(str(self.work))
        self.log_path.unlink(missing_ok=True)

    def stray_files(self, own: Path) -> list[str]:
        """What a runner wrote outside its own folder: entries of the work folder beside it,
        and files added to the template's; each removed as found. Its own folder must still
        be the folder the judge made, not a link put in its place."""
        found = []
        for entry in os.scandir(self.work):
            if entry.name == TEMPLATE_TMP:
                continue
            if entry.path == str(own) and entry.is_dir(follow_symlinks=False):
                continue
            found.append(entry.name)
            remove_tree(entry.path)
        for path in _listing(self.template_tmp) - self._template_files:
            found.append(f"{TEMPLATE_TMP}/{path}")
            remove_tree(str(self.template_tmp / path))
        return found


def _listing(folder: Path) -> set[str]:
    """Every path under ``folder``, relative, links not followed."""
    found: set[str] = set()
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            found.add(os.path.relpath(os.path.join(root, name), folder))
    return found


def remove_tree(path: str) -> None:
    """Remove a file or a folder of any depth, links not followed. ``rm`` rather than
    ``shutil.rmtree``, which recurses once per level in Python (a runner can nest thousands)."""
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", path], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class RunnerChannel:
    """The judge's end of one runner: requests out, exactly one checked reply back each."""

    def __init__(self, template: RunnerTemplate, sock: socket.socket, folder: Path,
                 pid: int, arenas: Arenas) -> None:
        self.template = template
        self.sock = sock
        self.folder = folder
        self.pid = pid
        # The shared memory a call's tensors cross in, both ways (kgb_core.evaluation.arena).
        self.arenas = arenas
        # The judge writes the candidate's file and reads the runner's log through this
        # descriptor of the folder it made: a runner that swaps its folder for a link cannot
        # send the judge's writes elsewhere.
        self.folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self.nonce = secrets.token_hex(16)
        self._seq = 0
        self._lines = _Lines(sock)
        self.ready: dict[str, Any] = {}
        self.exit_reply: dict[str, Any] = {}

    def reported_device_peak(self) -> int | None:
        """The device memory the runner said it held at most (``finish``'s answer): a count
        a candidate could have changed, for scheduling, never for a verdict."""
        value = self.exit_reply.get("device_peak_bytes")
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
            else None

    def log_tail(self, limit: int = 4000) -> str:
        try:
            fd = os.open("runner.log", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                         dir_fd=self.folder_fd)
        except OSError:
            return ""
        try:
            size = os.fstat(fd).st_size
            os.lseek(fd, max(0, size - limit), os.SEEK_SET)
            data = os.read(fd, limit)
        except OSError:
            data = b""
        finally:
            os.close(fd)
        return data.decode("utf-8", errors="replace")

    def write_file(self, name: str, data: bytes) -> None:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600,
                     dir_fd=self.folder_fd)
        with os.fdopen(fd, "wb") as out:
            out.write(data)

    def _died(self) -> RunnerDied:
        try:
            ended = self.template.wait_exit(10.0)
        except (RunnerTimedOut, TemplateFailed):
            return RunnerDied("the runner's channel closed", None)
        return RunnerDied(f"the runner process {_exit_text(ended.returncode)}",
                          ended.returncode, ended.killed_for_memory)

    def _receive(self, deadline: float) -> dict[str, Any]:
        while not self._lines.pending():
            if self._lines.closed:
                raise self._died()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunnerTimedOut()
            ready, _, _ = select.select([self.sock, self.template.control], [], [],
                                        min(remaining, 1.0))
            if self.template.control in ready:
                self.template._take_exits()
                if self.template.exits and not self._readable():
                    raise self._died()
            if self.sock in ready:
                self._lines.fill()
        return self._lines.pop()

    def _readable(self) -> bool:
        ready, _, _ = select.select([self.sock], [], [], 0)
        return bool(ready) or self._lines.pending()

    def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        message = self._receive(time.monotonic() + timeout_s)
        if message.get("type") == "startup_failed":
            raise TemplateFailed(f"the runner could not set up: {message.get('error')}\n"
                                 f"{str(message.get('traceback', ''))[-1500:]}")
        if message.get("type") != "ready":
            raise ChannelViolation(f"the runner's first message was not 'ready': "
                                   f"{str(message)[:120]}")
        self.ready = message
        return message

    def request(self, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Send one request; the one reply to it, checked (its seq and nonce)."""
        self._seq += 1
        seq = self._seq
        if self._lines.pending() or (self._readable() and self._peek_bytes()):
            raise ChannelViolation("the runner sent a message nobody asked for")
        try:
            self.sock.sendall((json.dumps({**payload, "seq": seq, "nonce": self.nonce})
                               + "\n").encode())
        except OSError:
            raise self._died() from None
        reply = self._receive(deadline)
        if reply.get("seq") != seq or reply.get("nonce") != self.nonce:
            raise ChannelViolation(f"a reply that does not answer request {seq} of this "
                                   f"candidate: {str(reply)[:120]}")
        return reply

    def _peek_bytes(self) -> bool:
        try:
            return bool(self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except BlockingIOError:
            return False
        except OSError:
            return False

    def finish(self, timeout_s: float = 10.0) -> Exit:
        """Ask the runner to exit; it must answer, send nothing more, and exit with 0. Its
        answer is kept (``exit_reply``): the device memory it says it held."""
        self.exit_reply = self.request({"op": "exit"}, time.monotonic() + timeout_s)
        ended = self.template.wait_exit(timeout_s)
        while self._readable():
            self._lines.fill()
            if self._lines.closed and not self._lines.pending():
                break
            if self._lines.pending() or self._lines.buffer:
                raise ChannelViolation("the runner sent more after its last reply")
        if ended.returncode != 0 or ended.killed_for_memory:
            raise RunnerDied(f"the runner answered, then {_exit_text(ended.returncode)}",
                             ended.returncode, ended.killed_for_memory)
        return ended

    def close(self) -> Exit | None:
        """End the runner, whatever state it is in; what its end was, if the template said.
        Its folder stays until ``remove_folder``."""
        for closer in (self.sock.close, lambda: os.close(self.folder_fd), self.arenas.close):
            try:
                closer()
            except OSError:
                pass
        ended = None
        if self.template.alive:
            if not self.template.exits:
                self.template.kill_runner()
            try:
                ended = self.template.wait_exit(10.0)
            except (RunnerTimedOut, TemplateFailed):
                ended = None
        return ended

    def remove_folder(self) -> None:
        """After ``close`` and the judge's look at the work folder (``stray_files``)."""
        remove_tree(str(self.folder))
