"""The matmul, convolution, pooling, attention and vision families of the aten source: every
operator is present under its name and category, and plausible-but-wrong kernels, made from the
reference kernels by one targeted edit each, are rejected on their values."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

CATEGORIES = {
    "mm": "gemm", "addmm": "gemm", "bmm": "gemm", "matmul": "gemm", "linear": "gemm",
    "baddbmm": "gemm", "mv": "gemm", "addmv": "gemm", "outer": "gemm", "dot": "gemm",
    "affine_grid_generator": "gemm",
    "conv1d": "conv", "conv2d": "conv", "conv2d_depthwise": "conv", "im2col": "conv",
    "max_pool2d": "pool", "avg_pool2d": "pool", "adaptive_avg_pool2d": "pool",
    "upsample_nearest2d_backward": "pool",
    "scaled_dot_product_attention": "attention",
}
ALL_CATEGORIES = {"pointwise", "reduction", "norm", "gemm", "conv", "pool", "index", "movement",
                  "creation", "loss", "attention", "scan", "sort"}
PUBLISHED = {"matmul", "linear", "im2col", "affine_grid_generator",
             "upsample_nearest2d_backward", "mm", "bmm"}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["aten"])}


def test_family_operators_are_present_with_one_category_each(specs):
    missing = sorted(set(CATEGORIES) - set(specs))
    assert not missing, f"missing aten operators: {missing}"
    for name, category in CATEGORIES.items():
        assert specs[name].tags & ALL_CATEGORIES == {category}, (name, sorted(specs[name].tags))
    for name in PUBLISHED:
        assert "mc110" in specs[name].tags, name
    for name in set(CATEGORIES) - PUBLISHED - {"addmm"}:
        assert "mc110" not in specs[name].tags, name


def test_family_operators_have_one_heldout_and_large_cases(specs):
    for name in CATEGORIES:
        cases = specs[name].cases
        assert sum(case.heldout for case in cases) == 1, name
        assert any(case.tier == "large" for case in cases), name
        assert all(case.tier == "small" for case in cases if case.heldout), name


# (operator, what the edit breaks, text in the reference kernel, its wrong replacement).
WRONG_KERNELS = [
    ("linear", "weight_read_without_transpose",
     "weight.stride(1), weight.stride(0)", "weight.stride(0), weight.stride(1)"),
    ("scaled_dot_product_attention", "causal_mask_excludes_the_diagonal",
     "offs_n[None, :] <= offs_m[:, None]", "offs_n[None, :] < offs_m[:, None]"),
    ("baddbmm", "beta_ignored",
     "out += beta * s.to(tl.float32)", "out += s.to(tl.float32)"),
    ("conv2d", "padding_applied_on_one_side_only",
     "ih = oh[:, None] * stride_h - pad_h + kh[None, :] * dil_h",
     "ih = oh[:, None] * stride_h + kh[None, :] * dil_h"),
    ("avg_pool2d", "count_include_pad_inverted",
     "COUNT_PAD=bool(count_include_pad)", "COUNT_PAD=not count_include_pad"),
    ("adaptive_avg_pool2d", "floor_end_bins",
     "end_h = ((oh + 1) * H + OH - 1) // OH", "end_h = ((oh + 1) * H) // OH"),
    ("upsample_nearest2d_backward", "rounded_instead_of_floored_source",
     "tl.floor(dst.to(tl.float32) * scale)", "tl.floor(dst.to(tl.float32) * scale + 0.5)"),
    ("affine_grid_generator", "align_corners_inverted",
     "ALIGN_CORNERS=bool(align_corners)", "ALIGN_CORNERS=not align_corners"),
    ("max_pool2d", "zero_padding_instead_of_minus_inf",
     'mask=ok, other=float("-inf")', "mask=ok, other=0.0"),
    ("im2col", "dilation_ignored", "+ kh * dil_h", "+ kh"),
    ("matmul", "broadcast_batch_dim_read_with_stride_0_everywhere",
     "sb[0], sb[1], b2.stride(-2)", "0, 0, b2.stride(-2)"),
]


@pytest.mark.parametrize("name, bug, original, wrong", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, original, wrong):
    source = specs[name].reference_kernel()
    assert original in source, f"the reference kernel of {name} changed: update the edit"
    broken = source.replace(original, wrong)
    result = cpu_evaluator.evaluate(f"aten.{name}", broken)
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
