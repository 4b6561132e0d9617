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

Token usage is read from a ``usage.json`` the program writes, else from its stdout in its CLI's
JSON format (``output_format``: Claude Code's stream-json, Codex's ``exec --json``, OpenCode's
``run --format json``, or ``auto``), else it is unknown, never guessed
(``kgb_methods/agent_usage.py`` has the fields read).

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
from typing import Any, Callable, Mapping

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate
from kgb_core.errors import UserError
from kgb_core.labels import MAX_LABEL_CHARS, clean_label, default_label
from kgb_core.methods import (GenerationContext, Method, MethodOption, check_options,
                              option_defaults)
from kgb_core.operators import OperatorSpec
from kgb_methods.agent_presets import KICKOFF, apply_preset
from kgb_methods.agent_usage import OUTPUT_FORMATS, USAGE_FILE, Usage, read_usage
from kgb_methods.prompts import reference_source, render_prompt
from kgb_methods.scaffolds import TASK_FILE, lay_out, scaffold_options

OPTIONS = (
    MethodOption("command", None, "the program to run, a list of arguments or one string",
                 (list, str)),
    # A coding-agent CLI ready to run (kgb_methods/agent_presets.py): fills command and
    # output_format; "model" adds the CLI's model flag.
    MethodOption("preset", None, "a coding-agent CLI ready to run: claude-code, codex, "
                 "opencode", (str,)),
    MethodOption("model", None, "the model the preset's CLI is told to use", (str,)),
    MethodOption("output_format", "auto", "how its token usage is read from its output"),
    MethodOption("timeout_s", 1800.0, "wall-clock seconds per operator (its process group is "
                 "killed then)"),
    # The kernel.py it left is still evaluated.
    MethodOption("max_tokens_per_op", None, "stop the program once its reported tokens pass "
                 "this many (unset: no cap)", (int,)),
    MethodOption("samples", 1, "runs per operator (pass@k)"),
    MethodOption("keep_workdirs", False, "keep the work folders: true, false, or \"failed\" "
                 "(those whose program failed or whose kernel did not pass)", (bool, str)),
    MethodOption("workdir_root", None, "where the work folders go (a temporary folder where "
                 "unset)", (str,)),
    MethodOption("price_input_per_mtok", None, "dollars per million prompt tokens, where the "
                 "CLI reports no cost", (float,)),
    MethodOption("price_output_per_mtok", None, "dollars per million answer tokens", (float,)),
    # A kernel-optimisation scaffold laid out around the agent (kgb_methods/scaffolds.py); the
    # preset (claude-code unless given) drives it with the scaffold's kickoff prompt.
    MethodOption("scaffold", None, "a kernel-optimisation scaffold around the agent: "
                 "autokernel, ako4all, cuda-optimized-skill", (str,)),
    MethodOption("scaffold_dir", None, "the user's checkout of the scaffold", (str,)),
    MethodOption("iterations", 5, "the scaffold's optimisation rounds, where its kickoff names "
                 "them"),
    MethodOption("baseline", "starter", "the kernel the scaffold starts from: starter (a stub) "
                 "or reference (kgb's)"),
)
DEFAULTS: dict[str, Any] = option_defaults(OPTIONS)
EVAL_CALLS_FILE = ".kgb-eval-calls"  # eval.sh adds a line per run: the agent's evaluator calls
STOP_CHECK_S = 0.5                   # how often a running program's token count is read
KERNEL_FILE = "kernel.py"
LOG_TAIL_CHARS = 4000      # of stdout and of stderr, kept with the candidate
MESSAGE_TAIL_CHARS = 600   # of stderr, in a failure's one-line message
TERM_GRACE_S = 2.0         # between SIGTERM and SIGKILL at a timeout
POLL_S = 0.05

AGENT_SECTION = """
## Working in this folder
You run without a terminal, in a folder made for this operator alone. Instead of answering with
a code block, write the complete file to `{kernel}` in this folder: when you exit, the harness
takes that file and nothing else, and evaluates it itself (on more cases than you are shown).

- `{task}`: this text.
- `spec.json`: the operator as data: signature, dtypes, the shown cases and their parameters,
  tolerances, the backend `{backend}` and its quirks.
- `{reference}`: the PyTorch reference `kernel` must match.
- `eval.sh`: checks `{kernel}` with the harness's own evaluator and prints the result as JSON
  (exit status 0 on a pass); flags pass through to `kgb eval`, e.g. `./eval.sh --no-timing`.

You may also write `{usage}` to report what you spent:
`{{"prompt_tokens": 1234, "completion_tokens": 567, "cost_usd": 0.0421}}` (cost optional).
Time limit: {timeout} s, then the program is killed.
"""


class AgentFailed(RuntimeError):
    """The program gave no kernel: the sweep records the message as ``no_candidate``."""


@dataclass
class Finished:
    exit_status: int
    stdout: str
    stderr: str
    seconds: float
    # Why kgb stopped the program ("wall-clock cap (1800 s)", "token cap (200000)"), or None
    # when it exited by itself.
    stopped: str | None = None


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
    """Defaults filled in (a preset's first) and every value checked, each problem one line:
    the types by the core's check of the declared OPTIONS (as a sweep checks them before this
    runs), the ranges and words here."""
    check_options("command", OPTIONS, given)
    options = {**DEFAULTS, **given}
    if options["scaffold"] is not None and options["preset"] is None and \
            options["command"] is None:
        options["preset"] = "claude-code"  # what the scaffolds document
    options = apply_preset(options)
    options["scaffold_layout"] = scaffold_options(options)
    options["command"] = _command(options["command"])
    if options["output_format"] not in OUTPUT_FORMATS:
        raise UserError(f"method command: output_format must be one of "
                        f"{', '.join(OUTPUT_FORMATS)}, got {options['output_format']!r}")
    cap = options["max_tokens_per_op"]
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise UserError(f"method command: max_tokens_per_op must be a whole number of at "
                        f"least 1, got {cap!r}")
    timeout = _number(options, "timeout_s")
    if not timeout:
        raise UserError("method command: timeout_s must be positive")
    options["timeout_s"] = timeout
    samples = options["samples"]
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise UserError(f"method command: samples must be an integer of at least 1, "
                        f"got {samples!r}")
    if options["keep_workdirs"] not in (True, False, "failed"):
        raise UserError("method command: keep_workdirs must be true, false or \"failed\"")
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


def eval_command(op: OperatorSpec, backend_name: str, emulates: str = "",
                 kernel: str = KERNEL_FILE,
                 source_options: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """``kgb eval`` of ``kernel`` for this operator and backend, printing JSON; with the
    operator's source options, without which the operator there would be another one."""
    options = (source_options or {}).get(op.source, {})
    return [sys.executable, "-c", "from kgb_core.cli import main; main()", "eval",
            kernel, "--op", op.id, "--backend", backend_name, "--json",
            *(["--emulate", emulates] if emulates else []),
            *[part for key, value in sorted(options.items())
              for part in ("--source-opt", f"{op.source}.{key}={json.dumps(value)}")]]


def _eval_script(op: OperatorSpec, backend_name: str, emulates: str = "",
                 kernel: str = KERNEL_FILE,
                 source_options: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    command = eval_command(op, backend_name, emulates, kernel, source_options)
    return ("#!/bin/sh\n"
            f"# Checks {kernel} with the harness's own evaluator; extra flags go to `kgb eval`.\n"
            'cd "$(dirname "$0")" || exit 2\n'
            f"echo run >> {EVAL_CALLS_FILE}\n"
            f'exec {shlex.join(command)} "$@"\n')


def write_workdir(folder: Path, op: OperatorSpec, quirks: Quirks, backend_name: str,
                  timeout_s: float, emulates: str = "",
                  options: Mapping[str, Any] | None = None,
                  source_options: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Everything the program is told, as files: it may read them in any order, or not at all.
    With a scaffold (``options["scaffold_layout"]``) its workspace is laid out first and kgb's
    task text goes to ``KGB_TASK.md``, since a scaffold may have a TASK.md of its own."""
    from kgb_core.backends import backend_label

    scaffold = (options or {}).get("scaffold_layout")
    kernel = _kernel_file(options)
    task_file = TASK_FILE if scaffold else "TASK.md"
    label = backend_label(backend_name, emulates)
    task = render_prompt(op, label, quirks) + AGENT_SECTION.format(
        kernel=kernel, task=task_file, usage=USAGE_FILE, backend=label,
        reference=scaffold.reference_file if scaffold else "reference.py",
        timeout=f"{timeout_s:g}")
    reference = _reference_file(op)
    if scaffold:
        lay_out(scaffold, folder, op, options, task, reference,
                eval_command(op, backend_name, emulates, "KERNEL", source_options),
                EVAL_CALLS_FILE)
    (folder / task_file).write_text(task)
    spec = {**op.describe(), "backend": backend_name, "emulates": emulates,
            "quirks": quirks.to_dict()}
    (folder / "spec.json").write_text(json.dumps(spec, indent=2, default=str) + "\n")
    if not scaffold:
        (folder / "reference.py").write_text(reference)
    script = folder / "eval.sh"
    script.write_text(_eval_script(op, backend_name, emulates, kernel, source_options))
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
    """What a file the program writes to holds so far, read without moving the offset the
    program shares with it (pread): a seek here would make it write over its own output."""
    fd = handle.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")


def run_program(argv: list[str], folder: Path, env: Mapping[str, str], timeout_s: float,
                stop_check: Callable[[str], str | None] | None = None) -> Finished:
    """Run to completion, to the wall-clock cap, or until ``stop_check(stdout so far)`` names a
    reason to stop; its output goes to files, so children that keep a pipe open can not hold
    the harness. A stopped program gets SIGTERM, then SIGKILL, its whole process group."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            proc = subprocess.Popen(argv, cwd=folder, env=dict(env), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
        except OSError as error:
            raise AgentFailed(f"could not start {argv[0]!r}: {error}") from None
        deadline, stopped, checked = started + timeout_s, None, (-1, 0.0)
        while not _exited(proc, max(0.0, min(STOP_CHECK_S, deadline - time.monotonic()))):
            now = time.monotonic()
            if now >= deadline:
                stopped = f"wall-clock cap ({timeout_s:g} s)"
            elif stop_check is not None:
                # Read again when stdout grew, or every ten checks (usage.json may change):
                # a long run's output is not parsed twice a second for nothing.
                size = os.fstat(out.fileno()).st_size
                if size != checked[0] or now - checked[1] >= 10 * STOP_CHECK_S:
                    checked = (size, now)
                    stopped = stop_check(_read(out))
            if stopped:
                _signal_group(proc.pid, signal.SIGTERM)
                _exited(proc, TERM_GRACE_S)
                break
        _signal_group(proc.pid, signal.SIGKILL)  # the program, or what it left running
        status = proc.wait()
        return Finished(status, _read(out), _read(err), time.monotonic() - started, stopped)


def _describe_status(status: int) -> str:
    if status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"


# -- cost ------------------------------------------------------------------------------------

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
    options = OPTIONS

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
        keep = options["keep_workdirs"] is True
        try:
            write_workdir(folder, op, quirks, ctx.backend_name, options["timeout_s"],
                          ctx.emulates, options, ctx.source_options)
            env = {**os.environ, "KGB_OP": op.id, "KGB_BACKEND": ctx.backend_name,
                   "KGB_EMULATES": ctx.emulates,
                   "KGB_WORKDIR": str(folder), "KGB_SAMPLE": str(sample)}
            finished = run_program(_argv(op, options), folder, env, options["timeout_s"],
                                   stop_check=_token_cap(folder, options))
            candidate = self._candidate(op, folder, finished, options, sample)
            # "failed": kept until its kernel is seen to pass (evaluated, below)
            keep = keep or options["keep_workdirs"] == "failed"
            return candidate
        except AgentFailed:
            keep = keep or options["keep_workdirs"] == "failed"
            raise
        finally:
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)

    def evaluated(self, candidate: Candidate, result: Any, options: Mapping[str, Any]) -> None:
        """With keep_workdirs = "failed", a passing candidate's folder goes."""
        generation = candidate.generation or {}
        if options.get("keep_workdirs") == "failed" and result.passed and \
                generation.get("workdir"):
            shutil.rmtree(generation["workdir"], ignore_errors=True)

    def _candidate(self, op: OperatorSpec, folder: Path, finished: Finished,
                   options: Mapping[str, Any], sample: int) -> Candidate:
        program = Path(options["command"][0]).name
        status = _describe_status(finished.exit_status)
        ended = (f"was stopped at its {finished.stopped} and killed (its whole process group)"
                 if finished.stopped else f"ended with {status}")
        scaffold = options.get("scaffold_layout")
        kernel_file = _kernel_file(options)
        kernel = folder / kernel_file
        if not kernel.is_file():
            stderr = finished.stderr.strip()
            detail = f"; stderr tail: {_tail(stderr, MESSAGE_TAIL_CHARS)}" if stderr else ""
            if finished.stopped and finished.stopped.startswith("wall-clock"):
                raise AgentFailed(f"{program} timed out after {options['timeout_s']:g} s and "
                                  f"was killed (its whole process group){detail}")
            raise AgentFailed(f"{program} {ended} and wrote no {kernel_file}{detail}")
        usage = read_usage(folder, finished.stdout, options["output_format"])
        cost, cost_source = _priced(usage, options)
        log = [f"{program} {ended} after {finished.seconds:.1f} s",
               f"stdout (tail):\n{_tail(finished.stdout, LOG_TAIL_CHARS)}",
               f"stderr (tail):\n{_tail(finished.stderr, LOG_TAIL_CHARS)}"]
        if usage.problem:
            log.append(usage.problem)
        generation: dict[str, Any] = {
            "workdir": str(folder), "kept": options["keep_workdirs"],
            "command": _argv(op, options), "preset": options["preset"],
            **({"scaffold": scaffold.name, "iterations": options["iterations"],
                "baseline": options["baseline"]} if scaffold else {}),
            "exit_status": finished.exit_status,
            "exit_reason": finished.stopped or "exited", "evaluator_calls": _eval_calls(folder),
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

    def label(self, options: Mapping[str, Any]) -> str:
        """``command/<preset, else the program's name>``, and ``/<model>`` where one is set:
        one agent with two models is two methods."""
        base = default_label(self.name, {key: options.get(key)
                                         for key in ("preset", "command", "path")})
        scaffold = options.get("scaffold")
        if scaffold is not None:  # command/ako4all/claude-code: the scaffold, then its agent
            agent = base.partition("/")[2] or "claude-code"
            base = f"{self.name}/{clean_label(str(scaffold))}/{agent}"
        model = options.get("model")
        return base if model is None else f"{base}/{clean_label(str(model))}"[:MAX_LABEL_CHARS]


def _kernel_file(options: Mapping[str, Any] | None) -> str:
    """Where the program leaves its kernel: the scaffold's place, else kernel.py."""
    scaffold = (options or {}).get("scaffold_layout")
    return scaffold.kernel_file if scaffold else KERNEL_FILE


def _argv(op: OperatorSpec, options: Mapping[str, Any]) -> list[str]:
    """The command, with a scaffold's kickoff prompt in place of the preset's (or of a
    ``{kickoff}`` argument of the user's own command)."""
    scaffold = options.get("scaffold_layout")
    if scaffold is None:
        return list(options["command"])
    prompt = scaffold.prompt(op, options["iterations"])
    return [prompt if part in (KICKOFF, "{kickoff}") else part for part in options["command"]]


def _token_cap(folder: Path, options: Mapping[str, Any]) -> Callable[[str], str | None] | None:
    """The stop check of ``max_tokens_per_op``: the tokens the program reported so far, in its
    usage.json or its streamed stdout, against the cap."""
    cap = options["max_tokens_per_op"]
    if cap is None:
        return None

    def over(stdout: str) -> str | None:
        total = read_usage(folder, stdout, options["output_format"]).total_tokens
        return f"token cap ({cap} tokens; {total} reported)" if total and total > cap else None

    return over


def _eval_calls(folder: Path) -> int:
    """How many times the program ran ./eval.sh."""
    try:
        return len((folder / EVAL_CALLS_FILE).read_text().splitlines())
    except OSError:
        return 0


@hookimpl
def kgb_register_methods(register):
    register(CommandMethod())
