# op: vllm.silu_and_mul
# expect: wrong_output
# timed: yes
# vLLM's out-parameter op, honest in every checked call; once timed, it launches a kernel for
# show and leaves `out` as it was handed over. A timed call overwrites the arguments the last
# one wrote, so they are compared as each sampled call left them.
# It knows it is timed from the ghost replay, the last check before timing, where a sentinel
# kernel's flag stays unwritten; of the two checked calls after timing, the one whose output
# is judged repeats its input tensor, which no timed call does.
import torch
import triton
import triton.language as tl


@triton.jit
def _silu_and_mul(out_ptr, in_ptr, d, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < d
    x = tl.load(in_ptr + row * 2 * d + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(in_ptr + row * 2 * d + d + cols, mask=mask, other=0.0).to(tl.float32)
    # vLLM rounds the activation to the storage dtype before the product.
    activated = (x / (1.0 + tl.exp(-x))).to(out_ptr.dtype.element_ty).to(tl.float32)
    tl.store(out_ptr + row * d + cols, (activated * y).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _sentinel(flag_ptr):
    tl.store(flag_ptr, 1)


def _is_timed(x):
    """The ghost replay (every launch a no-op, so the sentinel's flag stays unwritten) is the
    last check before timing. After it, the only checked call whose output is judged, the
    second of the two after timing, hands over the same tensor as the call before: a timing
    loop, cycling through its input sets, never does."""
    previous, kernel.previous = kernel.previous, x
    if not kernel.after_ghost:
        flag = torch.zeros(1, dtype=torch.int32, device=x.device)
        _sentinel[(1,)](flag)
        kernel.after_ghost = flag.item() == 0
        return False  # the ghost replay itself is answered like any checked call
    return previous is not x


def kernel(out, input):
    if _is_timed(input):
        _sentinel[(1,)](torch.empty(1, dtype=torch.int32, device=input.device))
        return None
    d = input.shape[-1] // 2
    rows = input.numel() // max(2 * d, 1)
    if rows == 0 or d == 0:
        return None
    source = input.contiguous()
    target = out if out.is_contiguous() else torch.empty_like(out)
    block = min(triton.next_power_of_2(d), 1024)
    _silu_and_mul[(rows, triton.cdiv(d, block))](target, source, d, BLOCK=block)
    if target is not out:
        out.copy_(target)
    return None


kernel.after_ghost = False
kernel.previous = None
