# affine_grid_generator (= F.affine_grid for 4-D sizes): for theta (N, 2, 3) and size
# (N, C, H, W), grid[n, h, w] = theta[n] @ (x_w, y_h, 1), where x (length W) and y (length H)
# are ATen's linspace_from_neg_one: linspace(-1, 1, steps), times (steps - 1) / steps unless
# align_corners, and 0 when steps == 1. Everything is computed in fp32 (the coordinates in
# ATen's fp32 order of operations, the 3-term product from theta's values) and rounded once to
# theta's dtype at the store; ATen's own fp16/bf16 path rounds the coordinates to the dtype
# first, which the benchmark's reference does not (see _affine_reference in vision.py). Each
# program computes BLOCK grid points, both components.
import torch
import triton
import triton.language as tl


@triton.jit
def _coordinate(index, steps, ALIGN_CORNERS: tl.constexpr):
    """linspace_from_neg_one(steps, align_corners)[index] in fp32, in ATen's order of operations."""
    steps_f = steps.to(tl.float32)
    # div_rn: a correctly rounded quotient (a plain '/' may be approximate on GPUs).
    step = tl.math.div_rn(2.0, tl.maximum(steps_f - 1.0, 1.0))
    forward = -1.0 + step * index.to(tl.float32)
    backward = 1.0 - step * (steps - 1 - index).to(tl.float32)
    value = tl.where(index < steps // 2, forward, backward)
    if not ALIGN_CORNERS:
        value = tl.math.div_rn(value * (steps_f - 1.0), steps_f)
    return tl.where(steps > 1, value, 0.0)


@triton.jit
def _affine_grid_kernel(theta_ptr, grid_ptr, total, H, W, st_n, st_r, st_c,
                        ALIGN_CORNERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    w = offs % W
    h = (offs // W) % H
    n = offs // (W * H)
    dtype = grid_ptr.dtype.element_ty
    x = _coordinate(w, W, ALIGN_CORNERS)
    y = _coordinate(h, H, ALIGN_CORNERS)
    base = theta_ptr + n * st_n
    for row in range(0, 2):
        t0 = tl.load(base + row * st_r, mask=mask, other=0.0).to(tl.float32)
        t1 = tl.load(base + row * st_r + st_c, mask=mask, other=0.0).to(tl.float32)
        t2 = tl.load(base + row * st_r + 2 * st_c, mask=mask, other=0.0).to(tl.float32)
        value = x * t0 + y * t1 + t2
        tl.store(grid_ptr + offs * 2 + row, value.to(dtype), mask=mask)


def kernel(theta: torch.Tensor, size, align_corners: bool) -> torch.Tensor:
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3) or len(size) != 4:
        raise ValueError(f"affine_grid_generator needs theta (N, 2, 3) and a 4-D size, got "
                         f"{tuple(theta.shape)} and {list(size)}")
    n, _, h, w = (int(s) for s in size)
    grid = torch.empty((n, h, w, 2), dtype=theta.dtype, device=theta.device)
    total = n * h * w
    if total:
        block = 1024
        _affine_grid_kernel[(triton.cdiv(total, block),)](
            theta, grid, total, h, w, theta.stride(0), theta.stride(1), theta.stride(2),
            ALIGN_CORNERS=bool(align_corners), BLOCK=block)
    return grid
