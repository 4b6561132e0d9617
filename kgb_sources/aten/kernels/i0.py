# i0, the modified Bessel function of the first kind of order 0, as ATen computes it
# (aten/src/ATen/native/Math.h, calc_i0, from Cephes): exp(|x|) times a Chebyshev series for
# exp(-x) I0(x) on [0, 8], and exp(x) / sqrt(x) times another on (8, inf). The series are cut
# to the terms that matter in fp32 (Cephes' i0f): the dropped ones are below 3e-9.
# The Chebyshev sums use Clenshaw's recurrence, unrolled (b0 <- y*b1 - b2 + c).
import torch
import triton
import triton.language as tl


@triton.jit
def _i0_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.abs(tl.load(x_ptr + offsets, mask=mask).to(tl.float32))
    # [0, 8]: y = a/2 - 2 maps it onto [-2, 2], the Chebyshev series' argument (2 * t).
    y = 0.5 * a - 2.0
    a0 = -1.30002500998624804212E-8 + 0.0 * y
    a1 = 0.0 * y
    a2 = 0.0 * y
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 6.04699502254191894932E-8
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -2.67079385394061173391E-7
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 1.11738753912010371815E-6
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -4.41673835845875056359E-6
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 1.64484480707288970893E-5
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -5.75419501008210370398E-5
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 1.88502885095841655729E-4
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -5.76375574538582365885E-4
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 1.63947561694133579842E-3
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -4.32430999505057594430E-3
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 1.05464603945949983183E-2
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -2.37374148058994688156E-2
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 4.93052842396707084878E-2
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -9.49010970480476444210E-2
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 1.71620901522208775349E-1
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + -3.04682672343198398683E-1
    a2 = a1
    a1 = a0
    a0 = y * a1 - a2 + 6.76795274409476084995E-1
    small = 0.5 * (a0 - a2)
    # (8, inf): the series in 32/a - 2; a is clamped so the unselected branch never divides by 0.
    w = 32.0 / tl.maximum(a, 8.0) - 2.0
    b0 = 3.39623202570838634515E-9 + 0.0 * w
    b1 = 0.0 * w
    b2 = 0.0 * w
    b2 = b1
    b1 = b0
    b0 = w * b1 - b2 + 2.26666899049817806459E-8
    b2 = b1
    b1 = b0
    b0 = w * b1 - b2 + 2.04891858946906374183E-7
    b2 = b1
    b1 = b0
    b0 = w * b1 - b2 + 2.89137052083475648297E-6
    b2 = b1
    b1 = b0
    b0 = w * b1 - b2 + 6.88975834691682398426E-5
    b2 = b1
    b1 = b0
    b0 = w * b1 - b2 + 3.36911647825569408990E-3
    b2 = b1
    b1 = b0
    b0 = w * b1 - b2 + 8.04490411014108831608E-1
    large = 0.5 * (b0 - b2) / tl.sqrt(tl.maximum(a, 8.0))
    y = tl.exp(a) * tl.where(a <= 8.0, small, large)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_elements = x.numel()
    if n_elements:
        block = 1024
        _i0_kernel[(triton.cdiv(n_elements, block),)](x, out, n_elements, BLOCK=block)
    return out
