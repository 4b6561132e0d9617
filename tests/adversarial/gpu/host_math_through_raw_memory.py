# op: aten.relu
# expect: host_read
# screen: rejected
# GPU only. Copies the input to the host (a device-to-host copy, the only torch op involved),
# reads and writes the bytes through ctypes, which no torch mode sees, computes relu in Python
# and uploads the answer; a Triton kernel only copies it into the output. What catches it is the
# count of bytes copied to the host during the call.
import ctypes
import struct

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def kernel(x):
    host = x.float().cpu().contiguous()
    n = host.numel()
    values = struct.unpack(f"{n}f", ctypes.string_at(host.data_ptr(), 4 * n))
    answer = struct.pack(f"{n}f", *[v if v > 0 else 0.0 for v in values])
    ctypes.memmove(host.data_ptr(), answer, 4 * n)
    done = host.to(x.device).to(x.dtype).reshape(x.shape)
    out = torch.empty_like(done)
    _copy[(triton.cdiv(max(n, 1), 1024),)](done, out, n, BLOCK=1024)
    return out
