"""Matrix products: mm, addmm (beta=1, alpha=1) and bmm, with ragged and transposed operands.

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

from kgb_sources.aten._build import aten_op, numel

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


def operators() -> list[OperatorSpec]:
    return [
        aten_op(
            "mm",
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="Matrix product torch.mm(a, b) of a (M, K) and b (K, N), giving a "
                        "contiguous (M, N) tensor." + _OPERAND_NOTE,
            reference=_torch_product("mm"),
            make_inputs=_mm_inputs,
            cases=MM_CASES,
            flops=_product_flops,
            bytes_moved=lambda p, size: _product_elements(p) * size,
            tags=("matmul",),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "addmm",
            signature="kernel(bias: Tensor, a: Tensor, b: Tensor) -> Tensor",
            description="torch.addmm(bias, a, b) = bias + a @ b (beta=1, alpha=1) for a (M, K) "
                        "and b (K, N); bias is (N,), broadcast over the rows, or (M, N). The "
                        "result is a contiguous (M, N) tensor." + _OPERAND_NOTE,
            reference=_torch_product("addmm"),
            make_inputs=_addmm_inputs,
            cases=ADDMM_CASES,
            flops=lambda p: _product_flops(p) + p["m"] * p["n"],
            bytes_moved=lambda p, size: (_product_elements(p) + numel(_bias_shape(p))) * size,
            tags=("matmul",),
            reduce_dim=_reduce_k,
        ),
        aten_op(
            "bmm",
            signature="kernel(a: Tensor, b: Tensor) -> Tensor",
            description="Batched matrix product torch.bmm(a, b) of a (B, M, K) and b (B, K, N), "
                        "giving a contiguous (B, M, N) tensor." + _OPERAND_NOTE,
            reference=_torch_product("bmm"),
            make_inputs=_bmm_inputs,
            cases=BMM_CASES,
            flops=_product_flops,
            bytes_moved=lambda p, size: _product_elements(p) * size,
            tags=("matmul", "batched"),
            reduce_dim=_reduce_k,
        ),
    ]
