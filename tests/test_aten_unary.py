"""The unary, activation and pointwise-backward ATen operators: every one is present with its
category tag, and plausible-but-wrong kernels, each one targeted edit away from the shipped
reference kernel, are rejected."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry
from kgb_sources.aten.inventory import MC110, MC110_TAG

CATEGORY_TAGS = {"pointwise", "reduction", "norm", "gemm", "conv", "pool", "index", "movement",
                 "creation", "loss", "attention", "scan", "sort"}

# name -> its category tag
FAMILY = {
    **{name: "pointwise" for name in (
        # published (mc110)
        "acosh", "asin", "cosh", "erfc", "floor", "log10", "i0", "special_entr", "square", "sgn",
        "mish", "hardsigmoid", "logit", "bitwise_not", "polygamma", "prelu", "rrelu_with_noise",
        "rrelu_with_noise_backward", "mish_backward", "softplus_backward",
        "log_sigmoid_backward", "clamp",
        # the others
        "gelu_tanh", "hardswish", "softplus", "elu", "leaky_relu", "erf", "exp2", "log", "sqrt",
        "reciprocal")},
    "smooth_l1_loss_backward": "loss",
}

SPECS = {spec.name: spec for spec in load_registry().operators(["aten"])}


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_operator_is_present_with_its_category(name):
    spec = SPECS[name]
    assert spec.tags & CATEGORY_TAGS == {FAMILY[name]}
    assert (MC110_TAG in spec.tags) == (name in MC110)
    if name.endswith("_backward"):
        assert "backward" in spec.tags
    assert "elementwise" in spec.tags


def test_every_published_operator_of_the_family_is_in_mc110():
    published = {"acosh", "asin", "cosh", "erfc", "floor", "log10", "i0", "special_entr",
                 "square", "sgn", "mish", "hardsigmoid", "logit", "bitwise_not", "polygamma",
                 "prelu", "rrelu_with_noise", "rrelu_with_noise_backward", "mish_backward",
                 "softplus_backward", "log_sigmoid_backward", "smooth_l1_loss_backward",
                 "clamp"}
    assert all(MC110_TAG in SPECS[name].tags for name in published)


# op, test id naming the bug, text in the reference kernel, its wrong replacement
WRONG_KERNELS = [
    ("hardsigmoid", "slope_one_fifth_instead_of_one_sixth",
     "tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0",
     "tl.minimum(tl.maximum(x / 5.0 + 0.5, 0.0), 1.0)"),
    ("softplus", "ignores_threshold",
     "y = tl.where(bx > threshold, x, log1p / beta)", "y = log1p / beta"),
    ("leaky_relu", "default_slope_0.1_not_0.01",
     "negative_slope: float = 0.01", "negative_slope: float = 0.1"),
    ("gelu_tanh", "missing_cubic_term",
     "(x + 0.044715 * x * x * x)", "(x)"),
    ("prelu", "weight_over_last_dim_not_dim_1",
     "channel = (offsets // inner) % n_weights", "channel = offsets % n_weights"),
    ("sgn", "sign_of_zero_is_one",
     "tl.where(x > 0, 1.0, tl.where(x < 0, -1.0, x))", "tl.where(x >= 0, 1.0, -1.0)"),
    ("bitwise_not", "int64_computed_in_32_bits",
     "y = ~x", "y = (~(x.to(tl.int32))).to(x.dtype)"),
    ("smooth_l1_loss_backward", "mean_not_divided_by_numel",
     "norm = 1.0 / n_elements if reduction == 1 else 1.0", "norm = 1.0"),
    ("rrelu_with_noise", "slope_lower_not_midpoint",
     "(float(lower) + float(upper)) / 2.0", "float(lower)"),
    ("i0", "small_argument_series_everywhere",
     "tl.where(a <= 8.0, small, large)", "small"),
    ("log_sigmoid_backward", "same_branch_for_negative_x",
     "tl.where(x < 0, 1.0 - ratio, ratio)", "ratio"),
    ("polygamma", "recurrence_term_sign_flipped_for_n2",
     "acc -= tl.where(below, 2.0 * inv * inv * inv, 0.0)",
     "acc += tl.where(below, 2.0 * inv * inv * inv, 0.0)"),
]


@pytest.mark.parametrize("name,bug,right,wrong", WRONG_KERNELS,
                         ids=[f"{row[0]}-{row[1]}" for row in WRONG_KERNELS])
def test_a_plausible_wrong_kernel_is_rejected(cpu_evaluator, name, bug, right, wrong):
    reference = SPECS[name].reference_kernel()
    # (Template kernels name their expression twice: in the header comment and the code.)
    assert right in reference, f"{bug}: the reference kernel changed"
    result = cpu_evaluator.evaluate(f"aten.{name}", reference.replace(right, wrong))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
