"""The loss family's own checks: every operator is present with its category tag, and
plausible-but-wrong kernels (one targeted edit of the reference kernel each) are rejected."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

REGISTRY = load_registry()
LOSSES = ("mse_loss", "huber_loss", "soft_margin_loss", "binary_cross_entropy_with_logits",
          "margin_ranking_loss", "cross_entropy", "nll_loss")
CATEGORIES = {"pointwise", "reduction", "norm", "gemm", "conv", "pool", "index", "movement",
              "creation", "loss", "attention", "scan", "sort"}


@pytest.mark.parametrize("name", LOSSES)
def test_operator_is_present_with_the_loss_tag(name):
    spec = REGISTRY.operator(f"aten.{name}")
    assert spec.tags & CATEGORIES == {"loss"}


# (op, bug, text in the reference kernel, its wrong replacement)
WRONG_KERNELS = [
    ("mse_loss", "sum_instead_of_mean",
     'divisor = float(n) if reduction == "mean" else 1.0', "divisor = 1.0"),
    ("huber_loss", "quadratic_branch_without_half",
     "tl.where(d < p, 0.5 * d * d,", "tl.where(d < p, d * d,"),
    ("soft_margin_loss", "target_sign_ignored", "z = -b * a", "z = -a"),
    ("binary_cross_entropy_with_logits", "unstable_softplus_drops_the_max_term",
     "tl.maximum(-a, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(a)))", "tl.log(1.0 + tl.exp(-tl.abs(a)))"),
    ("margin_ranking_loss", "margin_ignored", "-c * (a - b) + p", "-c * (a - b)"),
    ("cross_entropy", "ignored_rows_counted_in_the_mean",
     "tl.store(counted_ptr + row, counted.to(tl.float32))",
     "tl.store(counted_ptr + row, 1.0)"),
    ("cross_entropy", "label_smoothing_ignored",
     "loss = (1.0 - smoothing) * nll + smoothing * smooth", "loss = nll"),
    ("nll_loss", "ignore_index_not_applied",
     "tl.store(loss_ptr + row, tl.where(counted, loss, 0.0))", "tl.store(loss_ptr + row, loss)"),
]


@pytest.mark.parametrize("op,bug,old,new", WRONG_KERNELS,
                         ids=[f"{op}-{bug}" for op, bug, _, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, op, bug, old, new):
    spec = REGISTRY.operator(f"aten.{op}")
    reference = spec.reference_kernel()
    assert old in reference, f"the {bug} edit no longer applies to {op}'s kernel"
    result = cpu_evaluator.evaluate(spec.id, reference.replace(old, new))
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED), \
        f"{bug}: {result.verdict}: {result.message}"
