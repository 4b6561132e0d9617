"""The fp16/bf16 references of conv1d, conv2d, conv2d_depthwise, baddbmm and
affine_grid_generator: the float32 computation from the half-precision inputs, rounded once to
their dtype, with the native call kept as the timing baseline.

On an H200 a correct fp32-accumulating kernel failed against the native bf16 calls (ATen adds
the bias to cuDNN's already rounded conv output, baddbmm was one rounding of the product off,
ATen's bf16 linspace rounds its indices), so these pin the rule with torch alone, on the CPU,
with torch alone.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from kgb_core.evaluation import verdicts
from kgb_core.operators import InputContext, ShapeCase
from kgb_core.plugins import load_registry

HALF = ("float16", "bfloat16")


def _conv(groups_of):  # noqa: ANN001, ANN202
    def call(x, weight, bias, stride, padding, dilation):  # noqa: ANN001, ANN202
        conv = F.conv1d if x.dim() == 3 else F.conv2d
        return conv(x, weight, bias, stride, padding, dilation, groups_of(x))
    return call


def _baddbmm(self_value, batch1, batch2, beta, alpha):  # noqa: ANN001, ANN202
    return torch.baddbmm(self_value, batch1, batch2, beta=beta, alpha=alpha)


def _affine(theta, size, align_corners):  # noqa: ANN001, ANN202
    return torch.ops.aten.affine_grid_generator(theta, size, align_corners)


# The operator written out independently of the spec: what it computes for given inputs.
NATIVE = {
    "conv1d": _conv(lambda x: 1),
    "conv2d": _conv(lambda x: 1),
    "conv2d_depthwise": _conv(lambda x: x.shape[1]),
    "baddbmm": _baddbmm,
    "affine_grid_generator": _affine,
}


def _abs_args(inputs):  # noqa: ANN001, ANN202
    return [abs(a) if isinstance(a, (torch.Tensor, float)) else a for a in inputs]


def _affine_magnitude(theta, size, align_corners):  # noqa: ANN001, ANN202
    n, _, h, w = size
    return theta.abs().sum(-1)[:, None, None, :].expand(n, h, w, 2)


def _terms_of(call):  # noqa: ANN001, ANN202
    """call on the inputs' magnitudes: per output, the sum of |term| over what it adds up."""
    def magnitude(*args):  # noqa: ANN002, ANN202
        return call(*_abs_args(args))
    return magnitude


# Per output, the total size of its terms (|coordinates| <= 1 for the grid): the scale of
# fp32's own rounding error, which survives a cancelling sum.
MAGNITUDE = {"conv1d": _terms_of(NATIVE["conv1d"]), "conv2d": _terms_of(NATIVE["conv2d"]),
             "conv2d_depthwise": _terms_of(NATIVE["conv2d_depthwise"]),
             "baddbmm": _terms_of(NATIVE["baddbmm"]),
             "affine_grid_generator": _affine_magnitude}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["aten"])}


def _small_inputs(spec, dtype):  # noqa: ANN001, ANN202
    for case in spec.cases:
        if case.tier == "small":
            yield case, spec.make_inputs(InputContext(case, dtype, 0, "cpu"))


def _widened(inputs, dtype):  # noqa: ANN001, ANN202
    return [a.to(dtype) if isinstance(a, torch.Tensor) else a for a in inputs]


def _one_rounding(exact: torch.Tensor, magnitude: torch.Tensor, terms: int,
                  dtype: torch.dtype) -> torch.Tensor:
    """How far from the float64 value one rounding to dtype of an fp32 sum may land: half an
    ulp of dtype, plus fp32's error for a sum of ``terms`` terms of total size magnitude."""
    info = torch.finfo(dtype)
    spacing = info.eps * torch.exp2(torch.floor(torch.log2(exact.abs().clamp(min=info.tiny))))
    fp32_error = (terms + 4) * 2.0**-24 * magnitude.double()
    return 0.5 * spacing * (1 + 2**-10) + 2 * fp32_error


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", sorted(NATIVE))
def test_half_reference_is_the_fp32_computation_rounded_once(specs, op, dtype):
    spec = specs[op]
    for case, inputs in _small_inputs(spec, dtype):
        reference = spec.reference(*inputs)
        expected = NATIVE[op](*_widened(inputs, torch.float32)).to(reference.dtype)
        assert torch.equal(reference, expected), f"{op} {case.name}: not fp32 rounded once"
        # Rounded once: within half an ulp of the float64 value, give or take fp32's error.
        exact = NATIVE[op](*_widened(inputs, torch.float64))
        bound = _one_rounding(exact, MAGNITUDE[op](*_widened(inputs, torch.float64)),
                              spec.reduce_dim(case.params), reference.dtype)
        outside = int(((reference.double() - exact).abs() > bound).sum())
        assert not outside, f"{op} {case.name}: {outside} elements off by more than one rounding"


@pytest.mark.parametrize("op", sorted(NATIVE))
def test_timing_baseline_is_the_native_call_and_fp32_is_unchanged(specs, op):
    spec = specs[op]
    assert spec.baseline is not None and spec.timing_baseline is not spec.reference
    for case, inputs in _small_inputs(spec, "bfloat16"):
        assert torch.equal(spec.timing_baseline(*inputs), NATIVE[op](*inputs)), case.name
    for case, inputs in _small_inputs(spec, "float32"):
        assert torch.equal(spec.reference(*inputs), NATIVE[op](*inputs)), case.name


def test_affine_reference_keeps_exact_indices_past_bf16s_integers(specs):
    """At 1080 x 1920 (the hd_align case's size) bf16 cannot hold the linspace indices, and
    ATen's bf16 grid, built in c10's bf16 arithmetic, is off the exact one by several ulps;
    the reference is within one rounding of the float64 grid."""
    spec = specs["affine_grid_generator"]
    case = ShapeCase("hd", {"size": (1, 1, 1080, 1920), "align_corners": True})
    theta, size, align_corners = spec.make_inputs(InputContext(case, "bfloat16", 0, "cpu"))
    h, w = size[2], size[3]
    y = -1 + 2 * torch.arange(h, dtype=torch.float64) / (h - 1)
    x = -1 + 2 * torch.arange(w, dtype=torch.float64) / (w - 1)
    base = torch.stack([x.expand(h, w), y[:, None].expand(h, w), torch.ones(h, w,
                        dtype=torch.float64)], dim=-1)
    exact = (base @ theta[0].double().T)[None]
    bound = _one_rounding(exact, _affine_magnitude(theta, size, align_corners), 3,
                          torch.bfloat16)
    reference = spec.reference(theta, size, align_corners)
    assert bool(((reference.double() - exact).abs() <= bound).all())
    # ATen's own bf16 grid misses the exact one by up to 0.019 here (torch 2.13), and 30913 of
    # its 4147200 values lie outside the checker's tolerance of the reference (atol 0.0003).
    native = spec.timing_baseline(theta, size, align_corners)
    native_outside = int(((native.double() - exact).abs() > bound).sum())
    assert native_outside > exact.numel() // 100, \
        "ATen's bf16 grid is now rounded once: the fp32 reference may no longer be needed"


def test_kernel_that_rounds_the_affine_coordinates_to_the_dtype_is_rejected(cpu_evaluator,
                                                                           specs):
    """A grid built from coordinates rounded to theta's dtype (as ATen's own fp16 path does)
    fails the fp16 cases on the CPU: the rule is enforced, not only written down."""
    source = specs["affine_grid_generator"].reference_kernel()
    original = ("    x = _coordinate(w, W, ALIGN_CORNERS)\n"
                "    y = _coordinate(h, H, ALIGN_CORNERS)\n")
    assert original in source, "the affine_grid_generator kernel changed: update the edit"
    rounded = ("    x = _coordinate(w, W, ALIGN_CORNERS).to(dtype).to(tl.float32)\n"
               "    y = _coordinate(h, H, ALIGN_CORNERS).to(dtype).to(tl.float32)\n")
    result = cpu_evaluator.evaluate("aten.affine_grid_generator",
                                    source.replace(original, rounded))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{result.verdict}: {result.message}"
