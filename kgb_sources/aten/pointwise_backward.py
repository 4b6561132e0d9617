"""Backward ops of pointwise activations and of smooth_l1_loss: each maps grad_output and the
forward's input (and the op's scalars) to grad_input, elementwise.

grad_output and the inputs are drawn alike, and the transposed cases make every tensor
argument a transposed view, so a kernel must use strides or copy.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, numel

# The shapes every op here is checked on; ops with scalars add theirs to these.
SHAPES = (
    ("scalar", {"shape": ()}),
    ("odd_2d", {"shape": (37, 129)}),
    ("transposed", {"shape": (33, 64), "transposed": True}),
    ("prime_3d", {"shape": (3, 17, 61)}),
)
HELDOUT_SHAPE = {"shape": (2, 7, 11, 13)}
LARGE_SHAPES = (
    ("llm_hidden", {"shape": (4096, 4096)}),
    ("llm_mlp", {"shape": (16, 1024, 4096)}),
)


def _cases(shown: Sequence[Mapping[str, Any]], heldout: Mapping[str, Any],
           large: Sequence[Mapping[str, Any]]) -> tuple[ShapeCase, ...]:
    """SHAPES with the op's scalars, one per shown case, then the held-out and large ones."""
    cases = [ShapeCase(name, {**params, **extra}) for (name, params), extra
             in zip(SHAPES, shown)]
    # Held out: checked, never shown (see ShapeCase.heldout).
    cases.append(ShapeCase("heldout_4d", {**HELDOUT_SHAPE, **heldout}, heldout=True))
    cases += [ShapeCase(name, {**params, **extra}, tier=LARGE)
              for (name, params), extra in zip(LARGE_SHAPES, large)]
    return tuple(cases)


def _drawn(ctx: InputContext, scale: float = 1.0) -> Any:
    shape = tuple(ctx.params["shape"])
    if ctx.params.get("transposed"):
        return ctx.randn(*shape[::-1], scale=scale).t()
    return ctx.randn(*shape, scale=scale)


def _elements(p: Mapping[str, Any]) -> int:
    return numel(p["shape"])


def _moved(tensors: int) -> Callable[[Mapping[str, Any], int], float]:
    """Bytes for ``tensors`` full-size tensors read or written."""
    return lambda p, size: tensors * _elements(p) * size


def _per_element(count: int) -> Callable[[Mapping[str, Any]], float]:
    return lambda p: count * _elements(p)


def _aten(name: str) -> Callable[..., Any]:
    def call(*args):  # noqa: ANN002, ANN202
        import torch

        return getattr(torch.ops.aten, name)(*args)

    call.__name__ = f"aten_{name}"
    return call


# -- inputs ----------------------------------------------------------------------------------
def _grad_and_x(scale: float) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        grad_output = _drawn(ctx)
        x = _drawn(ctx, scale)
        return [grad_output, x]

    return make


def _softplus_backward_inputs(ctx: InputContext) -> list[Any]:
    return _grad_and_x(4.0)(ctx) + [ctx.params["beta"], ctx.params["threshold"]]


def _log_sigmoid_backward_inputs(ctx: InputContext) -> list[Any]:
    grad_output, x = _grad_and_x(3.0)(ctx)
    # What log_sigmoid_forward leaves in its buffer on the CPU: exp(-|x|), in x's dtype (its
    # CUDA kernel leaves it empty and log_sigmoid_backward there recomputes it from x).
    buffer = (-x.float().abs()).exp().to(x.dtype)
    return [grad_output, x, buffer]


def _rrelu_backward_inputs(ctx: InputContext) -> list[Any]:
    grad_output, x = _grad_and_x(2.0)(ctx)
    noise = ctx.uniform(*x.shape, low=0.0, high=1.0)
    p = ctx.params
    return [grad_output, x, noise, p["lower"], p["upper"], False, p["self_is_result"]]


def _smooth_l1_backward_inputs(ctx: InputContext) -> list[Any]:
    x = _drawn(ctx)
    target = _drawn(ctx)
    if ctx.params["reduction"] == 0:
        grad_output = _drawn(ctx)
    else:
        # The loss is a scalar: its gradient is one value, 0-d; kept away from 0 so that the
        # mean's small outputs (grad / numel) stay well above atol.
        grad_output = ctx.uniform(low=1.0, high=3.0)
    return [grad_output, x, target, ctx.params["reduction"], ctx.params["beta"]]


_SHAPE_NOTE = (" All tensors have the same shape and dtype (float32, float16 or bfloat16) and "
               "may be non-contiguous; the output (grad_input) has x's shape and dtype; compute "
               "in float32.")


def operators() -> list[OperatorSpec]:
    no_scalars = ({},) * len(SHAPES)
    return [
        aten_op(
            "mish_backward",
            signature="kernel(grad_output: Tensor, x: Tensor) -> Tensor",
            description="aten.mish_backward: the gradient of mish(x) = x * tanh(softplus(x)): "
                        "with t = tanh(log(1 + exp(x))) and s = sigmoid(x), "
                        "grad_output * (t + x * s * (1 - t*t))." + _SHAPE_NOTE,
            reference=_aten("mish_backward"),
            make_inputs=_grad_and_x(3.0),
            cases=_cases(no_scalars, {}, ({}, {})),
            flops=_per_element(14), bytes_moved=_moved(3),
            tags=("pointwise", "elementwise", "activation", "backward"),
        ),
        aten_op(
            "softplus_backward",
            signature="kernel(grad_output: Tensor, x: Tensor, beta: float, threshold: float) "
                      "-> Tensor",
            description="aten.softplus_backward(grad_output, x, beta, threshold): "
                        "grad_output where beta*x > threshold, else grad_output * z / (z + 1) "
                        "with z = exp(beta*x) (i.e. grad_output * sigmoid(beta*x))."
                        + _SHAPE_NOTE,
            reference=_aten("softplus_backward"),
            make_inputs=_softplus_backward_inputs,
            cases=_cases(({"beta": 1.0, "threshold": 20.0}, {"beta": 2.0, "threshold": 1.5},
                          {"beta": 0.5, "threshold": 0.75}, {"beta": 3.0, "threshold": 5.0}),
                         {"beta": 1.5, "threshold": 2.0},
                         ({"beta": 1.0, "threshold": 20.0}, {"beta": 2.0, "threshold": 10.0})),
            flops=_per_element(5), bytes_moved=_moved(3),
            tags=("pointwise", "elementwise", "activation", "backward"),
        ),
        aten_op(
            "log_sigmoid_backward",
            signature="kernel(grad_output: Tensor, x: Tensor, buffer: Tensor) -> Tensor",
            description="aten.log_sigmoid_backward(grad_output, x, buffer): the gradient of "
                        "log(sigmoid(x)), grad_output * sigmoid(-x). buffer (x's shape) holds "
                        "exp(-|x|), as log_sigmoid_forward leaves it on the CPU; ATen's CPU "
                        "kernel computes grad_output * (b/(1+b) for x >= 0, 1 - b/(1+b) for "
                        "x < 0) from it, and a kernel may read it or recompute it from x."
                        + _SHAPE_NOTE,
            reference=_aten("log_sigmoid_backward"),
            make_inputs=_log_sigmoid_backward_inputs,
            cases=_cases(no_scalars, {}, ({}, {})),
            flops=_per_element(4), bytes_moved=_moved(4),
            tags=("pointwise", "elementwise", "activation", "backward"),
        ),
        aten_op(
            "rrelu_with_noise_backward",
            signature="kernel(grad_output: Tensor, x: Tensor, noise: Tensor, lower: float, "
                      "upper: float, training: bool, self_is_result: bool) -> Tensor",
            description="aten.rrelu_with_noise_backward in eval mode (training=False, every "
                        "case): leaky_relu_backward with the fixed slope (lower + upper) / 2, "
                        "i.e. grad_output where x > 0, else grad_output * (lower + upper) / 2. "
                        "With self_is_result=True, x is the forward's output (same sign as its "
                        "input), and the rule is the same. noise (x's shape) is not read in "
                        "eval mode." + _SHAPE_NOTE,
            reference=_aten("rrelu_with_noise_backward"),
            make_inputs=_rrelu_backward_inputs,
            cases=_cases(({"lower": 0.125, "upper": 1.0 / 3.0, "self_is_result": False},
                          {"lower": 0.125, "upper": 1.0 / 3.0, "self_is_result": False},
                          {"lower": 0.1, "upper": 0.3, "self_is_result": True},
                          {"lower": 0.2, "upper": 0.4, "self_is_result": False}),
                         {"lower": 0.05, "upper": 0.25, "self_is_result": False},
                         ({"lower": 0.125, "upper": 1.0 / 3.0, "self_is_result": False},
                          {"lower": 0.1, "upper": 0.3, "self_is_result": True})),
            flops=_per_element(2), bytes_moved=_moved(3),
            tags=("pointwise", "elementwise", "activation", "backward"),
        ),
        aten_op(
            "smooth_l1_loss_backward",
            signature="kernel(grad_output: Tensor, x: Tensor, target: Tensor, reduction: int, "
                      "beta: float) -> Tensor",
            description="aten.smooth_l1_loss_backward(grad_output, x, target, reduction, beta), "
                        "beta > 0: with d = x - target and norm = 1/x.numel() for reduction=1 "
                        "(mean), 1 for 0 (none) and 2 (sum): -norm*g for d <= -beta, norm*g "
                        "for d >= beta, norm*d*g/beta between. grad_output g has x's shape "
                        "for reduction 0 and is a 0-d tensor for 1 and 2. x and target have "
                        "the same shape and dtype and may be non-contiguous; the output has "
                        "x's shape and dtype; compute in float32.",
            reference=_aten("smooth_l1_loss_backward"),
            make_inputs=_smooth_l1_backward_inputs,
            cases=(
                ShapeCase("none_odd_2d", {"shape": (37, 129), "reduction": 0, "beta": 1.0}),
                ShapeCase("mean_3d", {"shape": (5, 7, 11), "reduction": 1, "beta": 0.5}),
                ShapeCase("sum_vector", {"shape": (1000,), "reduction": 2, "beta": 2.0}),
                ShapeCase("none_transposed", {"shape": (33, 64), "transposed": True,
                                              "reduction": 0, "beta": 0.25}),
                # Held out: checked, never shown (see ShapeCase.heldout).
                ShapeCase("heldout_mean_3d", {"shape": (3, 17, 13), "reduction": 1,
                                              "beta": 1.5}, heldout=True),
                ShapeCase("llm_hidden_none", {"shape": (8192, 4096), "reduction": 0,
                                              "beta": 1.0}, tier=LARGE),
                ShapeCase("llm_hidden_mean", {"shape": (4096, 4096), "reduction": 1,
                                              "beta": 1.0}, tier=LARGE),
            ),
            flops=_per_element(4),
            bytes_moved=lambda p, size: (3 + (p["reduction"] == 0)) * _elements(p) * size,
            tags=("loss", "elementwise", "backward"),
        ),
    ]
