"""The reduction, scan and softmax family's own checks: every operator is present with its
category tag, and plausible-but-wrong kernels (one targeted edit of the reference kernel each)
are rejected."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

REGISTRY = load_registry()

CATEGORY = {
    "amin": "reduction", "argmin": "reduction", "prod": "reduction", "logsumexp": "reduction",
    "var": "reduction", "std": "reduction", "norm": "reduction", "cumprod": "scan",
    "softmax": "reduction", "log_softmax": "reduction", "diff": "pointwise",
}
CATEGORIES = {"pointwise", "reduction", "norm", "gemm", "conv", "pool", "index", "movement",
              "creation", "loss", "attention", "scan", "sort"}


@pytest.mark.parametrize("name", sorted(CATEGORY))
def test_operator_is_present_with_one_category_tag(name):
    spec = REGISTRY.operator(f"aten.{name}")
    assert spec.tags & CATEGORIES == {CATEGORY[name]}


# (op, bug, text in the reference kernel, its wrong replacement)
WRONG_KERNELS = [
    ("var", "correction_0_instead_of_1",
     "max(n_cols - correction, 0)", "max(n_cols, 0)"),
    ("argmin", "last_index_on_ties",
     "chunk_index = tl.min(tl.where(is_min, cols[None, :], n_cols), axis=1)\n"
     "        better = chunk_min < best_value",
     "chunk_index = tl.max(tl.where(is_min, cols[None, :], -1), axis=1)\n"
     "        better = chunk_min <= best_value"),
    ("logsumexp", "no_max_subtraction",
     "row_max = tl.where(row_mask, row_max, 0.0)", "row_max = tl.where(row_mask, 0.0, 0.0)"),
    ("softmax", "no_max_subtraction",
     "y = tl.exp(x - row_max) * inv_sum", "y = tl.exp(x) * (1.0 / tl.sum(s * tl.exp(m), axis=0))"),
    ("norm", "l1_without_abs", "acc += tl.abs(x)", "acc += x"),
    ("diff", "backward_difference", "right.to(tl.float32) - left.to(tl.float32)",
     "left.to(tl.float32) - right.to(tl.float32)"),
    ("cumprod", "carry_dropped_between_chunks",
     "tl.cumprod(x, axis=1) * carry[:, None]", "tl.cumprod(x, axis=1)"),
]


@pytest.mark.parametrize("op,bug,old,new", WRONG_KERNELS,
                         ids=[f"{op}-{bug}" for op, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, op, bug, old, new):
    spec = REGISTRY.operator(f"aten.{op}")
    reference = spec.reference_kernel()
    assert old in reference, f"the {bug} edit no longer applies to {op}'s kernel"
    wrong = reference.replace(old, new)
    result = cpu_evaluator.evaluate(spec.id, wrong)
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
