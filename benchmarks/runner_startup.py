"""Where a fresh runner's first second goes: one line per phase, in a process forked as runners are.

``python benchmarks/runner_startup.py --runs 4`` starts, inside the runners' sandbox (as the
template is started), a process that imports torch and triton without touching the device, then
forks ``--runs`` children one after the other, each timing its phases: the device's
initialisation, the first allocation, Triton's driver utilities, a first kernel compiled and
launched, a second signature, a relaunch, and the child's exit as its parent sees it. The first
child starts from an empty Triton cache and seeds it with the driver utilities only (as the
judge seeds runners); the others start from a copy of that seed, as runners do.

A diagnostic for the per-candidate cost table (``worker_overhead.py``): it names the phase to
work on. On the CPU backend the device phases are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from kgb_core.evaluation import sandbox
from kgb_core.plugins import load_registry
from kgb_core.report import render_table

_CHILD = r"""
import json, os, shutil, sys, time
os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
t0 = time.perf_counter()
import torch, triton, triton.language as tl
try:
    import triton.experimental.gluon  # noqa: F401 - as the template does
except ImportError:
    pass
imported = time.perf_counter() - t0
work, runs = sys.argv[1], int(sys.argv[2])
gpu = torch.cuda.is_available()


@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask),
             mask=mask)


def child(index):
    times = {}
    cache = os.path.join(work, f"cache-{index}")
    seed = os.path.join(work, "seed")
    if os.path.isdir(seed):
        shutil.copytree(seed, cache)
    os.environ["TRITON_CACHE_DIR"] = cache
    def phase(name, action):
        t = time.perf_counter()
        action()
        times[name] = time.perf_counter() - t
    if gpu:
        phase("cuda_init", torch.cuda.init)
        phase("set_device", lambda: torch.cuda.set_device(0))
        phase("first_alloc", lambda: (torch.empty(1, device="cuda"), torch.cuda.synchronize()))
        from triton.runtime import driver
        phase("triton_utils", lambda: driver.active.utils)
        if not os.path.isdir(seed):
            shutil.copytree(cache, seed)
    device = "cuda" if gpu else "cpu"
    def launch(dtype):
        x = torch.ones(1000, device=device, dtype=dtype)
        out = torch.empty_like(x)
        _add[(4,)](x, x, out, 1000, BLOCK=256)
        if gpu:
            torch.cuda.synchronize()
    phase("compile_launch_fp32", lambda: launch(torch.float32))
    phase("compile_launch_fp16", lambda: launch(torch.float16))
    phase("relaunch", lambda: launch(torch.float32))
    if gpu:
        a = torch.ones(64, 64, device="cuda")
        phase("first_mm", lambda: (a @ a, torch.cuda.synchronize()))
    times["total_in_child"] = sum(times.values())
    print(json.dumps(times), flush=True)


print(json.dumps({"imported": imported, "gpu": gpu}), flush=True)
for index in range(runs):
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            child(index)
            code = 0
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    print(json.dumps({"fork_to_reaped": time.perf_counter() - started}), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--no-sandbox", action="store_true")
    args = parser.parse_args()
    backend = load_registry().backend(args.backend)
    backend.setup()  # a GPU's device files (nvidia-uvm) may appear only once it is set up
    tool = sandbox.find_sandbox()
    if args.no_sandbox:
        tool = sandbox.SandboxTool(sandbox.NONE, "--no-sandbox")
    work = tempfile.mkdtemp(prefix="kgb-startup-")
    devices = sandbox.device_paths(backend.sandbox_device_files())
    script = os.path.join(work, "startup_child.py")  # @triton.jit needs its source in a file
    with open(script, "w") as out:
        out.write(_CHILD)
    program = [sys.executable, "-P", script, work, str(args.runs)]
    if args.backend == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    started = time.perf_counter()
    done = subprocess.run(sandbox.command(tool, program, writable=[work], devices=devices),
                          capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    shutil.rmtree(work, ignore_errors=True)
    print(f"backend {args.backend}, sandbox {tool.name}, {args.runs} children, wall {wall:.1f} s, "
          f"exit {done.returncode}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        print(done.stdout[-3000:], done.stderr[-3000:])
        return
    print(f"torch + triton import in the template: {lines[0]['imported']:.2f} s")
    phases = [line for line in lines[1:] if "fork_to_reaped" not in line]
    reaped = [line["fork_to_reaped"] for line in lines if "fork_to_reaped" in line]
    names = list(phases[0]) if phases else []
    rows = []
    for name in names:
        values = [phase[name] for phase in phases]
        rows.append([name, f"{values[0]:.3f}", f"{statistics.median(values[1:] or values):.3f}"])
    if reaped:
        rows.append(["fork_to_reaped", f"{reaped[0]:.3f}", f"{statistics.median(reaped[1:] or reaped):.3f}"])
    print(render_table(["phase", "s, first child", "s, median of the others"], rows))


if __name__ == "__main__":
    main()
