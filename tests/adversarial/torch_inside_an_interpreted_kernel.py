# op: aten.neg
# expect: screen_rejected
# Only the screen refuses it on the CPU backend (a GPU's compiler refuses it too, as a compile
# error): the interpreter runs the body inside the launch, where the recorders are suspended.
# A @triton.jit body that calls torch on a tensor it reaches as a global: a GPU's compiler refuses
# it, but Triton's interpreter runs the body as Python (inside the launch, where the recorder is
# suspended), so on the CPU backend torch computes the answer.
import torch
import triton
import triton.language as tl

class _Holder:
    pass


_CALL = _Holder()


@triton.jit
def _neg_by_torch(out_ptr):
    torch.neg(_CALL.x, out=_CALL.out)


def kernel(x):
    out = torch.empty_like(x)
    _CALL.x, _CALL.out = x, out
    _neg_by_torch[(1,)](out)
    return out
