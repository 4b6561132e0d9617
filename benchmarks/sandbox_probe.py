"""Does a CUDA (or any backend's) device work inside the runners' sandbox? One line per step.

``python benchmarks/sandbox_probe.py --backend nvidia``: starts Python in the sandbox exactly as
the runner template is started (same bubblewrap arguments, the backend's device files bound
in), initialises the device there and runs one op, with a time limit per step; then evaluates
one reference kernel through the harness with a short timeout and prints the runner's log. A
diagnostic for a machine where runners hang or fail to start.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from kgb_core.evaluation import sandbox
from kgb_core.plugins import load_registry

PROBE = """
import time, torch
t = time.perf_counter()
torch.cuda.init() if torch.cuda.is_available() else None
x = torch.ones(4, device="cuda" if torch.cuda.is_available() else "cpu")
print("device ok:", x.device, float(x.sum()), f"{time.perf_counter() - t:.2f} s")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--op", default="aten.neg")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    registry = load_registry()
    backend = registry.backend(args.backend)
    tool = sandbox.find_sandbox()
    devices = sandbox.device_paths(backend.sandbox_device_files())
    print(f"sandbox: {tool.name} ({tool.detail}); device files: {devices}")
    command = sandbox.command(tool, [sys.executable, "-P", "-c", PROBE], devices=devices)
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        print(f"python in the sandbox: exit {done.returncode} after "
              f"{time.perf_counter() - started:.1f} s\n{done.stdout}{done.stderr[-2000:]}")
    except subprocess.TimeoutExpired as error:
        print(f"python in the sandbox: no end within {args.timeout:g} s\n"
              f"{(error.stdout or b'').decode()[-1000:]}{(error.stderr or b'').decode()[-2000:]}")
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator

    settings = EvaluationSettings(seeds=(0,), timeout_s=args.timeout, timing=False,
                                  startup_timeout_s=args.timeout)
    started = time.perf_counter()
    with Evaluator.for_backend(backend, settings) as evaluator:
        info = evaluator.start()
        print(f"judge ready after {time.perf_counter() - started:.1f} s: sandbox "
              f"{info.get('sandbox')}")
        for attempt in range(2):
            started = time.perf_counter()
            result = evaluator.evaluate(args.op, registry.operator(args.op).reference_kernel())
            print(f"{args.op} #{attempt + 1}: {result.verdict} in {time.perf_counter() - started:.2f} s"
                  f" {result.message[:300]}")
            if result.log_tail:
                print("runner log:\n" + result.log_tail[-2500:])


if __name__ == "__main__":
    main()
