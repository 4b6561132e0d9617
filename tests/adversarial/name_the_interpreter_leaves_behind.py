# op: aten.relu
# expect: screen_rejected
# issue: 21 (host computation: tensor memory read and written through raw pointers)
# Triton's interpreter copies its own module's globals (numpy, inspect, its classes) into the
# candidate's module at the first launch; host code then uses ``np`` and ctypes on
# ``data_ptr()`` to compute the answer on the host, which no torch op shows, and a sentinel
# kernel spots ghost replay. Every name a file reads must be one it binds or imports. Found by
# a red-team pass, 2026-12-06.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(flag_ptr):
    tl.store(flag_ptr, 1)


def _view(t):
    c = np.ctypeslib.ctypes
    word = {1: c.c_uint8, 2: c.c_uint16, 4: c.c_uint32, 8: c.c_uint64}[t.element_size()]
    ptr = c.cast(t.data_ptr(), c.POINTER(word))
    return np.ctypeslib.as_array(ptr, shape=(t.numel(),))


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    _touch[(1,)](flag)   # the first launch rewrites _touch and plants np in this module
    if flag.item() != 1:   # ghost replay (launches are no-ops): look like a kernel that did nothing
        return out
    try:
        src, dst = _view(x), _view(out)
    except NameError:   # ghost replay in a fresh process: nothing launched, nothing planted
        return out
    # relu on the bit patterns, any float width: a set sign bit gives +0
    sign = src >> (8 * x.element_size() - 1)
    np.copyto(dst, np.where(sign.astype(bool), np.zeros_like(src), src))
    return out
