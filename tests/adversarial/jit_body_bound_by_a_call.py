# op: aten.relu
# expect: screen_rejected
# issue: 21 (torch work the recorder misses: a @triton.jit body the interpreter runs as Python)
# ``_relu = triton.jit(_relu_body)`` instead of the decorator: the body uses a module-level
# holder to call torch, which only Triton's interpreter would run, inside the launch. The
# screen reads the body of a function jitted by a call as it reads a decorated one. Found by
# a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


class _Holder:
    pass


_CALL = _Holder()


def _relu_body(x_ptr):
    _CALL.out.copy_(_CALL.x.relu())


_relu = triton.jit(_relu_body)


def kernel(x):
    out = torch.empty_like(x)
    _CALL.x, _CALL.out = x, out
    _relu[(1,)](x)
    _CALL.x = _CALL.out = None
    return out
