# op: aten.relu
# expect: tampering
# screen: rejected
# GPU only. Sets aside L2 for persisting accesses at import and marks its input persisting on
# the harness's stream: lines marked so survive the timer's 256 MB flush (a normal access), so
# every timed call after the first reads its input from L2.
import ctypes

import torch
import triton
import triton.language as tl

_cuda = ctypes.CDLL("libcuda.so.1")
_limit = ctypes.c_size_t(0)
_cuda.cuDeviceGetAttribute  # the driver is there
torch.cuda.init()
torch.zeros(1, device="cuda")  # a context to set the limit in
# CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 6: as much as the driver allows (it rounds down).
_status = _cuda.cuCtxSetLimit(6, ctypes.c_size_t(64 << 20))
if _status != 0:
    raise RuntimeError(f"cuCtxSetLimit failed: {_status}")


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t),
                ("hit_ratio", ctypes.c_float), ("hit_prop", ctypes.c_int),
                ("miss_prop", ctypes.c_int), ("pad", ctypes.c_char * 36)]


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    x = x.contiguous()
    # CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1; hitProp persisting = 2, missProp streaming = 1.
    window = _Window(x.data_ptr(), x.numel() * x.element_size(), 1.0, 2, 1)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    _cuda.cuStreamSetAttribute(stream, 1, ctypes.byref(window))
    out = torch.empty_like(x)
    _relu[(triton.cdiv(max(x.numel(), 1), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
