"""The copies, normalization and p-norm ops of the aten source: present under one category,
and plausible-but-wrong kernels (one targeted edit of the reference kernel each) rejected on
their values or layout."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

REGISTRY = load_registry()
CATEGORY = {
    "clone": "movement", "contiguous": "movement", "_to_copy": "movement", "copy_": "movement",
    "renorm": "norm", "pairwise_distance": "reduction", "layer_norm": "norm",
    "rms_norm": "norm", "group_norm": "norm", "batch_norm": "norm",
}
CATEGORIES = {"pointwise", "reduction", "norm", "gemm", "conv", "pool", "index", "movement",
              "creation", "loss", "attention", "scan", "sort"}


@pytest.mark.parametrize("name", sorted(CATEGORY))
def test_operator_is_present_with_its_category(name):
    spec = REGISTRY.operator(f"aten.{name}")
    assert spec.tags & CATEGORIES == {CATEGORY[name]}


# (op, bug, text in the reference kernel, its wrong replacement)
WRONG_KERNELS = [
    ("contiguous", "keeps_the_input_strides",
     "out = torch.empty(x.shape, dtype=x.dtype, device=x.device)",
     "out = torch.empty_like(x)"),
    ("copy_", "writes_a_new_tensor_not_self",
     "return _elementwise(self, [src], compute_float=False)",
     "return _elementwise(torch.empty_like(self), [src], compute_float=False)"),
    ("renorm", "every_slice_scaled",
     "factor = tl.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)",
     "factor = maxnorm / (norm + 1e-7)"),
    ("pairwise_distance", "eps_ignored",
     "d = tl.abs(a.to(tl.float32) - b.to(tl.float32) + eps)",
     "d = tl.abs(a.to(tl.float32) - b.to(tl.float32))"),
    ("group_norm", "weight_indexed_by_group",
     "channel = group * channels_per_group + idx // spatial", "channel = group + idx * 0"),
    ("batch_norm", "eps_outside_the_sqrt",
     "tl.sqrt(var + eps)", "(tl.sqrt(var) + eps)"),
]


@pytest.mark.parametrize("op,bug,old,new", WRONG_KERNELS,
                         ids=[f"{op}-{bug}" for op, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, op, bug, old, new):
    spec = REGISTRY.operator(f"aten.{op}")
    reference = spec.reference_kernel()
    assert old in reference, f"the {bug} edit no longer applies to {op}'s kernel"
    result = cpu_evaluator.evaluate(spec.id, reference.replace(old, new))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED,
                              verdicts.WRONG_SHAPE_OR_DTYPE), \
        f"{bug}: {result.verdict}: {result.message}"
