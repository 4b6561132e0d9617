# op: aten.relu
# expect: tampering
# issue: 21 (torch work the recorder misses: code Triton runs inside a launch)
# A ``tl.constexpr`` argument holding a bound method of the candidate's: the interpreter hands
# the value to the body as it is, and the body calls it inside the launch, where the recorders
# are suspended, to compute relu with torch. A constexpr's value is checked like an argument
# of its own. Found by a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


class _Work:
    def __init__(self, x, out):
        self.x = x
        self.out = out

    def run(self):
        self.out.copy_(self.x.relu())
        return 0


@triton.jit
def _noop(x_ptr, WORK: tl.constexpr):
    WORK()


def kernel(x):
    out = torch.empty_like(x)
    _noop[(1,)](x, tl.constexpr(_Work(x, out).run))
    return out
