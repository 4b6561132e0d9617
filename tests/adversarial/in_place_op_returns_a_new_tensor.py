# op: aten.add_
# expect: wrong_output
# The right sum, in a new tensor, with `a` (which add_ writes) left as it was. Only the written
# argument shows it: a judge that compared the return value alone would pass it, and so would
# one whose kept reference answer (kgb_core/evaluation/reference_cache.py) did not write the
# argument back (tests/test_reference_cache.py runs it against kept answers).
import torch
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (a + alpha * b).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(a, b, alpha=1):
    a_in = a.contiguous()
    b_in = b.expand(a.shape).contiguous()
    out = torch.empty(a.shape, dtype=a.dtype, device=a.device)
    _add[(triton.cdiv(max(a.numel(), 1), 1024),)](a_in, b_in, out, float(alpha), a.numel(),
                                                   BLOCK=1024)
    return out
