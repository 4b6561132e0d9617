"""Triton's compiler, initialised without a device: for the runner template (``warm_template``).

A runner's first Triton compile costs far more than its later ones: the first builds the
compiler's state in the process (the backend's modules, LLVM's target, the ptxas version it
checks), the later ones only compile. Measured in a fresh runner on the H200 (Triton 3.6,
benchmarks/results/h200-runner-startup-1b9e92e.txt): 0.59 s for the first kernel, 0.05 s for
the next; here, 2.5 s and 0.1 s. Compiling one tiny kernel for the GPU's architecture in the
template, before it forks, pays the difference once: ``triton.compile`` with an explicit target
needs no device and no CUDA context, and leaves the process single-threaded (checked by the
template after it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile


def visible_cuda_arch() -> int | None:
    """The compute capability of the first GPU the process may see (90 for an H200), from
    nvidia-smi, which reads it without creating a CUDA context; None where it cannot say."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    try:
        found = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader",
                                "-i", first], capture_output=True, text=True, timeout=20)
        major, minor = found.stdout.strip().splitlines()[0].split(".")
        return int(major) * 10 + int(minor)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def compile_for_target(backend: str, arch: int | str, warp_size: int) -> None:
    """Compile one small kernel for ``backend``/``arch``: no launch, no device."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def _warm(x_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)

    source = ASTSource(_warm, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                       constexprs={"BLOCK": 128})
    # Its own cache folder: the template's file system is read-only (in the sandbox), and
    # what it compiles is of no use to a runner, whose Triton cache is its own.
    saved = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="kgb-warmup-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            triton.compile(source, target=GPUTarget(backend, arch, warp_size))
        finally:
            if saved is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = saved
