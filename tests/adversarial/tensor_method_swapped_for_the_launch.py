# op: aten.relu
# expect: screen_rejected
# issue: 21 (torch work the recorder misses: code Triton runs inside a launch)
# ``_T = torch.Tensor``, then ``_T.new_empty`` replaced for one launch (the interpreter calls
# it on every tensor argument, with the recorders suspended) and deleted again before the
# integrity check after the call. A module-level name bound to an imported chain stands for
# it, so the assignment is a patch of torch; ``del`` is checked as one too. Found by a red-team
# pass, 2026-12-06.
import torch
import triton
import triton.language as tl

_T = torch.Tensor


class _State:
    pass


_S = _State()


def _new_empty(self, *args, **kwargs):
    if _S.pending:
        _S.pending = False
        _S.out.copy_(_S.x.relu())
    return _S.original(self, *args, **kwargs)


@triton.jit
def _noop(x_ptr):
    pass


def kernel(x):
    out = torch.empty_like(x)
    _S.x, _S.out, _S.pending, _S.original = x, out, True, _T.new_empty
    _T.new_empty = _new_empty
    try:
        _noop[(1,)](x)
    finally:
        del _T.new_empty   # inherited from TensorBase: deleting the shadow restores it
        _S.x = _S.out = _S.original = None
    return out
