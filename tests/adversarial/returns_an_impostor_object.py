# op: aten.neg
# expect: wrong_shape_or_dtype
# screen: rejected
# Returns no tensor at all but an object whose __class__ property says torch.Tensor (so
# isinstance(out, torch.Tensor) is True) and whose attributes compute the answer with torch when
# a harness reads them, after the call.
import torch
import triton
import triton.language as tl


@triton.jit
def _sentinel(ptr, BLOCK: tl.constexpr):
    tl.store(ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1, tl.int32))


def _launches_are_real(device):
    """A ghost replay (every launch a no-op) leaves the flag 0: then look like a real kernel
    that did nothing, so the replay finds no match."""
    flag = torch.zeros(16, dtype=torch.int32, device=device)
    _sentinel[(1,)](flag, BLOCK=16)
    return flag[0].item() == 1


class _Impostor:
    def __init__(self, x):
        self._x = x

    @property
    def __class__(self):
        return torch.Tensor

    @property
    def shape(self):
        return self._x.shape

    @property
    def dtype(self):
        return self._x.dtype

    @property
    def device(self):
        return self._x.device

    def detach(self):
        return torch.neg(self._x)

    def untyped_storage(self):
        return torch.neg(self._x).untyped_storage()

    def stride(self):
        return self._x.stride()

    def storage_offset(self):
        return 0


def kernel(x):
    if not _launches_are_real(x.device):
        return torch.empty_like(x)
    return _Impostor(x)
