"""Do a runner's Triton compiles on the GPU find what ``compile_ahead.py`` wrote without one?

``python benchmarks/compile_ahead_probe.py --op aten.add --op vllm.rms_norm`` (on a machine with
an NVIDIA GPU): for each operator, its reference kernel is

1. compiled ahead in a process that sees no GPU (``CUDA_VISIBLE_DEVICES=""``), on meta tensors
   of its shown cases in every dtype, for the GPU's target (from nvidia-smi), into a fresh
   Triton cache (``kgb_core.evaluation.compile_ahead.compile_calls``);
2. run for real on the GPU over the same cases and dtypes, in a fresh process on that cache;
3. run the same way on an empty cache, as a runner compiles today.

It prints, per operator: the kernels compiled ahead and their seconds, the GPU run's compile
seconds (``_do_compile``, as the runner's "runner compile") on the filled cache and on the
empty one, the cache files the GPU run on the filled cache wrote, and of those the kernels
(``.cubin``): 0 when every kernel it launched was found there (the other files are Triton's
launcher, built once per cache). This is the premise of compiling ahead, measured before the judge
runs it (the compile-ahead module's docstring says where it stands).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgb_core.report import render_table  # noqa: E402


def _written(cache: Path) -> dict[str, int]:
    return {str(path.relative_to(cache)): path.stat().st_mtime_ns
            for path in cache.rglob("*") if path.is_file()}


def _input_sets(op: str, device: str) -> list[list]:
    from kgb_core.operators import InputContext
    from kgb_core.plugins import load_registry

    spec = load_registry().operator(op)
    return [list(spec.make_inputs(InputContext(case, dtype, 0, device)))
            for case in spec.shown_cases() for dtype in spec.dtypes]


def _load(path: str):  # noqa: ANN202 - a module
    import importlib.util

    found = importlib.util.spec_from_file_location("candidate", path)
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def child(stage: str, module_path: str, op: str, arch: int) -> dict:
    """One stage in this process: "ahead" (no GPU) or "gpu" (the real launches)."""
    module = _load(module_path)
    if stage == "ahead":
        from triton.backends.compiler import GPUTarget

        from kgb_core.evaluation.compile_ahead import compile_calls

        report = compile_calls(module.kernel, _input_sets(op, "meta"),
                               GPUTarget("cuda", arch, 32))
        return {"compiled": report.compiled, "compile_s": report.compile_s,
                "stopped": report.stopped}
    import torch
    from triton.runtime.jit import JITFunction

    from kgb_core.evaluation.launches import LaunchCounter, time_compiles

    counter = LaunchCounter()
    time_compiles(JITFunction, counter.note_compile)
    failed = []
    for inputs in _input_sets(op, "cuda"):
        try:
            module.kernel(*inputs)
        except Exception as error:  # reported, not hidden: the probe's rows say so
            failed.append(f"{type(error).__name__}: {str(error)[:120]}")
    torch.cuda.synchronize()
    return {"compile_s": counter.compile_s, "failed": failed}


def _run(stage: str, module: Path, op: str, arch: int, cache: Path) -> dict:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache)}
    if stage == "ahead":
        env["CUDA_VISIBLE_DEVICES"] = ""
    done = subprocess.run([sys.executable, __file__, "--child", stage, str(module), op,
                           str(arch)], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["no output"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--op", action="append", default=[])
    parser.add_argument("--child", nargs=4, metavar=("STAGE", "MODULE", "OP", "ARCH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        stage, module, op, arch = args.child
        print(json.dumps(child(stage, module, op, int(arch))))
        return

    from kgb_backends.triton_warmup import visible_cuda_arch
    from kgb_core.plugins import load_registry

    arch = visible_cuda_arch()
    if arch is None:
        sys.exit("compile_ahead_probe.py needs an NVIDIA GPU (nvidia-smi named none)")
    registry = load_registry()
    rows = []
    for op in args.op or ["aten.add", "aten.relu", "vllm.rms_norm"]:
        with tempfile.TemporaryDirectory(prefix="kgb-compile-ahead-") as folder:
            module = Path(folder) / "reference.py"
            module.write_text(registry.operator(op).reference_kernel())
            filled, empty = Path(folder) / "filled", Path(folder) / "empty"
            ahead = _run("ahead", module, op, arch, filled)
            before = _written(filled)
            warm = _run("gpu", module, op, arch, filled)
            after = _written(filled)
            cold = _run("gpu", module, op, arch, empty)
        written = [name for name, when in after.items() if before.get(name) != when]
        # A kernel Triton compiled writes its .cubin; the rest is Triton's launcher and driver
        # helpers, built once per cache by the first launch (the runner template's warm-up
        # builds them in the judge's runners).
        missed = sum(1 for name in written if name.endswith(".cubin"))
        problems = [*ahead.get("stopped", []), *warm.get("failed", []),
                    *ahead.get("error", []), *warm.get("error", []), *cold.get("error", [])]
        rows.append([op, str(ahead.get("compiled", "-")),
                     f"{ahead.get('compile_s', float('nan')):.2f}",
                     f"{warm.get('compile_s', float('nan')):.3f}",
                     f"{cold.get('compile_s', float('nan')):.3f}", str(len(written)),
                     str(missed),
                     "; ".join(problems)[:160]])
    print(f"sm_{arch}, kernels compiled ahead with no GPU, then launched on it")
    print(render_table(["operator", "kernels ahead", "ahead s", "GPU compile s (filled)",
                        "GPU compile s (empty)", "files written (filled)",
                        "kernels compiled on the GPU (filled)", "problems"], rows))


if __name__ == "__main__":
    main()
