"""The ``command`` method: an external agent program per operator, in a fresh work folder.

Any program that can run without a terminal fits: a coding agent in non-interactive mode
(``claude -p ... --output-format stream-json``, ``codex exec``, ...) or a plain script. For each
operator and sample kgb makes a new folder, writes the task into it, runs the program there
(stdin closed, stdout and stderr captured, the harness environment plus ``KGB_OP``,
``KGB_BACKEND``, ``KGB_WORKDIR`` and ``KGB_SAMPLE``) and takes the ``kernel.py`` it leaves. The
folder holds:

- ``TASK.md``: the same prompt the ``llm`` method sends, plus how to work in the folder;
- ``spec.json``: ``OperatorSpec.describe()`` (held-out cases are counted, never described), the
  backend's name and its quirks;
- ``reference.py``: the PyTorch reference's source, or its description where the source would
  only show a factory;
- ``eval.sh``: runs ``kgb eval kernel.py --op <op> --backend <backend> --json`` (extra flags
  pass through, e.g. ``./eval.sh --no-timing``), so the agent can check itself with the
  harness's own evaluator. The verdict that counts is still the one the sweep computes after
  the program exits.

Token usage is read, in this order, from:

1. ``usage.json`` written by the program into its folder::

       {"prompt_tokens": 1234, "completion_tokens": 567, "cost_usd": 0.0421}

   ``cost_usd`` is optional; the token counts are non-negative integers.
2. the program's stdout read as JSON lines in Claude Code's ``--output-format stream-json``
   style: a final ``{"type": "result", "usage": {...}, "total_cost_usd": x}`` line is the total
   and is used alone; without one, the ``usage`` of every other line (top level, or under
   ``message`` as Claude Code writes assistant turns; one per message id, since a message split
   over several lines repeats its usage) is summed. ``input_tokens``,
   ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` count as prompt tokens,
   ``output_tokens`` as completion tokens.
3. neither: the tokens are unknown (NULL in the store, ``"tokens": "unknown"`` in the
   generation record), never guessed.

Without a reported cost, ``price_input_per_mtok`` / ``price_output_per_mtok`` turn known tokens
into one; with neither, the cost is unknown too.

The program runs in its own session; at its timeout its whole process group gets SIGTERM, then
SIGKILL, and anything it left running when it exited is killed as well. A program that fails
(timeout, non-zero exit with no ``kernel.py``) raises, which the sweep records as
``no_candidate`` with the reason. With ``samples > 1`` a failed sample is left out (a resumed
sweep retries it) unless every sample failed.

Not isolated: the program runs with the harness user's rights, environment and network, like
any agent the user would run by hand.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate
from kgb_core.errors import UserError
from kgb_core.methods import GenerationContext, Method
from kgb_core.operators import OperatorSpec
from kgb_methods.prompts import reference_source, render_prompt

DEFAULTS: dict[str, Any] = {
    "command": None,
    "timeout_s": 1800.0,
    "samples": 1,
    "keep_workdirs": False,
    "workdir_root": None,
    "price_input_per_mtok": None,
    "price_output_per_mtok": None,
}
KERNEL_FILE = "kernel.py"
USAGE_FILE = "usage.json"
LOG_TAIL_CHARS = 4000      # of stdout and of stderr, kept with the candidate
MESSAGE_TAIL_CHARS = 600   # of stderr, in a failure's one-line message
TERM_GRACE_S = 2.0         # between SIGTERM and SIGKILL at a timeout
POLL_S = 0.05

AGENT_SECTION = """
## Working in this folder
You run without a terminal, in a folder made for this operator alone. Instead of answering with
a code block, write the complete file to `{kernel}` in this folder: when you exit, the harness
takes that file and nothing else, and evaluates it itself (on more cases than you are shown).

- `TASK.md`: this text.
- `spec.json`: the operator as data: signature, dtypes, the shown cases and their parameters,
  tolerances, the backend `{backend}` and its quirks.
- `reference.py`: the PyTorch reference `kernel` must match.
- `eval.sh`: checks `{kernel}` with the harness's own evaluator and prints the result as JSON
  (exit status 0 on a pass); flags pass through to `kgb eval`, e.g. `./eval.sh --no-timing`.

You may also write `{usage}` to report what you spent:
`{{"prompt_tokens": 1234, "completion_tokens": 567, "cost_usd": 0.0421}}` (cost optional).
Time limit: {timeout} s, then the program is killed.
"""


class AgentFailed(RuntimeError):
    """The program gave no kernel: the sweep records the message as ``no_candidate``."""


@dataclass
class Usage:
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    source: str  # "usage.json" | "stream-json" | "unknown"
    problem: str | None = None


@dataclass
class Finished:
    exit_status: int
    stdout: str
    stderr: str
    seconds: float


# -- options ---------------------------------------------------------------------------------

def _number(options: Mapping[str, Any], key: str, *, optional: bool = False) -> float | None:
    value = options[key]
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UserError(f"method command: {key} must be a non-negative number, got {value!r}")
    return float(value)


def _program(argv: list[str]) -> list[str]:
    """The argv with its program found now: a typo should fail before the sweep, not per op.

    A program given as a path is made absolute, since it runs with the work folder as cwd.
    """
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser().resolve()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UserError(f"method command: program {program!r} is not an executable file")
        return [str(path), *argv[1:]]
    if shutil.which(program) is None:
        raise UserError(f"method command: program {program!r} is not on PATH")
    return list(argv)


def _command(value: Any) -> list[str]:
    if value is None:
        raise UserError("method command needs its command: [method] command = [\"my-agent\", "
                        "\"--flag\"] (or a string) in the run config")
    if isinstance(value, str):
        argv = shlex.split(value)
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        argv = list(value)
    else:
        raise UserError("method command: command must be a list of strings or a string")
    if not argv:
        raise UserError("method command: command is empty")
    return _program(argv)


def parse_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults filled in and every value checked, each problem one line."""
    options = {**DEFAULTS, **given}
    options["command"] = _command(options["command"])
    timeout = _number(options, "timeout_s")
    if not timeout:
        raise UserError("method command: timeout_s must be positive")
    options["timeout_s"] = timeout
    samples = options["samples"]
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise UserError(f"method command: samples must be an integer of at least 1, "
                        f"got {samples!r}")
    if not isinstance(options["keep_workdirs"], bool):
        raise UserError("method command: keep_workdirs must be true or false")
    root = options["workdir_root"]
    if root is not None and not isinstance(root, str):
        raise UserError("method command: workdir_root must be a string (a folder)")
    for key in ("price_input_per_mtok", "price_output_per_mtok"):
        options[key] = _number(options, key, optional=True)
    return options


# -- the work folder -------------------------------------------------------------------------

def _reference_file(op: OperatorSpec) -> str:
    source = reference_source(op)
    if source is not None:
        return (f"# The PyTorch reference for {op.id}: kernel.py must return what it returns.\n"
                f"import torch\n\n{source}\n")
    name = getattr(op.reference, "__name__", "")
    lines = [f"The PyTorch reference for {op.id} is {name or 'made by a factory'}; its source "
             f"is not shown, since it would only show the factory.", "",
             *op.description.splitlines(), "", f"Signature: {op.signature}"]
    return "\n".join(f"# {line}".rstrip() for line in lines) + "\n"


def _eval_script(op: OperatorSpec, backend_name: str, emulates: str = "") -> str:
    command = [sys.executable, "-c", "from kgb_core.cli import main; main()", "eval",
               KERNEL_FILE, "--op", op.id, "--backend", backend_name, "--json",
               *(["--emulate", emulates] if emulates else [])]
    return ("#!/bin/sh\n"
            "# Checks kernel.py with the harness's own evaluator; extra flags go to `kgb eval`.\n"
            'cd "$(dirname "$0")" || exit 2\n'
            f'exec {shlex.join(command)} "$@"\n')


def write_workdir(folder: Path, op: OperatorSpec, quirks: Quirks, backend_name: str,
                  timeout_s: float, emulates: str = "") -> None:
    """Everything the program is told, as files: it may read them in any order, or not at all."""
    from kgb_core.backends import backend_label

    label = backend_label(backend_name, emulates)
    task = render_prompt(op, label, quirks) + AGENT_SECTION.format(
        kernel=KERNEL_FILE, usage=USAGE_FILE, backend=label, timeout=f"{timeout_s:g}")
    (folder / "TASK.md").write_text(task)
    spec = {**op.describe(), "backend": backend_name, "emulates": emulates,
            "quirks": quirks.to_dict()}
    (folder / "spec.json").write_text(json.dumps(spec, indent=2, default=str) + "\n")
    (folder / "reference.py").write_text(_reference_file(op))
    script = folder / "eval.sh"
    script.write_text(_eval_script(op, backend_name, emulates))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


# -- running the program ---------------------------------------------------------------------

def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _exited(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Wait for the program to exit WITHOUT reaping it, so its pid (the id of its process
    group) cannot be reused before the group is killed."""
    deadline = time.monotonic() + timeout_s
    while True:
        if hasattr(os, "waitid"):
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        elif proc.poll() is not None:  # pragma: no cover - platforms without waitid
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def _read(handle: Any) -> str:
    handle.seek(0)
    return handle.read().decode(errors="replace")


def run_program(argv: list[str], folder: Path, env: Mapping[str, str],
                timeout_s: float) -> Finished:
    """Run to completion or to the timeout; its output goes to files, so children that keep a
    pipe open can not hold the harness."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            proc = subprocess.Popen(argv, cwd=folder, env=dict(env), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
        except OSError as error:
            raise AgentFailed(f"could not start {argv[0]!r}: {error}") from None
        finished = _exited(proc, timeout_s)
        if not finished:
            _signal_group(proc.pid, signal.SIGTERM)
            _exited(proc, TERM_GRACE_S)
        _signal_group(proc.pid, signal.SIGKILL)  # the program, or what it left running
        status = proc.wait()
        seconds = time.monotonic() - started
        if not finished:
            stderr = _read(err).strip()
            detail = f"; stderr tail: {_tail(stderr, MESSAGE_TAIL_CHARS)}" if stderr else ""
            raise AgentFailed(f"{Path(argv[0]).name} timed out after {timeout_s:g} s and was "
                              f"killed (its whole process group){detail}")
        return Finished(status, _read(out), _read(err), seconds)


def _describe_status(status: int) -> str:
    if status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"


# -- token usage -----------------------------------------------------------------------------

def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tokens(usage: Mapping[str, Any]) -> tuple[int, int]:
    prompt = sum(_count(usage.get(key)) for key in
                 ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return prompt, _count(usage.get("output_tokens"))


def _usage_file(path: Path) -> Usage:
    """``usage.json``; a malformed one is reported, and the tokens are then unknown."""
    try:
        data = json.loads(path.read_text())
        prompt, completion = data["prompt_tokens"], data["completion_tokens"]
        cost = data.get("cost_usd")
        for value in (prompt, completion):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("token counts must be non-negative integers")
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float))):
            raise ValueError("cost_usd must be a number")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        return Usage(None, None, None, "unknown",
                     problem=f"{USAGE_FILE} ignored ({type(error).__name__}: {error})")
    return Usage(prompt, completion, None if cost is None else float(cost), "usage.json")


def parse_stream_json(stdout: str) -> Usage | None:
    """Usage from Claude-Code-style JSON lines; None when stdout reports none."""
    result: tuple[Mapping[str, Any], Any] | None = None
    per_message: dict[str, Mapping[str, Any]] = {}
    unnamed: list[Mapping[str, Any]] = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        usage = record.get("usage", message.get("usage"))
        if not isinstance(usage, dict):
            continue
        if record.get("type") == "result":
            result = (usage, record.get("total_cost_usd"))
        elif isinstance(message.get("id"), str):
            per_message[message["id"]] = usage
        else:
            unnamed.append(usage)
    if result is not None:
        prompt, completion = _tokens(result[0])
        cost = result[1]
        known = isinstance(cost, (int, float)) and not isinstance(cost, bool)
        return Usage(prompt, completion, float(cost) if known else None, "stream-json")
    records = [*per_message.values(), *unnamed]
    if not records:
        return None
    counts = [_tokens(usage) for usage in records]
    return Usage(sum(p for p, _ in counts), sum(c for _, c in counts), None, "stream-json")


def read_usage(folder: Path, stdout: str) -> Usage:
    path = folder / USAGE_FILE
    if path.is_file():
        return _usage_file(path)
    return parse_stream_json(stdout) or Usage(None, None, None, "unknown")


def _priced(usage: Usage, options: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """The reported cost, else one from the configured prices, else unknown."""
    if usage.cost_usd is not None:
        return usage.cost_usd, "reported"
    prices = (options["price_input_per_mtok"], options["price_output_per_mtok"])
    if usage.prompt_tokens is None or prices == (None, None):
        return None, None
    cost = (usage.prompt_tokens * (prices[0] or 0.0)
            + (usage.completion_tokens or 0) * (prices[1] or 0.0)) / 1e6
    return cost, "prices"


# -- the method ------------------------------------------------------------------------------

class CommandMethod(Method):
    name = "command"
    description = ("an external agent program (any CLI) run once per operator in a fresh work "
                   "folder; its kernel.py is the candidate")

    def option_keys(self) -> frozenset[str]:
        return frozenset(DEFAULTS)

    def samples(self, options: Mapping[str, Any]) -> int:
        return int(parse_options(options)["samples"])

    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        options = parse_options(ctx.options)
        candidates, failures = [], []
        for sample in range(options["samples"]):
            try:
                candidates.append(self._one(op, quirks, ctx, options, sample))
            except AgentFailed as error:
                failures.append(f"sample {sample}: {error}" if options["samples"] > 1
                                else str(error))
                ctx.log(f"{op.id} {failures[-1]}")
        if not candidates:
            raise AgentFailed("; ".join(failures))
        return candidates

    def _workdir(self, op: OperatorSpec, options: Mapping[str, Any], sample: int) -> Path:
        root = options["workdir_root"]
        if root is not None:
            Path(root).mkdir(parents=True, exist_ok=True)
        prefix = f"{op.id}.sample{sample}." if root else f"kgb-{op.id}.sample{sample}."
        return Path(tempfile.mkdtemp(prefix=prefix, dir=root)).resolve()

    def _one(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext,
             options: Mapping[str, Any], sample: int) -> Candidate:
        folder = self._workdir(op, options, sample)
        try:
            write_workdir(folder, op, quirks, ctx.backend_name, options["timeout_s"],
                          ctx.emulates)
            env = {**os.environ, "KGB_OP": op.id, "KGB_BACKEND": ctx.backend_name,
                   "KGB_EMULATES": ctx.emulates,
                   "KGB_WORKDIR": str(folder), "KGB_SAMPLE": str(sample)}
            finished = run_program(options["command"], folder, env, options["timeout_s"])
            return self._candidate(op, folder, finished, options, sample)
        finally:
            if not options["keep_workdirs"]:
                shutil.rmtree(folder, ignore_errors=True)

    def _candidate(self, op: OperatorSpec, folder: Path, finished: Finished,
                   options: Mapping[str, Any], sample: int) -> Candidate:
        program = Path(options["command"][0]).name
        status = _describe_status(finished.exit_status)
        kernel = folder / KERNEL_FILE
        if not kernel.is_file():
            stderr = finished.stderr.strip()
            detail = f"; stderr tail: {_tail(stderr, MESSAGE_TAIL_CHARS)}" if stderr else ""
            raise AgentFailed(f"{program} ended with {status} and wrote no {KERNEL_FILE}{detail}")
        usage = read_usage(folder, finished.stdout)
        cost, cost_source = _priced(usage, options)
        log = [f"{program} ended with {status} after {finished.seconds:.1f} s",
               f"stdout (tail):\n{_tail(finished.stdout, LOG_TAIL_CHARS)}",
               f"stderr (tail):\n{_tail(finished.stderr, LOG_TAIL_CHARS)}"]
        if usage.problem:
            log.append(usage.problem)
        generation: dict[str, Any] = {
            "workdir": str(folder), "kept": bool(options["keep_workdirs"]),
            "command": list(options["command"]), "exit_status": finished.exit_status,
            "tokens_source": usage.source, "cost_source": cost_source,
            "seconds": round(finished.seconds, 3), "log": log}
        if usage.source == "unknown":
            generation["tokens"] = "unknown"
        if usage.problem:
            generation["usage_problem"] = usage.problem
        return Candidate(source=kernel.read_text(errors="replace"), sample=sample,
                         prompt_tokens=usage.prompt_tokens,
                         completion_tokens=usage.completion_tokens, cost_usd=cost,
                         origin=f"command:{program}", log=log, generation=generation)


@hookimpl
def kgb_register_methods(register):
    register(CommandMethod())
