"""Kernel-optimisation scaffolds around a coding agent, laid out by kgb for one operator.

A scaffold is a workspace convention: files the agent reads, one it edits, a bench script it
runs in a loop. The ``command`` method lays the scaffold's workspace out per operator from the
user's own checkout of it (``[method] scaffold_dir``; kgb ships none of its files), adds what
the scaffold expects to be written for the task (the operator's reference, its shapes and
tolerances, a starting kernel), and puts kgb's evaluator where the scaffold's bench step is, in
the output format the scaffold's instructions read. The agent CLI that drives it is a preset
(``agent_presets.py``, Claude Code by default, as the scaffolds document); its prompt becomes
the scaffold's documented kickoff.

What each scaffold gets (facts from the scaffolds' own repositories, read in 2026-12):

- ``autokernel`` (github.com/RightNow-AI/autokernel): the checkout's ``program.md`` (the
  experiment loop) with a section on this workspace appended; ``kernel.py``, the one file the
  agent edits; ``reference.py``, the operator's reference; ``bench.py``, kgb's evaluator printing
  ``correctness: PASS|FAIL`` and ``speedup_vs_pytorch: X.XXXx`` (no ``throughput_tflops``: kgb
  does not count an arbitrary operator's FLOPs, and the appended section says to keep a change
  when the speedup rises instead). Kickoff: "Read program.md and let's kick off a new
  experiment. Start with setup."
- ``ako4all`` (github.com/TongmingLAIC/AKO4ALL): the checkout (``TASK.md``, ``HINTS.md``,
  ``bench-wrapper.sh``...), ``input/kernel.py`` and ``input/reference.py``,
  ``context/operator_spec.md``, and kgb's evaluator as the user-supplied bench
  (``bench/kgb/bench.py``, described in ``bench/GUIDE.md`` as AKO4ALL asks), printing
  ``COMPILED:``, ``CORRECT:``, ``RUNTIME:``, ``REF_RUNTIME:`` and ``SPEEDUP:``. The kernel is taken
  from ``solution/kernel.py``, where AKO4ALL's loop keeps it.
- ``cuda-optimized-skill`` (github.com/KernelFlow-ops/cuda-optimized-skill): the checkout's
  ``skills/`` folder, ``kernel.py`` and ``kernel_original.py``, ``operator_spec.md``, and
  ``kgb_bench.py`` printing the median time and the speedup the skill's benchmark prints. The
  skill's own benchmark needs ``setup()``/``run_kernel()`` in the kernel and a
  ``reference(**kwargs)``, which kgb's contract (``kernel(...)``) does not have, so the kickoff
  says to run ``kgb_bench.py`` wherever the skill benchmarks.

Every workspace also has kgb's own files (``KGB_TASK.md``, ``spec.json``, ``eval.sh``), and
``baseline = "reference"`` starts the kernel from kgb's known-good reference kernel (an
optimise-only run, as the skill expects) instead of a stub.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from kgb_core.errors import UserError
from kgb_core.operators import OperatorSpec

TASK_FILE = "KGB_TASK.md"  # kgb's task text; AKO4ALL's own TASK.md keeps its name
BASELINES = ("starter", "reference")


@dataclass(frozen=True)
class Scaffold:
    name: str
    repository: str
    marker: str          # a file every checkout of the scaffold has, relative to it
    kernel_file: str     # where the agent leaves the kernel, relative to the work folder
    start_file: str      # where the starting kernel goes
    reference_file: str  # where the operator's PyTorch reference goes
    bench_file: str      # kgb's evaluator, in the scaffold's output format
    bench_style: str
    kickoff: str         # {op}, {iterations}, {bench}, {task}

    def prompt(self, op: OperatorSpec, iterations: int) -> str:
        return self.kickoff.format(op=op.id, iterations=iterations, bench=self.bench_file,
                                   task=TASK_FILE)


SCAFFOLDS: dict[str, Scaffold] = {scaffold.name: scaffold for scaffold in (
    Scaffold("autokernel", "https://github.com/RightNow-AI/autokernel", "program.md",
             "kernel.py", "kernel.py", "reference.py", "bench.py", "autokernel",
             "Read program.md and let's kick off a new experiment. Start with setup. The "
             "operator is {op}: program.md's last section says how this workspace differs "
             "(run `python {bench}`; {task} describes the operator)."),
    Scaffold("ako4all", "https://github.com/TongmingLAIC/AKO4ALL", "TASK.md",
             "solution/kernel.py", "input/kernel.py", "input/reference.py", "bench/kgb/bench.py",
             "ako4all",
             "Follow the instructions in TASK.md. Save HINTS.md to memory. The operator is "
             "{op}; context/operator_spec.md describes it, and bench/GUIDE.md gives the bench "
             "command. Optimize for up to {iterations} iterations. Stop early only if all "
             "viable approaches are exhausted."),
    Scaffold("cuda-optimized-skill", "https://github.com/KernelFlow-ops/cuda-optimized-skill",
             "skills/optimized-skill/operator-optimize-loop/SKILL.md",
             "kernel.py", "kernel.py", "reference.py", "kgb_bench.py", "skill",
             "Optimize the Triton kernel in kernel.py for operator {op}. Read "
             "skills/optimized-skill/operator-optimize-loop/SKILL.md and follow it with "
             "--max-iterations={iterations} --backend=triton. Read operator_spec.md for the "
             "operator. Wherever the skill runs its benchmark, run `python {bench} kernel.py` "
             "instead: it is the harness's evaluator (correctness, then timing). Do NOT modify "
             "files in skills/. Only modify kernel.py."),
)}


def scaffold_options(options: dict[str, Any]) -> Scaffold | None:
    """Check ``scaffold``, ``scaffold_dir``, ``iterations`` and ``baseline``; the scaffold, or
    None. ``scaffold_dir`` may use ``~`` and ``$VARIABLES`` (the examples use one)."""
    name = options.get("scaffold")
    if options.get("baseline") not in BASELINES:
        raise UserError(f"method command: baseline must be one of {', '.join(BASELINES)}, "
                        f"got {options.get('baseline')!r}")
    iterations = options.get("iterations")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise UserError(f"method command: iterations must be a whole number of at least 1, "
                        f"got {iterations!r}")
    if name is None:
        if options.get("scaffold_dir") is not None:
            raise UserError("method command: scaffold_dir needs a scaffold (one of "
                            f"{', '.join(SCAFFOLDS)})")
        return None
    if name not in SCAFFOLDS:
        raise UserError(f"method command: unknown scaffold {name!r}; scaffolds: "
                        f"{', '.join(SCAFFOLDS)}")
    scaffold = SCAFFOLDS[name]
    given = options.get("scaffold_dir")
    if not isinstance(given, str) or not given.strip():
        raise UserError(f"method command: scaffold {name} needs scaffold_dir, your checkout of "
                        f"{scaffold.repository} (kgb ships none of its files)")
    folder = Path(os.path.expandvars(given)).expanduser()
    if "$" in str(folder):
        raise UserError(f"method command: scaffold_dir {given!r} names a variable that is not "
                        f"set; clone {scaffold.repository} and set it to that folder")
    if not (folder / scaffold.marker).is_file():
        raise UserError(f"method command: scaffold_dir {str(folder)!r} has no {scaffold.marker}:"
                        f" is it a checkout of {scaffold.repository}?")
    options["scaffold_dir"] = str(folder.resolve())
    return scaffold


def starting_kernel(op: OperatorSpec, baseline: str) -> str:
    """The kernel the agent starts from: kgb's reference kernel, or a stub naming the contract
    (also where ``baseline = "reference"`` asks for a reference kernel the operator lacks)."""
    if baseline == "reference" and op.reference_kernel is not None:
        return op.reference_kernel()
    return (f"# {op.id}: write the Triton kernel here; {TASK_FILE} says what kernel(...) must "
            f"take and return.\nimport torch\nimport triton\nimport triton.language as tl\n\n\n"
            f"def kernel(*args, **kwargs):\n    raise NotImplementedError(\"{op.id}\")\n")


def lay_out(scaffold: Scaffold, folder: Path, op: OperatorSpec, options: Mapping[str, Any],
            task: str, reference: str, eval_command: list[str], calls_file: str) -> None:
    """The scaffold's workspace in ``folder``: the checkout, then what kgb writes over it.
    Links in the checkout are copied as the files they point to: the agent edits its own
    copy, never the user's checkout."""
    shutil.copytree(options["scaffold_dir"], folder, dirs_exist_ok=True, symlinks=False,
                    ignore_dangling_symlinks=True, ignore=shutil.ignore_patterns(".git"))
    start = starting_kernel(op, options["baseline"])
    _write(folder / scaffold.start_file, start)
    _write(folder / scaffold.reference_file, reference)
    _write(folder / scaffold.bench_file,
           bench_script(scaffold.bench_style, scaffold.kernel_file, scaffold.bench_file,
                        eval_command, calls_file))
    if scaffold.name == "autokernel":
        program = folder / "program.md"
        _write(program, program.read_text(errors="replace") + AUTOKERNEL_SECTION.format(
            op=op.id, task=TASK_FILE))
    elif scaffold.name == "ako4all":
        _write(folder / "context" / "operator_spec.md", task)
        _write(folder / "bench" / "GUIDE.md", AKO4ALL_GUIDE.format(bench=scaffold.bench_file))
    else:
        _write(folder / "kernel_original.py", start)
        _write(folder / "operator_spec.md", task)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


AUTOKERNEL_SECTION = """

## This workspace (laid out by kgb for operator {op})
- The operator is not one of AutoKernel's: `{task}` describes it (signature, dtypes, shapes,
  tolerances). `reference.py` is its PyTorch reference.
- `kernel.py` must define `kernel(...)` exactly as `{task}` says (not `kernel_fn`).
- `bench.py` is the harness's evaluator (kgb): run `python bench.py > run.log 2>&1`. It prints
  `correctness: PASS|FAIL` and `speedup_vs_pytorch: X.XXXx` but no `throughput_tflops`: keep a
  change when `speedup_vs_pytorch` rises, revert it otherwise.
"""

AKO4ALL_GUIDE = """# Bench: the harness's evaluator (kgb)

Bench command: `python {bench} solution/kernel.py`

It checks the kernel against the operator's reference on more cases than are shown, then times
it against the PyTorch reference, and prints one line each:

    COMPILED: True|False
    CORRECT: True|False
    RUNTIME: <ms>
    REF_RUNTIME: <ms>
    SPEEDUP: <x>

and `VERDICT:`/`MESSAGE:` lines that say why a kernel failed. Exit status 0 when correct.
"""

_BENCH = '''#!/usr/bin/env python3
"""The harness's evaluator (kgb eval) as this scaffold's bench step; written by kgb."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STYLE = {style!r}
# The kernel's path (default: where this scaffold keeps it); flags pass through to kgb eval,
# e.g. --no-timing.
PATHS = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
FLAGS = [arg for arg in sys.argv[1:] if arg.startswith("-")]
KERNEL = PATHS[0] if PATHS else None
EVAL = {eval_command!r}
CALLS = {calls!r}


def main():
    with open(os.path.join(WORKDIR, CALLS), "a") as calls:
        calls.write("run\\n")
    kernel = os.path.abspath(KERNEL) if KERNEL else os.path.join(WORKDIR, {kernel!r})
    at = EVAL.index("KERNEL")
    run = subprocess.run(EVAL[:at] + [kernel] + EVAL[at + 1:] + FLAGS, cwd=WORKDIR,
                         capture_output=True, text=True)
    try:
        result = json.loads(run.stdout)
    except ValueError:
        print(run.stdout + run.stderr)
        print("correctness: FAIL" if STYLE == "autokernel" else "CORRECT: False")
        return 1
    passed = result.get("verdict") == "pass"
    speedup, ms, ref_ms = (result.get(key) for key in ("speedup", "candidate_ms", "reference_ms"))
    compiled = result.get("verdict") not in ("compile_error", "screen_rejected")
    if STYLE == "autokernel":
        print("correctness: " + ("PASS" if passed else "FAIL"))
        if speedup is not None:
            print("speedup_vs_pytorch: %.3fx" % speedup)
        if ms is not None:
            print("kernel_ms: %.4f" % ms)
    elif STYLE == "ako4all":
        print("COMPILED: %s" % compiled)
        print("CORRECT: %s" % passed)
        if ms is not None:
            print("RUNTIME: %.4f" % ms)
        if ref_ms is not None:
            print("REF_RUNTIME: %.4f" % ref_ms)
        if speedup is not None:
            print("SPEEDUP: %.3f" % speedup)
    else:
        print("Correctness: " + ("PASS" if passed else "FAIL"))
        if ms is not None:
            print("Median: %.4f ms" % ms)
        if speedup is not None:
            print("Speedup: %.3fx vs reference" % speedup)
    print("VERDICT: %s" % result.get("verdict"))
    if result.get("message"):
        print("MESSAGE: %s" % result["message"])
    return 0 if passed else 1


WORKDIR = {workdir}
sys.exit(main())
'''


def bench_script(style: str, kernel_file: str, bench_file: str, eval_command: list[str],
                 calls_file: str) -> str:
    """A Python bench script at ``bench_file`` (relative to the work folder) that runs
    ``eval_command`` (its ``KERNEL`` element replaced by the kernel's path, by default
    ``kernel_file``) from the work folder, and prints the verdict and timing in ``style``'s
    format. Each run is counted in ``calls_file``, as ``eval.sh`` counts its own."""
    workdir = "HERE"
    for _ in range(bench_file.count("/")):  # bench/kgb/bench.py: two folders down
        workdir = f"os.path.dirname({workdir})"
    return _BENCH.format(style=style, kernel=kernel_file, eval_command=eval_command,
                         calls=calls_file, workdir=workdir)


__all__ = ["BASELINES", "SCAFFOLDS", "Scaffold", "TASK_FILE", "bench_script", "lay_out",
           "scaffold_options", "starting_kernel"]
