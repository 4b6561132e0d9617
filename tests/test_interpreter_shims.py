"""The CPU backend's shims for gaps of Triton's interpreter (kgb_backends/interpreter_shims.py),
each shown with a kernel written the way published kernels write it: wrong in the bare
interpreter, right with the shim, and passing through a real runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgb_core.evaluation import verdicts

REPO = Path(__file__).resolve().parent.parent

# Writes the mask `rows < M and cols < N` itself into a buffer the size of the whole block, so
# what the interpreter made of `and` shows without any out-of-bounds access.
MASK_PROBE = r'''
import sys
import torch, triton, triton.language as tl
if sys.argv[1] == "shimmed":
    from kgb_backends.interpreter_shims import install
    assert install()

@triton.jit
def _mask(out_ptr, M, N, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    mask = rows[:, None] < M and cols[None, :] < N
    either = rows[:, None] < M or cols[None, :] < N
    tl.store(out_ptr + rows[:, None] * BLOCK + cols[None, :], mask.to(tl.int8))
    tl.store(out_ptr + BLOCK * BLOCK + rows[:, None] * BLOCK + cols[None, :], either.to(tl.int8))

out = torch.zeros(2 * 8 * 8, dtype=torch.int8)
_mask[(1,)](out, 3, 5, BLOCK=8)
rows, cols = torch.arange(8)[:, None], torch.arange(8)[None, :]
want = torch.cat([((rows < 3) & (cols < 5)).flatten(), ((rows < 3) | (cols < 5)).flatten()])
RESULT = bool(torch.equal(out.bool(), want))
'''


# eps.to(...) on a float argument and DTYPE.value on a dtype one, as the compiler allows.
ARGUMENTS_PROBE = r'''
import sys
import torch, triton, triton.language as tl
if sys.argv[1] == "shimmed":
    from kgb_backends.interpreter_shims import install
    assert install()

@triton.jit
def _add_eps(x_ptr, out_ptr, n, eps, OUT_DTYPE, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, (x + eps.to(tl.float32)).to(OUT_DTYPE.value), mask=mask)

x, out = torch.randn(10), torch.empty(10)
try:
    _add_eps[(1,)](x, out, 10, 0.5, tl.float32, BLOCK=16)
    RESULT = bool(torch.allclose(out, x + 0.5))
except Exception:
    RESULT = False
'''


# GELU's erf, tanh, pow and rsqrt through both libdevice modules, as published kernels call them.
LIBDEVICE_PROBE = r'''
import sys
import torch, triton, triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice
if sys.argv[1] == "shimmed":
    from kgb_backends.interpreter_shims import install
    assert "libdevice" in install()

@triton.jit
def _gelu_and_more(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    gelu = 0.5 * x * (1 + libdevice.erf(x * 0.7071067811865476))
    more = cuda_libdevice.tanh(x) + libdevice.pow(libdevice.rsqrt(x * x + 1.0), 2.0)
    tl.store(out_ptr + offsets, gelu + more, mask=mask)

x, out = torch.randn(100), torch.empty(100)
want = torch.nn.functional.gelu(x) + x.tanh() + (x * x + 1).rsqrt() ** 2
try:
    _gelu_and_more[(1,)](x, out, 100, BLOCK=128)
    RESULT = bool(torch.allclose(out, want, rtol=1e-5, atol=1e-6))
except Exception:
    RESULT = False
'''


# bf16 as published kernels compute it: elementwise arithmetic on bf16 blocks (SwiGLU-style
# gating), a max over negative values, a dot of bf16 tiles, a bf16 block cast to an integer,
# each against torch doing the same in fp32 with the same roundings.
BF16_PROBE = r'''
import sys
import torch, triton, triton.language as tl
if sys.argv[1] == "shimmed":
    from kgb_backends.interpreter_shims import install
    assert "bf16 arithmetic" in install()

@triton.jit
def _bf16_ops(a_ptr, b_ptr, t_ptr, gate_ptr, max_ptr, dot_ptr, int_ptr, acc_ptr,
              B: tl.constexpr):
    r = tl.arange(0, B)
    tile = r[:, None] * B + r[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    tl.store(gate_ptr + tile, a * b - b)
    tl.store(max_ptr + r, tl.max(-tl.abs(a), axis=1))
    tl.store(dot_ptr + tile, tl.dot(a, b))
    tl.store(int_ptr + r, (tl.load(t_ptr + r) * 4).to(tl.int32))
    tl.atomic_add(acc_ptr + r % 4, tl.load(t_ptr + r))

B = 16
a, b = torch.randn(B, B, dtype=torch.bfloat16), torch.randn(B, B, dtype=torch.bfloat16)
t = torch.randn(B, dtype=torch.bfloat16) * 8
gate, mx = torch.empty_like(a), torch.empty(B, dtype=torch.bfloat16)
dot, ints = torch.empty(B, B), torch.empty(B, dtype=torch.int32)
acc, want_acc = torch.zeros(4, dtype=torch.bfloat16), torch.zeros(4, dtype=torch.bfloat16)
for lane in range(B):  # atomics one lane after another, each sum rounded to bf16
    want_acc[lane % 4] = (want_acc[lane % 4].float() + t[lane].float()).bfloat16()
try:
    _bf16_ops[(1,)](a, b, t, gate, mx, dot, ints, acc, B=B)
    want_gate = ((a.float() * b.float()).bfloat16().float() - b.float()).bfloat16()
    RESULT = bool(torch.equal(gate, want_gate)
                  and torch.equal(mx, (-a.abs()).amax(dim=1))
                  and torch.allclose(dot, a.float() @ b.float(), rtol=1e-5, atol=1e-5)
                  and torch.equal(ints, (t * 4).float().to(torch.int32))
                  and torch.equal(acc, want_acc))
except Exception:
    RESULT = False
'''


# Module-level aliases of tl's builtins, as some published kernels bind them at import.
ALIAS_PROBE = r'''
import sys
import torch, triton, triton.language as tl
from triton.language.math import rsqrt as fast_rsqrt
if sys.argv[1] == "shimmed":
    from kgb_backends.interpreter_shims import install
    assert "module-level aliases of tl functions" in install()
erf = tl.math.erf
exp = tl.exp

@triton.jit
def _aliased(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    tl.store(out_ptr + offsets, erf(x) + exp(x) + fast_rsqrt(x * x + 1.0), mask=offsets < n)

x, out = torch.randn(50), torch.empty(50)
try:
    _aliased[(1,)](x, out, 50, BLOCK=64)
    RESULT = bool(torch.allclose(out, x.erf() + x.exp() + (x * x + 1).rsqrt(), atol=1e-6))
except Exception:
    RESULT = False
'''


PROBES = {"mask": MASK_PROBE, "arguments": ARGUMENTS_PROBE, "libdevice": LIBDEVICE_PROBE,
          "bf16": BF16_PROBE, "aliases": ALIAS_PROBE}
# Runs every probe in one process per mode (torch and triton imported once): each from a file
# of its own, since the interpreter rewrites a kernel only where it can read its source.
DRIVER = r'''
import json, runpy, sys
mode, paths = sys.argv[1], json.loads(sys.argv[2])
results = {}
for name, path in paths.items():
    sys.argv = [path, mode]
    results[name] = runpy.run_path(path, run_name="__main__")["RESULT"]
print(json.dumps(results))
'''


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    """What each probe's kernel computed, bare and shimmed: {mode: {probe: right or not}}."""
    folder = tmp_path_factory.mktemp("probes")
    paths = {}
    for name, text in PROBES.items():
        paths[name] = str(folder / f"{name}_probe.py")
        Path(paths[name]).write_text(text)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    found = {}
    for mode in ("bare", "shimmed"):
        done = subprocess.run([sys.executable, "-c", DRIVER, mode, json.dumps(paths)],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        found[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_and_or_between_blocks_are_elementwise_as_the_compiler_makes_them(probes):
    assert probes["bare"]["mask"] is False  # the interpreter's own `and`: one side of it
    assert probes["shimmed"]["mask"] is True


def test_float_and_dtype_arguments_arrive_as_the_compiler_passes_them(probes):
    assert probes["bare"]["arguments"] is False  # AttributeError on 'float'
    assert probes["shimmed"]["arguments"] is True


def test_libdevice_functions_compute_in_the_interpreter(probes):
    assert probes["bare"]["libdevice"] is False  # stubs: None, or a raise
    assert probes["shimmed"]["libdevice"] is True


def test_module_level_aliases_of_tl_builtins_work_in_a_kernel(probes):
    assert probes["bare"]["aliases"] is False  # "_semantic argument must be provided"
    assert probes["shimmed"]["aliases"] is True


def test_bf16_blocks_compute_as_fp32_rounded_to_bf16(probes):
    assert probes["bare"]["bf16"] is False  # arithmetic on the bit patterns
    assert probes["shimmed"]["bf16"] is True


def test_bf16_rounding_is_torchs_to_nearest_even():
    """The shim's fp32 -> bf16 rounding against torch's, on random values, exact ties,
    subnormals, the overflow edge, infinities and NaN."""
    import torch

    from kgb_backends.interpreter_bf16 import narrow, widen

    generator = torch.Generator().manual_seed(0)
    values = torch.cat([
        torch.randn(20000, generator=generator) * torch.logspace(-40, 38, 20000),
        # ties: a bf16 value plus exactly half of its last place, both parities
        (torch.arange(1, 200, dtype=torch.int32) << 16 | 0x8000).view(torch.float32),
        torch.tensor([0.0, -0.0, 1e-45, -1e-45, 3.3961514e38, 3.4028235e38, float("inf"),
                      float("-inf"), float("nan")])])
    ours = torch.from_numpy(narrow(values.numpy()).view("int16")).view(torch.bfloat16)
    theirs = values.bfloat16()
    assert torch.equal(ours.isnan(), theirs.isnan())
    finite = ~theirs.isnan()
    assert torch.equal(ours[finite].view(torch.int16), theirs[finite].view(torch.int16))
    round_trip = widen(theirs[finite].view(torch.int16).numpy().view("uint16"))
    assert torch.equal(torch.from_numpy(round_trip), theirs[finite].float())


RELU_WITH_AND_MASK = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _relu_2d(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = rows[:, None] < M and cols[None, :] < N
    offsets = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    flat = x.contiguous().reshape(-1, x.shape[-1] if x.dim() else 1)
    rows, cols = flat.shape
    out = torch.empty_like(flat)
    grid = (max(1, triton.cdiv(rows, 16)), max(1, triton.cdiv(cols, 16)))
    _relu_2d[grid](flat, out, rows, cols, BLOCK_M=16, BLOCK_N=16)
    return out.reshape(x.shape)
'''


def test_a_kernel_masked_with_and_passes_on_the_cpu_backend(cpu_evaluator):
    result = cpu_evaluator.evaluate("aten.relu", RELU_WITH_AND_MASK)
    assert result.verdict == verdicts.PASS, result.message


BODY_ERROR = RELU_WITH_AND_MASK.replace(
    "    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)",
    "    y = tl.where(x > 0, x, 0.0) + tl.zeros([BLOCK_M // 2, BLOCK_N], tl.float32)\n"
    "    tl.store(out_ptr + offsets, y, mask=mask)")


def test_an_error_inside_a_kernel_body_names_the_body_line(cpu_evaluator):
    """The interpreter raises at the launch; the author needs the line of the body."""
    result = cpu_evaluator.evaluate("aten.relu", BODY_ERROR)
    assert result.verdict != verdicts.PASS
    assert "in _relu_2d: y = tl.where(x > 0, x, 0.0) + tl.zeros" in result.message, \
        result.message


OUT_OF_BOUNDS = RELU_WITH_AND_MASK.replace(
    "    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)",
    "    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=offsets < M * N + 64)")


def test_a_store_past_the_end_is_a_runtime_error_naming_its_line(cpu_evaluator):
    """Bare, the interpreter wrote past the output into the runner's heap (a SIGABRT crash)."""
    result = cpu_evaluator.evaluate("aten.relu", OUT_OF_BOUNDS)
    assert result.verdict == verdicts.RUNTIME_ERROR, result.message
    assert "out-of-bounds store" in result.message and "'out_ptr'" in result.message
    assert "in _relu_2d: tl.store(out_ptr + offsets" in result.message
