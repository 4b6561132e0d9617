# op: aten.neg
# expect: wrong_output
# screen: rejected
# Re-registers aten::allclose, aten::isclose and aten::equal to say "equal" (the dispatcher
# is process-wide), then returns zeros. The comparison runs in the judge's process, whose
# dispatcher this one cannot touch.
import torch
import triton
import triton.language as tl


@triton.jit
def _fill(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros((BLOCK,), dtype=out_ptr.dtype.element_ty), mask=offsets < n)


def _zeros_like(x):
    out = torch.empty_like(x)
    _fill[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
    return out


_library = torch.sys.modules["torch.library"]
_lib = _library.Library("aten", "IMPL")
for _name, _answer in (("allclose", lambda *a, **k: True), ("equal", lambda *a, **k: True),
                       ("isclose", lambda a, b, *r, **k: torch.ones(a.shape, dtype=torch.bool))):
    try:
        _lib.impl(_name, _answer, "CompositeExplicitAutograd")
    except Exception:
        pass


def kernel(x):
    return _zeros_like(x)
