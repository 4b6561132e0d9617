"""Loss ATen operators of same-shaped tensors with a reduction: mse_loss, huber_loss,
soft_margin_loss, binary_cross_entropy_with_logits (two tensors) and margin_ranking_loss (three),
each computed in fp32 and reduced to a 0-d tensor ("mean", the default, or "sum") or returned
elementwise ("none"); and the classification losses cross_entropy and nll_loss (rows of class
scores and a class index per row, with ignore_index)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, from_template, numel
from kgb_sources.aten._elementwise import like_layout

# Small cases: every reduction, the default (no reduction argument passed), a transposed
# (non-contiguous) x, a tensor longer than one 1024-element block and sizes no block divides.
LOSS_CASES = (
    ShapeCase("mean_2d", {"shape": (37, 129), "reduction": "mean"}),
    ShapeCase("default_reduction_transposed", {"shape": (131, 37), "transposed": True}),
    ShapeCase("sum_3d", {"shape": (3, 61, 17), "reduction": "sum"}),
    ShapeCase("none_long_row", {"shape": (5, 2053), "reduction": "none"}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_sum_3d", {"shape": (7, 13, 29), "reduction": "sum"}, heldout=True),
    ShapeCase("llm_mean", {"shape": (4096, 4096), "reduction": "mean"}, tier=LARGE),
    ShapeCase("activations_none", {"shape": (16, 1024, 1024), "reduction": "none"}, tier=LARGE),
)



def _with_param(name: str, values: tuple[float | None, ...]) -> tuple[ShapeCase, ...]:
    return tuple(
        ShapeCase(case.name, {**case.params, name: value}, tier=case.tier, heldout=case.heldout)
        for case, value in zip(LOSS_CASES, values))


HUBER_CASES = _with_param("delta", (0.5, None, 2.0, 1.0, 0.7, 1.0, 0.5))
# margin_ranking_loss's margin (None: the default case passes neither margin nor reduction).
MARGIN_CASES = _with_param("margin", (0.3, None, 0.0, 1.0, 0.5, 0.2, 0.1))


def _reduced_terms(p: Mapping[str, Any]) -> int:
    """A sum accumulates every element; a mean's error is divided back by the count, and
    "none" accumulates nothing, so only "sum" scales atol (1e-4 x numel would let a mean
    divided by numel - 1 pass)."""
    return numel(p["shape"]) if p.get("reduction") == "sum" else 1


def _inputs(target: str) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        shape = tuple(ctx.params["shape"])
        transposed = bool(ctx.params.get("transposed"))
        stored = shape[::-1] if transposed else shape
        x = ctx.randn(*stored)
        if transposed:
            x = x.t()
        if target == "sign":
            y = ctx.randint(*shape, low=0, high=2, dtype=ctx.dtype) * 2 - 1
        elif target == "probability":
            y = ctx.uniform(*shape, low=0.0, high=1.0)
        else:
            y = ctx.randn(*shape)
        if target == "ranked":  # x1, x2 and a sign target; margin comes before reduction
            sign = ctx.randint(*shape, low=0, high=2, dtype=ctx.dtype) * 2 - 1
            inputs: list[Any] = [x, y, sign]
            if ctx.params.get("margin") is not None:
                inputs += [float(ctx.params["margin"]), ctx.params["reduction"]]
            return inputs
        inputs = [x, y]
        if "reduction" in ctx.params:
            inputs.append(ctx.params["reduction"])
            if ctx.params.get("delta") is not None:
                inputs.append(float(ctx.params["delta"]))
        return inputs

    return make


def _keywords(args: tuple[Any, ...]) -> dict[str, Any]:
    """(reduction, delta) as keywords: F.mse_loss's third positional is the old size_average.
    A tensor first is margin_ranking_loss's target, then (margin, reduction)."""
    if args and not isinstance(args[0], str):
        return dict(zip(("target", "margin", "reduction"), args))
    return dict(zip(("reduction", "delta"), args))


def _fp32_reference(name: str) -> Callable[..., Any]:
    """F.<name> computed on fp32 copies of fp16/bf16 inputs, rounded once to their dtype.

    torch's CPU losses round every intermediate of their composite formula to fp16 (measured
    here, torch 2.13: mse_loss "none" is off the fp32-computed value by 1.5x fp16's tolerance),
    so a kernel that follows the fp32 rule would fail against them. Timing compares against the
    native call (the spec's ``baseline``).
    """
    def call(x, y, *args):  # noqa: ANN001, ANN202
        import torch
        import torch.nn.functional as F

        loss = getattr(F, name)
        keywords = _keywords(args)
        if x.dtype in (torch.float16, torch.bfloat16):
            keywords = {k: v.float() if isinstance(v, torch.Tensor) else v
                        for k, v in keywords.items()}
            return loss(x.float(), y.float(), **keywords).to(x.dtype)
        return loss(x, y, **keywords)

    call.__name__ = f"{name}_fp32"
    return call


def _native(name: str) -> Callable[..., Any]:
    def call(x, y, *args):  # noqa: ANN001, ANN202
        import torch.nn.functional as F

        return getattr(F, name)(x, y, **_keywords(args))

    call.__name__ = f"torch_{name}"
    return call


def _loss_op(name: str, *, signature: str, description: str, loss: str, param: str,
             cases: tuple[ShapeCase, ...], target: str = "normal",
             flops_per_element: int = 3, third: str = "x") -> OperatorSpec:
    return aten_op(
        name,
        signature=f"kernel({signature}) -> Tensor",
        description=description + " reduction is 'mean' (the default: the average over all "
                    "elements), 'sum' or 'none' (the elementwise losses, x's shape); mean and "
                    "sum give a 0-d tensor. The output has x's dtype; compute in fp32 and round "
                    "once. x may be non-contiguous; x and y have the same shape.",
        reference=_fp32_reference(name),
        baseline=_native(name),
        make_inputs=_inputs(target),
        cases=cases,
        flops=lambda p: flops_per_element * numel(p["shape"]),
        bytes_moved=lambda p, size: ((2 if third == "x" else 3) * numel(p["shape"]) + (
            numel(p["shape"]) if p.get("reduction") == "none" else 1)) * size,
        tags=("loss",),
        reduce_dim=_reduced_terms,
        reference_kernel=from_template(
            "pointwise_loss", name=f"F.{name}", signature=signature, loss=loss, param=param,
            third=third, has_third=str(third != "x")),
    )


def operators() -> list[OperatorSpec]:
    return [
        _loss_op(
            "mse_loss", signature='x, y, reduction="mean"', cases=LOSS_CASES,
            description="F.mse_loss(x, y, reduction): the squared error (x - y)**2.",
            loss="loss = (a - b) * (a - b)", param="0.0"),
        _loss_op(
            "huber_loss", signature='x, y, reduction="mean", delta=1.0', cases=HUBER_CASES,
            description="F.huber_loss(x, y, reduction, delta=1.0): with d = |x - y|, "
                        "0.5 * d**2 where d < delta, else delta * (d - 0.5 * delta).",
            loss="d = tl.abs(a - b)\n    loss = tl.where(d < p, 0.5 * d * d, p * (d - 0.5 * p))",
            param="delta", flops_per_element=6),
        _loss_op(
            "soft_margin_loss", signature='x, y, reduction="mean"', cases=LOSS_CASES,
            target="sign",
            description="F.soft_margin_loss(x, y, reduction): log(1 + exp(-y * x)), with "
                        "targets y in {-1, 1} (in x's dtype); exp(-y * x) may overflow, so "
                        "compute it stably.",
            loss="z = -b * a\n    loss = tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(z)))",
            param="0.0", flops_per_element=6),
        _loss_op(
            "binary_cross_entropy_with_logits", signature='x, y, reduction="mean"',
            cases=LOSS_CASES, target="probability",
            description="F.binary_cross_entropy_with_logits(x, y, reduction=reduction) with "
                        "its defaults weight=None and pos_weight=None (not passed): "
                        "(1 - y) * x + log(1 + exp(-x)) for logits x and targets y in [0, 1] "
                        "(in x's dtype); exp(-x) overflows for very negative x, so compute "
                        "log(1 + exp(-x)) stably.",
            loss="loss = (1.0 - b) * a + tl.maximum(-a, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(a)))",
            param="0.0", flops_per_element=8),
        _loss_op(
            "margin_ranking_loss", signature='x, y, target, margin=0.0, reduction="mean"',
            cases=MARGIN_CASES, target="ranked",
            description="F.margin_ranking_loss(x1, x2, target, margin=0.0, "
                        "reduction=reduction) (here named x, y, target): "
                        "max(0, -target * (x - y) + margin), targets in {-1, 1} (in x's dtype, "
                        "contiguous).",
            loss="loss = tl.maximum(-c * (a - b) + p, 0.0)",
            param="margin", flops_per_element=4, third="target"),
        *classification_operators(),
    ]


# cross_entropy and nll_loss: rows x classes, reduction, and a share of rows whose target is
# ignore_index (-100, the default, or the case's own); label_smoothing for cross_entropy.
CLASSIFICATION_CASES = (
    ShapeCase("mean_10_classes", {"shape": (37, 10), "reduction": "mean"}),
    ShapeCase("default_with_ignored", {"shape": (64, 129), "ignore_share": 0.25}),
    ShapeCase("sum_wide_vocab", {"shape": (9, 2053), "reduction": "sum", "ignore_index": 3,
                                 "ignore_share": 0.3, "label_smoothing": 0.1}),
    ShapeCase("none_transposed", {"shape": (40, 24), "reduction": "none", "transposed": True,
                                  "ignore_share": 0.2, "label_smoothing": 0.05}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_mean_smoothed", {"shape": (23, 301), "reduction": "mean",
                                        "ignore_share": 0.1, "label_smoothing": 0.2},
              heldout=True),
    ShapeCase("llama3_vocab", {"shape": (4096, 128256), "reduction": "mean"}, tier=LARGE),
    ShapeCase("classifier_head", {"shape": (65536, 1000), "reduction": "mean",
                                  "ignore_share": 0.1}, tier=LARGE),
)


def _classification_inputs(log_probabilities: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        torch = ctx.torch
        rows, classes = ctx.params["shape"]
        if ctx.params.get("transposed"):
            x = ctx.randn(classes, rows, scale=2.0).t()
        else:
            x = ctx.randn(rows, classes, scale=2.0)
        if log_probabilities:  # in the case's layout still (a transposed x stays one)
            x = like_layout(torch.log_softmax(x.float(), dim=1).to(x.dtype), x)
        target = ctx.randint(rows, low=0, high=classes)
        ignore_index = ctx.params.get("ignore_index", -100)
        ignored = ctx.uniform(rows, low=0.0, high=1.0, dtype=torch.float32) < \
            ctx.params.get("ignore_share", 0.0)
        target = torch.where(ignored.to(target.device), torch.full_like(target, ignore_index),
                             target)
        if "reduction" not in ctx.params:
            return [x, target]
        inputs = [x, target, ctx.params["reduction"], ignore_index]
        if not log_probabilities:
            inputs.append(float(ctx.params.get("label_smoothing", 0.0)))
        return inputs

    return make


def _classification_reference(name: str, in_fp32: bool) -> Callable[..., Any]:
    names = ("reduction", "ignore_index", "label_smoothing")

    def call(x, target, *args):  # noqa: ANN001, ANN202
        import torch
        import torch.nn.functional as F

        keywords = dict(zip(names, args))
        if in_fp32 and x.dtype in (torch.float16, torch.bfloat16):
            return getattr(F, name)(x.float(), target, **keywords).to(x.dtype)
        return getattr(F, name)(x, target, **keywords)

    call.__name__ = f"{name}_fp32" if in_fp32 else f"torch_{name}"
    return call


def _classification_op(name: str, *, signature: str, description: str,
                       logits: bool) -> OperatorSpec:
    return aten_op(
        name,
        signature=f"kernel({signature}) -> Tensor",
        description=description + " x has shape (N, C) (possibly non-contiguous) and target "
                    "(N,) int64 class indices; rows whose target equals ignore_index count as "
                    "0 and are left out of the mean. reduction is 'mean' (the default: the "
                    "sum over counted rows divided by their number), 'sum' or 'none' (one loss "
                    "per row, ignored rows 0); mean and sum give a 0-d tensor. The output has "
                    "x's dtype; compute in fp32 and round once.",
        reference=_classification_reference(name, in_fp32=True),
        baseline=_classification_reference(name, in_fp32=False),
        make_inputs=_classification_inputs(log_probabilities=not logits),
        cases=CLASSIFICATION_CASES,
        flops=lambda p: (4 if logits else 1) * numel(p["shape"]),
        bytes_moved=lambda p, size: (numel(p["shape"]) if logits else 2 * p["shape"][0]) * size
        + 8 * p["shape"][0],
        tags=("loss", "classification"),
        reference_kernel=from_template("classification_loss", name=name, logits=str(logits)),
    )


def classification_operators() -> list[OperatorSpec]:
    return [
        _classification_op(
            "cross_entropy",
            signature='x, target, reduction="mean", ignore_index=-100, label_smoothing=0.0',
            description="F.cross_entropy(x, target, reduction=..., ignore_index=..., "
                        "label_smoothing=...) on logits x, weight=None: per row "
                        "(1 - s) * (-log_softmax(x)[target]) + s * (-mean_c log_softmax(x)[c]) "
                        "for label_smoothing s; the softmax needs a stable log-sum-exp over "
                        "all C classes.",
            logits=True),
        _classification_op(
            "nll_loss",
            signature='x, target, reduction="mean", ignore_index=-100',
            description="F.nll_loss(x, target, reduction=..., ignore_index=...) on "
                        "log-probabilities x, weight=None: per row -x[target].",
            logits=False),
    ]
