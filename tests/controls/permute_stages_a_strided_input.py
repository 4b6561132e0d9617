# op: aten.permute
# In the style of FlagGems and of Triton's tutorials: the input made contiguous first (a torch
# copy of a strided or transposed input, staging it as it is), then one Triton kernel that
# writes each output element from the input element its permuted index names. For an operator
# that only moves data, that staging copy is the one torch copy allowed.
import torch
import triton
import triton.language as tl


@triton.jit
def _permute_4d(src, dst, n, size1, size2, size3, s0, s1, s2, s3, BLOCK: tl.constexpr):
    # dst is contiguous, of sizes (size0, size1, size2, size3); s0..s3 are the input's strides,
    # in elements, of the input dims the output's dims come from.
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    i3 = offsets % size3
    i2 = (offsets // size3) % size2
    i1 = (offsets // (size3 * size2)) % size1
    i0 = offsets // (size3 * size2 * size1)
    values = tl.load(src + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3, mask=mask)
    tl.store(dst + offsets, values, mask=mask)


def kernel(x, dims):
    x = x.contiguous()
    dims = [d % x.dim() for d in dims]
    if x.dim() > 4:
        raise NotImplementedError("up to 4-D")
    out = torch.empty([x.shape[d] for d in dims], dtype=x.dtype, device=x.device)
    sizes = [1] * (4 - x.dim()) + list(out.shape)
    strides = [0] * (4 - x.dim()) + [x.stride(d) for d in dims]
    n = out.numel()
    if n:
        grid = (triton.cdiv(n, 1024),)
        _permute_4d[grid](x, out, n, sizes[1], sizes[2], sizes[3], *strides, BLOCK=1024)
    return out
