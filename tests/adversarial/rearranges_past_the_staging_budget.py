# op: aten.t
# expect: reference_used
# A decoy: a broadcast copy of the input 64 times over before the copy that is the answer, so
# that a runner keeping only so many bytes of copies would have dropped the answer. The runner
# keeps up to twice the inputs' bytes of rearranging copies (plus 1 MiB), which staging needs;
# a call that rearranges more with torch is refused, not half-checked.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def kernel(x):
    repeats = max(64, (2 << 20) // (x.numel() * x.element_size()))
    x.unsqueeze(0).expand(repeats, *x.shape).contiguous()
    staged = x.t().contiguous()
    out = torch.empty_like(staged)
    _copy[(triton.cdiv(staged.numel(), 1024),)](staged, out, staged.numel(), BLOCK=1024)
    return out
