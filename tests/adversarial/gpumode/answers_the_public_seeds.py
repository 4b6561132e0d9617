# op: gpumode.rowsum_py
# expect: wrong_output
# screen: rejected
# GPU MODE's tests name their seeds (task.yml), so an answer can memorise the outputs for the
# values those seeds draw: this one draws the public tests' inputs itself at import (the
# problem's generate_input draws on the CPU generator, so they are the same everywhere), keeps
# their row sums, and returns the kept sums whenever the shape is a public test's, through a
# Triton copy. Under the public seeds it passes every test. kgb mixes its own seed into the
# task's, so the values it checks are never the public ones: wrong_output. The static screen
# refuses torch.manual_seed and torch.randn.
import torch
import triton
import triton.language as tl

_PUBLIC_TESTS = ((33, 1000, 11), (64, 4097, 12))
_MEMORISED = {}
for _rows, _cols, _seed in _PUBLIC_TESTS:
    torch.manual_seed(_seed)
    _MEMORISED[(_rows, _cols)] = torch.randn(_rows, _cols, dtype=torch.float32).sum(dim=1)


@triton.jit
def _copy(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def _row_sum(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + offsets < cols
        total += tl.load(x_ptr + row * cols + start + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(total, axis=0))


def kernel(data):
    x = data.contiguous()
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    kept = _MEMORISED.get(tuple(x.shape))
    if kept is not None:
        kept = kept.to(x.device)
        _copy[(triton.cdiv(kept.numel(), 1024),)](kept, out, kept.numel(), BLOCK=1024)
    else:
        _row_sum[(x.shape[0],)](x, out, x.shape[1], BLOCK=1024)
    return out
