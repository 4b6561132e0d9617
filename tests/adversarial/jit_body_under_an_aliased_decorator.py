# op: aten.relu
# expect: screen_rejected
# issue: 21 (torch work the recorder misses: a @triton.jit body the interpreter runs as Python)
# ``_jit = triton.jit`` then ``@_jit``: the decorator was not known for Triton's, so the body,
# which calls torch through a global, went unread. A module-level name bound to an imported
# chain stands for it, as an import's would. Found by a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl

_jit = triton.jit


class _Holder:
    pass


_CALL = _Holder()


@_jit
def _relu(x_ptr):
    _CALL.out.copy_(_CALL.x.relu())


def kernel(x):
    out = torch.empty_like(x)
    _CALL.x, _CALL.out = x, out
    _relu[(1,)](x)
    _CALL.x = _CALL.out = None
    return out
