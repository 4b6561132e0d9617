"""Matrix products: mm, addmm (beta=1, alpha=1), bmm, matmul (with its 1-D and broadcast-batch
rules), linear, baddbmm, and the vector products mv, addmv, outer and dot, with ragged and
transposed operands.

Small cases use sizes that are no multiple of any tile (37x53x29) so that masking on every edge
is exercised, a skinny M for decode-like shapes, and one transposed operand so a kernel that
assumes contiguous inputs fails. Every output sums K products, so ``reduce_dim`` is K and atol
scales with it as in the published checker. On GPUs the backend runs the references with
full-precision cuBLAS reductions (see kgb_backends/nvidia.py), so that they are at least as
accurate as an fp32-accumulating kernel.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.aten._build import aten_op, in_fp32, numel

MM_CASES = (
    ShapeCase("odd", {"m": 37, "k": 53, "n": 29}),
    ShapeCase("square_64", {"m": 64, "k": 64, "n": 64}),
    ShapeCase("skinny_m1", {"m": 1, "k": 80, "n": 45}),
    ShapeCase("b_transposed", {"m": 33, "k": 48, "n": 70, "b_transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_a_transposed", {"m": 5, "k": 77, "n": 19, "a_transposed": True},
              heldout=True),
    ShapeCase("square_4096", {"m": 4096, "k": 4096, "n": 4096}, tier=LARGE),
    # Ragged at GPU tile sizes too; on an H200 cuBLAS reduces this bf16 product in bf16 unless
    # told not to (see NvidiaBackend.setup): this case guards that setting.
    ShapeCase("ragged_300x700x500", {"m": 300, "k": 700, "n": 500}, tier=LARGE),
    ShapeCase("llm_mlp_up", {"m": 2048, "k": 4096, "n": 14336}, tier=LARGE),
    ShapeCase("llm_mlp_down", {"m": 2048, "k": 14336, "n": 4096}, tier=LARGE),
    ShapeCase("decode_m16", {"m": 16, "k": 4096, "n": 4096}, tier=LARGE),
)

# "bias" is "row" for a (N,) bias broadcast over the rows, "full" for an (M, N) one.
ADDMM_CASES = (
    ShapeCase("odd_row_bias", {"m": 37, "k": 53, "n": 29, "bias": "row"}),
    ShapeCase("square_64_full_bias", {"m": 64, "k": 64, "n": 64, "bias": "full"}),
    ShapeCase("skinny_m3", {"m": 3, "k": 70, "n": 50, "bias": "row"}),
    ShapeCase("a_transposed", {"m": 40, "k": 36, "n": 33, "bias": "row", "a_transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_full_bias_b_transposed",
              {"m": 21, "k": 43, "n": 11, "bias": "full", "b_transposed": True}, heldout=True),
    ShapeCase("linear_4096", {"m": 4096, "k": 4096, "n": 4096, "bias": "row"}, tier=LARGE),
    ShapeCase("llm_mlp_up", {"m": 2048, "k": 4096, "n": 14336, "bias": "row"}, tier=LARGE),
    ShapeCase("decode_m16", {"m": 16, "k": 4096, "n": 4096, "bias": "row"}, tier=LARGE),
)

BMM_CASES = (
    ShapeCase("odd", {"batch": 3, "m": 37, "k": 53, "n": 29}),
    ShapeCase("square_64", {"batch": 2, "m": 64, "k": 64, "n": 64}),
    ShapeCase("skinny_m1", {"batch": 4, "m": 1, "k": 40, "n": 33}),
    ShapeCase("b_transposed", {"batch": 2, "m": 30, "k": 48, "n": 20, "b_transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_a_transposed",
              {"batch": 5, "m": 9, "k": 67, "n": 23, "a_transposed": True}, heldout=True),
    ShapeCase("attention_scores", {"batch": 32, "m": 512, "k": 128, "n": 512}, tier=LARGE),
    ShapeCase("square_1024", {"batch": 8, "m": 1024, "k": 1024, "n": 1024}, tier=LARGE),
)


def _operand(ctx: InputContext, rows: int, cols: int, transposed: bool,
             batch: int | None = None) -> Any:
    """A (batch,) rows x cols operand; when transposed, a view of a cols x rows tensor's
    transpose, so its strides are not row-major and a kernel must honour them."""
    lead = () if batch is None else (batch,)
    if transposed:
        return ctx.randn(*lead, cols, rows).transpose(-1, -2)
    return ctx.randn(*lead, rows, cols)


def _matrices(ctx: InputContext, batch: int | None = None) -> list[Any]:
    p = ctx.params
    a = _operand(ctx, p["m"], p["k"], bool(p.get("a_transposed")), batch)
    b = _operand(ctx, p["k"], p["n"], bool(p.get("b_transposed")), batch)
    return [a, b]


def _mm_inputs(ctx: InputContext) -> list[Any]:
    return _matrices(ctx)


def _bmm_inputs(ctx: InputContext) -> list[Any]:
    return _matrices(ctx, batch=ctx.params["batch"])


def _bias_shape(p: Mapping[str, Any]) -> tuple[int, ...]:
    return (p["m"], p["n"]) if p["bias"] == "full" else (p["n"],)


def _addmm_inputs(ctx: InputContext) -> list[Any]:
    bias = ctx.randn(*_bias_shape(ctx.params))
    return [bias, *_matrices(ctx)]


def _torch_product(name: str) -> Callable[..., Any]:
    def call(*args):  # noqa: ANN002, ANN202
        import torch

        return getattr(torch, name)(*args)

    call.__name__ = f"torch_{name}"
    return call


def _product_flops(p: Mapping[str, Any]) -> float:
    """One multiply and one add per term: 2*M*N*K, times the batch for bmm."""
    return 2.0 * p.get("batch", 1) * p["m"] * p["n"] * p["k"]


def _product_elements(p: Mapping[str, Any]) -> int:
    """Elements of A, B and C, each read or written once at best."""
    return p.get("batch", 1) * (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"])


def _reduce_k(p: Mapping[str, Any]) -> int:
    return p["k"]


_OPERAND_NOTE = (" Operands may be non-contiguous (e.g. transposed views). Accumulate in "
                 "float32 (for float32 inputs exact products, no TF32) and return the input "
                 "dtype.")


# matmul: "a" and "b" shapes as torch.matmul takes them; "a_transposed"/"b_transposed" give a
# view whose last two dims are swapped in memory.
MATMUL_CASES = (
    ShapeCase("vector_matrix", {"a": (53,), "b": (53, 29)}),
    ShapeCase("matrix_b_transposed", {"a": (37, 53), "b": (53, 29), "b_transposed": True}),
    ShapeCase("batched_3d_by_2d", {"a": (3, 37, 40), "b": (40, 29)}),
    ShapeCase("batched_broadcast_4d_by_3d", {"a": (2, 1, 21, 33), "b": (3, 33, 19)}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_batched_by_vector", {"a": (3, 17, 23), "b": (23,), "a_transposed": True},
              heldout=True),
    ShapeCase("square_4096", {"a": (4096, 4096), "b": (4096, 4096)}, tier=LARGE),
    ShapeCase("llm_mlp_up", {"a": (8192, 4096), "b": (4096, 14336)}, tier=LARGE),
    ShapeCase("batched_attention_scores", {"a": (8, 32, 512, 128), "b": (8, 32, 128, 512)},
              tier=LARGE),
)

# linear: "x" shape (..., K), "out" = N; "bias" whether a bias is passed. The first case has
# N > K, so a kernel that reads weight without its transpose stays in bounds and is wrong.
LINEAR_CASES = (
    ShapeCase("bias_wide_out", {"x": (29, 24), "out": 40, "bias": True}),
    ShapeCase("no_bias_3d", {"x": (3, 7, 33), "out": 45, "bias": False}),
    ShapeCase("decode_row", {"x": (1, 50), "out": 70, "bias": True}),
    ShapeCase("x_transposed", {"x": (31, 40), "out": 22, "bias": True, "x_transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_3d_narrow_out", {"x": (2, 5, 67), "out": 19, "bias": True},
              heldout=True),
    ShapeCase("llm_mlp_up", {"x": (4, 2048, 4096), "out": 14336, "bias": False}, tier=LARGE),
    ShapeCase("decode_m16_bias", {"x": (16, 4096), "out": 4096, "bias": True}, tier=LARGE),
)

# baddbmm: "self" shape (broadcast to (B, M, N)), "beta", "alpha"; "self_nan" fills self with
# NaN, which beta == 0 must not let through (ATen does not read self then).
BADDBMM_CASES = (
    ShapeCase("full_self_scaled", {"batch": 3, "m": 37, "k": 53, "n": 29, "self": (3, 37, 29),
                                   "beta": 0.5, "alpha": 2.0}),
    ShapeCase("broadcast_matrix_self", {"batch": 2, "m": 30, "k": 41, "n": 20, "self": (30, 20),
                                        "beta": 1.5, "alpha": -1.0}),
    ShapeCase("beta_zero_nan_self", {"batch": 2, "m": 17, "k": 40, "n": 33, "self": (33,),
                                     "beta": 0.0, "alpha": 0.5, "self_nan": True}),
    ShapeCase("b_transposed_defaults", {"batch": 2, "m": 25, "k": 48, "n": 36,
                                        "self": (2, 25, 36), "beta": 1.0, "alpha": 1.0,
                                        "b_transposed": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_a_transposed", {"batch": 4, "m": 9, "k": 45, "n": 21, "self": (1, 9, 21),
                                       "beta": 0.25, "alpha": 3.0, "a_transposed": True},
              heldout=True),
    ShapeCase("attention_scores", {"batch": 32, "m": 512, "k": 128, "n": 512,
                                   "self": (32, 512, 512), "beta": 1.0, "alpha": 0.125},
              tier=LARGE),
    ShapeCase("square_1024", {"batch": 8, "m": 1024, "k": 1024, "n": 1024, "self": (1024,),
                              "beta": 0.5, "alpha": 1.0}, tier=LARGE),
)

# mv/addmv: A is (M, K); "a_transposed" stores it column-major, "x_stride" takes every
# x_stride-th element of a longer vector; addmv adds "self" ((M,) or (1,)), beta, alpha.
MV_CASES = (
    ShapeCase("odd", {"m": 37, "k": 53}),
    ShapeCase("a_transposed", {"m": 29, "k": 70, "a_transposed": True}),
    ShapeCase("strided_vector", {"m": 40, "k": 33, "x_stride": 2}),
    ShapeCase("one_row_long_k", {"m": 1, "k": 300}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_transposed_strided", {"m": 5, "k": 130, "a_transposed": True,
                                             "x_stride": 3}, heldout=True),
    ShapeCase("decode_mlp_down", {"m": 4096, "k": 14336}, tier=LARGE),
    ShapeCase("decode_mlp_up", {"m": 14336, "k": 4096}, tier=LARGE),
)
ADDMV_CASES = (
    ShapeCase("odd_scaled", {"m": 37, "k": 53, "self": (37,), "beta": 0.5, "alpha": 2.0}),
    ShapeCase("a_transposed_defaults", {"m": 29, "k": 70, "self": (29,), "beta": 1.0,
                                        "alpha": 1.0, "a_transposed": True}),
    ShapeCase("broadcast_self", {"m": 40, "k": 33, "self": (1,), "beta": -1.5, "alpha": 1.0,
                                 "x_stride": 2}),
    ShapeCase("beta_zero_nan_self", {"m": 19, "k": 300, "self": (19,), "beta": 0.0,
                                     "alpha": 0.75, "self_nan": True}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_transposed_strided", {"m": 5, "k": 130, "self": (5,), "beta": 0.25,
                                             "alpha": -2.0, "a_transposed": True,
                                             "x_stride": 3}, heldout=True),
    ShapeCase("decode_mlp_down", {"m": 4096, "k": 14336, "self": (4096,), "beta": 1.0,
                                  "alpha": 1.0}, tier=LARGE),
)

# outer: "m", "n" lengths; "a_stride"/"b_stride" take every k-th element of a longer vector.
OUTER_CASES = (
    ShapeCase("odd", {"m": 37, "n": 29}),
    ShapeCase("strided_a", {"m": 50, "n": 41, "a_stride": 2}),
    ShapeCase("one_by_long", {"m": 1, "n": 300}),
    ShapeCase("long_by_few", {"m": 130, "n": 3, "b_stride": 3}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_both_strided", {"m": 13, "n": 77, "a_stride": 3, "b_stride": 2},
              heldout=True),
    ShapeCase("llm_wide", {"m": 4096, "n": 14336}, tier=LARGE),
)

# dot: "n" length; strides as for outer.
DOT_CASES = (
    ShapeCase("odd", {"n": 1000}),
    ShapeCase("strided_a_several_chunks", {"n": 3001, "a_stride": 2}),
    ShapeCase("single", {"n": 1}),
    ShapeCase("strided_b", {"n": 517, "b_stride": 3}),
    # Held out: checked, never shown (see ShapeCase.heldout).
    ShapeCase("heldout_both_strided", {"n": 2049, "a_stride": 2, "b_stride": 2}, heldout=True),
    ShapeCase("long_16m", {"n": 1 << 24}, tier=LARGE),
)


def _tensor(ctx: InputContext, shape: tuple[int, ...], transposed: bool = False) -> Any:
    """A normal tensor; when transposed (2-D or more), the swapped-last-dims view of a tensor
    stored the other way, so a kernel must honour its strides."""
    if transposed and len(shape) >= 2:
        stored = (*shape[:-2], shape[-1], shape[-2])
        return ctx.randn(*stored).transpose(-1, -2)
    return ctx.randn(*shape)


def _vector(ctx: InputContext, n: int, stride: int = 1) -> Any:
    """A length-n vector; with stride > 1, every stride-th element of a longer one."""
    return ctx.randn(n * stride)[::stride] if stride > 1 else ctx.randn(n)


def _self_tensor(ctx: InputContext, shape: tuple[int, ...], nan: bool) -> Any:
    values = ctx.randn(*shape)
    return values.fill_(float("nan")) if nan else values


def _matmul_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [_tensor(ctx, tuple(p["a"]), bool(p.get("a_transposed"))),
            _tensor(ctx, tuple(p["b"]), bool(p.get("b_transposed")))]


def _matmul_dims(p: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """(batch, M, K, N) of torch.matmul's product after its 1-D and broadcast rules."""
    import math

    a, b = tuple(p["a"]), tuple(p["b"])
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    lead_a, lead_b = a2[:-2], b2[:-2]
    width = max(len(lead_a), len(lead_b))
    lead_a = (1,) * (width - len(lead_a)) + lead_a
    lead_b = (1,) * (width - len(lead_b)) + lead_b
    batch = math.prod(max(x, y) for x, y in zip(lead_a, lead_b))
    return batch, a2[-2], a2[-1], b2[-1]


def _matmul_flops(p: Mapping[str, Any]) -> float:
    batch, m, k, n = _matmul_dims(p)
    return 2.0 * batch * m * n * k


def _matmul_bytes(p: Mapping[str, Any], size: int) -> float:
    batch, m, k, n = _matmul_dims(p)
    return (numel(p["a"]) + numel(p["b"]) + batch * m * n) * size


def _torch_matmul(a, b):  # noqa: ANN001, ANN202
    import torch

    return torch.matmul(a, b)


def _linear_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    x = _tensor(ctx, tuple(p["x"]), bool(p.get("x_transposed")))
    k = p["x"][-1]
    # Weights scaled by 1/sqrt(K), as initialised layers are, so outputs stay of unit size.
    weight = ctx.randn(p["out"], k, scale=k ** -0.5)
    bias = ctx.randn(p["out"]) if p["bias"] else None
    return [x, weight, bias]


def _linear_reference(x, weight, bias):  # noqa: ANN001, ANN202
    import torch.nn.functional as F

    return F.linear(x, weight, bias)


def _linear_rows(p: Mapping[str, Any]) -> int:
    return numel(p["x"][:-1])


def _baddbmm_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    self_value = _self_tensor(ctx, tuple(p["self"]), bool(p.get("self_nan")))
    a = _tensor(ctx, (p["batch"], p["m"], p["k"]), bool(p.get("a_transposed")))
    b = _tensor(ctx, (p["batch"], p["k"], p["n"]), bool(p.get("b_transposed")))
    return [self_value, a, b, float(p["beta"]), float(p["alpha"])]


def _baddbmm_native(self_value, batch1, batch2, beta, alpha):  # noqa: ANN001, ANN202
    import torch

    return torch.baddbmm(self_value, batch1, batch2, beta=beta, alpha=alpha)


# The reference: torch.baddbmm on fp32 copies of fp16/bf16 operands, rounded once to their
# dtype (in_fp32; self, batch1 and batch2 share one dtype). That is the rule the kernel is
# held to: beta * self + alpha * (batch1 @ batch2) in fp32, one rounding at the store. The
# native bf16 call is less accurate where beta * self cancels the product: on an H200 (torch
# 2.11, cuBLAS, reduced-precision reductions off) bf16 attention_scores gave 0.03125 where the
# fp32 value is 0.0164, an error the size of one rounding of the product to bf16 before self
# is added, so a correct kernel failed there. fp16 is computed the same way (8x finer, so it
# passed); the rule is one for both. The native call is the timing baseline.
_baddbmm_reference = in_fp32(_baddbmm_native)


def _mv_matrix(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [_tensor(ctx, (p["m"], p["k"]), bool(p.get("a_transposed"))),
            _vector(ctx, p["k"], p.get("x_stride", 1))]


def _mv_reference(a, x):  # noqa: ANN001, ANN202
    import torch

    return torch.mv(a, x)


def _addmv_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    self_value = _self_tensor(ctx, tuple(p["self"]), bool(p.get("self_nan")))
    return [self_value, *_mv_matrix(ctx), float(p["beta"]), float(p["alpha"])]


def _addmv_reference(self_value, mat, vec, beta, alpha):  # noqa: ANN001, ANN202
    import torch

    return torch.addmv(self_value, mat, vec, beta=beta, alpha=alpha)


def _outer_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [_vector(ctx, p["m"], p.get("a_stride", 1)), _vector(ctx, p["n"], p.get("b_stride", 1))]


def _outer_reference(a, b):  # noqa: ANN001, ANN202
    import torch

    return torch.outer(a, b)


def _dot_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    return [_vector(ctx, p["n"], p.get("a_stride", 1)), _vector(ctx, p["n"], p.get("b_stride", 1))]


def _dot_reference(a, b):  # noqa: ANN001, ANN202
    import torch

    return torch.dot(a, b)


_VECTOR_NOTE = (" Vectors may be strided views (every k-th element of a longer tensor) and "
                "matrices transposed views. Accumulate in float32 and return the input dtype.")


def _more_operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "matmul",
            product_bound=True,
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="torch.matmul(a, b) with its rules: a 1-D a is a (1, K) row and a 1-D b "
                        "a (K, 1) column, whose added dim is removed from the result; 2-D x 2-D "
                        "is mm; every dim before the last two is a batch dim, broadcast between "
                        "a and b (a 2-D operand is broadcast over the other's batch). E.g. "
                        "(3, 37, 40) @ (40, 29) -> (3, 37, 29), (2, 1, 21, 33) @ (3, 33, 19) -> "
                        "(2, 3, 21, 19), (53,) @ (53, 29) -> (29,)." + _OPERAND_NOTE,
            reference=_torch_matmul,
            make_inputs=_matmul_inputs,
            cases=MATMUL_CASES,
            flops=_matmul_flops,
            bytes_moved=_matmul_bytes,
            tags=("gemm", "matmul", "broadcast"),
            reduce_dim=lambda p: p["a"][-1],
        ),
        aten_op(
            "linear",
            product_bound=True,
            signature="kernel(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor",
            description="F.linear(x, weight, bias) = x @ weight.T + bias for x (..., K) (any "
                        "number of leading dims, kept in the output), weight (N, K) (note: N "
                        "rows of K, so it is transposed in the product) and bias (N,) or None "
                        "(then nothing is added). The result is a contiguous (..., N) tensor of "
                        "x's dtype; x may be a transposed view." + _OPERAND_NOTE,
            reference=_linear_reference,
            make_inputs=_linear_inputs,
            cases=LINEAR_CASES,
            flops=lambda p: 2.0 * _linear_rows(p) * p["x"][-1] * p["out"]
            + (_linear_rows(p) * p["out"] if p["bias"] else 0),
            bytes_moved=lambda p, size: (numel(p["x"]) + p["out"] * p["x"][-1]
                                         + _linear_rows(p) * p["out"]
                                         + (p["out"] if p["bias"] else 0)) * size,
            tags=("gemm", "matmul", "linear"),
            reduce_dim=lambda p: p["x"][-1],
        ),
        aten_op(
            "baddbmm",
            product_bound=True,
            signature="kernel(self: Tensor, batch1: Tensor, batch2: Tensor, beta: float, "
                      "alpha: float) -> Tensor",
            description="torch.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha) = "
                        "beta * self + alpha * (batch1 @ batch2) for batch1 (B, M, K) and batch2 "
                        "(B, K, N); self broadcasts to (B, M, N) ((B, M, N), (M, N), (N,) or "
                        "(1, M, N)). When beta == 0, self is not read at all: NaN or inf in it "
                        "do not reach the output. The result is a contiguous (B, M, N) tensor "
                        "of batch1's dtype." + _OPERAND_NOTE,
            reference=_baddbmm_reference,
            baseline=_baddbmm_native,
            make_inputs=_baddbmm_inputs,
            cases=BADDBMM_CASES,
            flops=lambda p: _product_flops(p) + 3 * p["batch"] * p["m"] * p["n"],
            bytes_moved=lambda p, size: (_product_elements(p) + numel(p["self"])) * size,
            tags=("gemm", "matmul", "batched"),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "mv",
            product_bound=True,
            signature="kernel(a: Tensor, x: Tensor) -> Tensor",
            description="Matrix-vector product torch.mv(a, x) of a (M, K) and x (K,), giving a "
                        "contiguous (M,) tensor." + _VECTOR_NOTE,
            reference=_mv_reference,
            make_inputs=_mv_matrix,
            cases=MV_CASES,
            flops=lambda p: 2.0 * p["m"] * p["k"],
            bytes_moved=lambda p, size: (p["m"] * p["k"] + p["k"] + p["m"]) * size,
            tags=("gemm", "matmul", "gemv"),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "addmv",
            product_bound=True,
            signature="kernel(self: Tensor, mat: Tensor, vec: Tensor, beta: float, "
                      "alpha: float) -> Tensor",
            description="torch.addmv(self, mat, vec, beta=beta, alpha=alpha) = beta * self + "
                        "alpha * (mat @ vec) for mat (M, K), vec (K,); self is (M,) or (1,) "
                        "(broadcast). When beta == 0, self is not read: NaN in it does not "
                        "reach the output. The result is a contiguous (M,) tensor."
                        + _VECTOR_NOTE,
            # fp32, rounded once (in_fp32): torch's CPU bf16 addmv rounds the product to bf16
            # before adding beta * self, and where the two nearly cancel that rounding is the
            # whole answer's size; the native call stays the timing baseline.
            reference=in_fp32(_addmv_reference),
            baseline=_addmv_reference,
            make_inputs=_addmv_inputs,
            cases=ADDMV_CASES,
            flops=lambda p: 2.0 * p["m"] * p["k"] + 3 * p["m"],
            bytes_moved=lambda p, size: (p["m"] * p["k"] + p["k"] + p["m"]
                                         + numel(p["self"])) * size,
            tags=("gemm", "matmul", "gemv"),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "outer",
            product_bound=True,
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="torch.outer(a, b): out[i, j] = a[i] * b[j] for 1-D a (M,) and b (N,), "
                        "a contiguous (M, N) tensor of their dtype. a and b may be strided "
                        "views.",
            reference=_outer_reference,
            make_inputs=_outer_inputs,
            cases=OUTER_CASES,
            flops=lambda p: float(p["m"] * p["n"]),
            bytes_moved=lambda p, size: (p["m"] + p["n"] + p["m"] * p["n"]) * size,
            tags=("gemm", "matmul", "outer_product"),
        ),
        aten_op(
            "dot",
            product_bound=True,
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="torch.dot(a, b): the sum of a[i] * b[i] over two 1-D tensors of one "
                        "length N, returned as a 0-d tensor (shape ()) of their dtype."
                        + _VECTOR_NOTE,
            reference=_dot_reference,
            make_inputs=_dot_inputs,
            cases=DOT_CASES,
            flops=lambda p: 2.0 * p["n"],
            bytes_moved=lambda p, size: (2 * p["n"] + 1) * size,
            tags=("gemm", "matmul", "vector"),
            reduce_dim=lambda p: p["n"],
        ),
    ]


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "mm",
            product_bound=True,
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="Matrix product torch.mm(a, b) of a (M, K) and b (K, N), giving a "
                        "contiguous (M, N) tensor." + _OPERAND_NOTE,
            reference=_torch_product("mm"),
            make_inputs=_mm_inputs,
            cases=MM_CASES,
            flops=_product_flops,
            bytes_moved=lambda p, size: _product_elements(p) * size,
            tags=("gemm", "matmul"),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "addmm",
            product_bound=True,
            signature="kernel(bias: Tensor, a: Tensor, b: Tensor) -> Tensor",
            description="torch.addmm(bias, a, b) = bias + a @ b (beta=1, alpha=1) for a (M, K) "
                        "and b (K, N); bias is (N,), broadcast over the rows, or (M, N). The "
                        "result is a contiguous (M, N) tensor." + _OPERAND_NOTE,
            reference=_torch_product("addmm"),
            make_inputs=_addmm_inputs,
            cases=ADDMM_CASES,
            flops=lambda p: _product_flops(p) + p["m"] * p["n"],
            bytes_moved=lambda p, size: (_product_elements(p) + numel(_bias_shape(p))) * size,
            tags=("gemm", "matmul"),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "bmm",
            product_bound=True,
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="Batched matrix product torch.bmm(a, b) of a (B, M, K) and b (B, K, N), "
                        "giving a contiguous (B, M, N) tensor." + _OPERAND_NOTE,
            reference=_torch_product("bmm"),
            make_inputs=_bmm_inputs,
            cases=BMM_CASES,
            flops=_product_flops,
            bytes_moved=lambda p, size: _product_elements(p) * size,
            tags=("gemm", "matmul", "batched"),
            reduce_dim=_reduce_k,
        ),
        *_more_operators(),
    ]
