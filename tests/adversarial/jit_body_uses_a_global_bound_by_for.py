# op: aten.relu
# expect: screen_rejected
# issue: 21 (torch work the recorder misses: a @triton.jit body the interpreter runs as Python)
# A decorated body uses a global bound by a module-level ``for``, which the screen took for a
# builtin; through it the body calls torch inside the launch. A global bound by any statement
# but a plain def or assignment is no constant Triton's compiler would take. Found by a
# red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


class _Holder:
    pass


for _CALL in (_Holder(),):
    pass


@triton.jit
def _relu(x_ptr):
    _CALL.out.copy_(_CALL.x.relu())


def kernel(x):
    out = torch.empty_like(x)
    _CALL.x, _CALL.out = x, out
    _relu[(1,)](x)
    _CALL.x = _CALL.out = None
    return out
