# Shared by index and index_put_: advanced indexing x[i0] or x[i0, i1] with int64 index
# tensors on x's leading dims, broadcast against each other (negative entries count from the
# end). The broadcast indices are flattened to B positions; the element (b, r) of the
# (B, rest) result lies at i0[b] * x.stride(0) (+ i1[b] * x.stride(1)) + r's offset in the
# trailing dims (up to 3), so x may be non-contiguous.
GATHER, STORE, ADD = 0, 1, 2


@triton.jit
def _advanced_index_kernel(x_ptr, i0_ptr, i1_ptr, v_ptr, n_elements, n_rest, size0, size1,
                           x_s0, x_s1, rest1, rest2, r_s0, r_s1, r_s2,
                           TWO: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # int64 offsets: large tensors pass 2**31 elements
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    r = offsets % n_rest
    b = offsets // n_rest
    t2 = r % rest2
    rest = r // rest2
    t1 = rest % rest1
    t0 = rest // rest1
    i0 = tl.load(i0_ptr + b, mask=mask, other=0)
    i0 = tl.where(i0 < 0, i0 + size0, i0)
    target = i0 * x_s0 + t0 * r_s0 + t1 * r_s1 + t2 * r_s2
    if TWO:
        i1 = tl.load(i1_ptr + b, mask=mask, other=0)
        i1 = tl.where(i1 < 0, i1 + size1, i1)
        target += i1 * x_s1
    if MODE == 0:
        value = tl.load(x_ptr + target, mask=mask)
        tl.store(v_ptr + offsets, value, mask=mask)
    elif MODE == 1:
        value = tl.load(v_ptr + offsets, mask=mask)
        tl.store(x_ptr + target, value, mask=mask)
    else:
        value = tl.load(v_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.atomic_add(x_ptr + target, value, mask=mask)


def broadcast_shape(shapes):
    ndim = max(len(s) for s in shapes)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"index shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return out


def indexed_shape(x, indices):
    """The shape of x[indices]: the indices' broadcast shape, then x's unindexed dims."""
    return broadcast_shape([tuple(i.shape) for i in indices]) + list(x.shape[len(indices):])


def advanced_index(x, indices, values, mode):
    """GATHER: values[b, r] = x[indices[b], r]; STORE: x[..] = values[..]; ADD: x[..] +=
    values[..] (atomically). values is contiguous, of shape indexed_shape(x, indices)."""
    k = len(indices)
    if k not in (1, 2) or x.dim() - k > 3:
        raise ValueError(f"this kernel takes 1 or 2 index tensors and at most 3 more dims, got "
                         f"{k} for x {tuple(x.shape)}")
    shape = broadcast_shape([tuple(i.shape) for i in indices])
    flat = [i.expand(shape).contiguous().view(-1) for i in indices]
    rest_sizes = [1] * (3 - (x.dim() - k)) + list(x.shape[k:])
    rest_strides = [0] * (3 - (x.dim() - k)) + list(x.stride()[k:])
    n_rest = rest_sizes[0] * rest_sizes[1] * rest_sizes[2]
    n_elements = flat[0].numel() * n_rest
    if n_elements == 0:
        return
    second = flat[1] if k == 2 else flat[0]
    _advanced_index_kernel[(triton.cdiv(n_elements, BLOCK),)](
        x, flat[0], second, values, n_elements, n_rest, x.shape[0],
        x.shape[1] if x.dim() > 1 else 1, x.stride(0), x.stride(1) if x.dim() > 1 else 0,
        rest_sizes[1], rest_sizes[2], *rest_strides, TWO=k == 2, MODE=mode, BLOCK=BLOCK)
