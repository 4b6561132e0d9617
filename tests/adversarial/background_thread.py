# op: aten.relu
# expect: deferred_work
# screen: rejected
# Returns at once and finishes the work on a thread reached through torch's own imports,
# so the timer would see nothing.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def _right_relu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    _relu[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def kernel(x):
    out = torch.empty_like(x.contiguous())
    def finish():
        out.copy_(_right_relu(x))
    worker = torch.cuda.threading.Thread(target=finish)
    worker.start()
    worker.join(0.5)
    holder = torch.cuda.threading.Thread(target=lambda: torch.cuda.threading.Event().wait(5))
    holder.start()
    return out
