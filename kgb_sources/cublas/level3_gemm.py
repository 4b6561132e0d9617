"""Level 3 GEMMs and their extensions: gemm in S/C (every transpose combination), strided and
pointer-array batched gemm in S/D/C/Z/H (with their ``_64`` variants), gemmEx (fp16/bf16 A and
B, fp32 C and compute), geam and dgmm.

gemm computes ``C = alpha * op(A) @ op(B) + beta * C`` with op(A) m x k and op(B) k x n on
column-major buffers with leading dimensions (``_build``'s conventions); A is stored m x k when
``transa == "N"`` and k x m otherwise, B k x n or n x k. Small cases use odd sizes and ld larger
than the rows, so padding exists, and cover NN, NT, TN, TT (and C for complex) across each
routine's cases; one case per gemm routine has ``beta == 0`` with C pre-filled with NaN (cuBLAS
does not read C then). Every output sums k products, so ``reduce_dim`` is k.

The references write C in place with torch's addmm_/baddbmm_ on views of the buffers, which
on NVIDIA call cuBLAS's gemm itself; the pointer-array batched routines loop over the batch
(torch has no pointer-array GEMM). Hgemm's reference computes in fp32 and rounds once (cuBLAS's
Hgemm may accumulate in fp16 on some GPUs; torch's native fp16 GEMM is the timed baseline).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from kgb_core.operators import LARGE, InputContext, OperatorSpec, ShapeCase

from kgb_sources.cublas._build import (
    COLUMN_MAJOR_NOTE, SIXTY_FOUR_NOTE, batched_matrix, column_major_length,
    cublas_op, from_template, gemm_bytes, gemm_case, gemm_flops, gemm_lengths, gemm_stored,
    matrix, op, precision_of, scalar,
)

FAMILY = "level3"
_FLAG_NOTE = (" transa/transb are the letters 'N' (op(X) = X), 'T' (X^T) or 'C' (X^H, the "
              "conjugate transpose; the same as 'T' for real routines).")
_BETA_NOTE = (" When beta == 0, C is not read (cuBLAS: C need not be set on input), so NaN in "
              "it must not reach the output.")


# -- cases -----------------------------------------------------------------------------------


SGEMM_CASES = (
    gemm_case("nn_odd_padded", "NN", 37, 29, 53, (4, 3, 3), 1.5, -0.5),
    gemm_case("nt_padded", "NT", 45, 19, 33, (2, 4, 5), -0.75, 0.25),
    gemm_case("tn_padded", "TN", 23, 41, 61, (3, 6, 6), 0.5, 2.0),
    gemm_case("tt_beta_zero_nan_c", "TT", 3, 50, 40, (3, 5, 2), 1.25, 0.0),
    gemm_case("heldout_nt", "NT", 5, 31, 67, (1, 2, 4), -1.5, 0.75, heldout=True),
    gemm_case("square_4096", "NN", 4096, 4096, 4096, (0, 0, 0), 1.0, 0.5, tier=LARGE),
    # C (4096 x 14336) = W^T (4096 x 4096 stored transposed) X: an LLM MLP-up GEMM.
    gemm_case("llm_4096x14336x4096", "TN", 4096, 14336, 4096, (0, 0, 0), 1.0, 1.0, tier=LARGE),
    gemm_case("decode_m16_x4096_k14336", "NN", 16, 4096, 14336, (0, 0, 0), 1.0, 0.5, tier=LARGE),
)

CGEMM_CASES = (
    gemm_case("cn_padded", "CN", 21, 17, 29, (2, 4, 2), (0.5, -1.25), (0.75, 0.5)),
    gemm_case("nc_padded", "NC", 19, 23, 27, (1, 2, 3), (-1.0, 0.5), (0.25, -1.5)),
    gemm_case("cc_beta_zero_nan_c", "CC", 13, 11, 35, (2, 1, 2), (1.5, 0.25), (0.0, 0.0)),
    gemm_case("tc_nt_mix", "TC", 25, 9, 18, (2, 1, 2), (0.0, 1.0), (1.0, 0.0)),
    gemm_case("heldout_ct", "CT", 7, 15, 41, (2, 2, 2), (-0.5, -0.75), (0.5, 0.5), heldout=True),
    gemm_case("odd_1000_nc", "NC", 1000, 1000, 1000, (0, 0, 0), (1.0, 0.5), (0.5, -0.25),
          tier=LARGE),
    gemm_case("square_2048_cn", "CN", 2048, 2048, 2048, (0, 0, 0), (1.0, 0.0), (1.0, 0.0),
          tier=LARGE),
)

GEMM_EX_CASES = (
    gemm_case("nn_odd_padded", "NN", 37, 29, 53, (4, 3, 3), 1.5, -0.5),
    gemm_case("tn_padded", "TN", 23, 41, 61, (3, 6, 6), 0.5, 2.0),
    gemm_case("nt_beta_zero_nan_c", "NT", 45, 19, 33, (2, 4, 5), -0.75, 0.0),
    gemm_case("tt_skinny", "TT", 3, 50, 40, (3, 5, 2), 1.25, 0.25),
    gemm_case("heldout_tn", "TN", 9, 27, 70, (1, 2, 4), -1.5, 0.75, heldout=True),
    gemm_case("square_4096", "NN", 4096, 4096, 4096, (0, 0, 0), 1.0, 0.5, tier=LARGE),
    gemm_case("llm_4096x14336x4096", "TN", 4096, 14336, 4096, (0, 0, 0), 1.0, 0.0, tier=LARGE),
    gemm_case("decode_m1_x4096_k14336", "TN", 1, 4096, 14336, (0, 0, 0), 1.0, 1.0, tier=LARGE),
)


def _batched_cases(complex_: bool, strided: bool, large: tuple[int, ...]) -> tuple[ShapeCase, ...]:
    """Small cases covering every transpose pair that matters (C for complex), a beta == 0
    case with NaN C, and, when strided, a broadcast A (strideA = 0) and gaps between batches
    that must stay untouched; LARGE: batch 32 of each size in ``large``."""
    one, half = ((1.0, 0.0), (0.5, 0.0)) if complex_ else (1.0, 0.5)
    if complex_:
        alphas = [(0.5, -1.25), (-1.0, 0.5), (1.5, 0.25), (0.75, 0.75)]
        betas = [(0.75, 0.5), (0.25, -1.5), (0.0, 0.0), (-0.5, 0.25)]
        trans = ["NN", "CN", "NC", "CT"]
    else:
        alphas, betas, trans = [1.5, -0.75, 0.5, -1.25], [-0.5, 0.25, 0.0, 0.75], \
            ["NN", "TN", "NT", "TT"]
    gaps = ((5, 3, 7), (None, 0, 2), (0, 4, 0), (2, 2, 3)) if strided else (None,) * 4
    cases = [
        gemm_case("nn_padded_gaps" if strided else "nn_padded", trans[0], 21, 17, 29, (2, 3, 3),
              alphas[0], betas[0], batch=3, gaps=gaps[0]),
        gemm_case(("broadcast_a_" if strided else "") + trans[1].lower(), trans[1], 19, 13, 24,
              (1, 2, 2), alphas[1], betas[1], batch=4, gaps=gaps[1]),
        gemm_case(trans[2].lower() + "_beta_zero_nan_c", trans[2], 11, 20, 17, (3, 1, 2),
              alphas[2], betas[2], batch=2, gaps=gaps[2]),
        gemm_case("heldout_" + trans[3].lower(), trans[3], 7, 9, 37, (2, 2, 1), alphas[3],
              betas[3], batch=5, gaps=gaps[3], heldout=True),
    ]
    for size in large:
        cases.append(gemm_case(f"batch32_{size}", "NN", size, size, size, (0, 0, 0), one, half,
                           batch=32, gaps=(0, 0, 0) if strided else None, tier=LARGE))
    if strided and large:
        size = large[0]
        cases.append(gemm_case(f"batch32_{size}_broadcast_a_tn", "TN", size, size, size,
                           (0, 0, 0), one, half, batch=32, gaps=(None, 0, 0), tier=LARGE))
    return tuple(cases)


# -- inputs ----------------------------------------------------------------------------------


def _draw(ctx: InputContext, length: int, is_complex: bool, dtype: Any = None,
          nan: bool = False) -> Any:
    reals = 2 * length if is_complex else length
    buf = ctx.randn(reals, dtype=dtype)
    return buf.fill_(float("nan")) if nan else buf


def _gemm_inputs(kind: str, is_complex: bool) -> Callable[[InputContext], list[Any]]:
    """Inputs in the routine's C argument order; kind is gemm, ex, strided or batched."""

    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        alpha, beta = scalar(p["alpha"], is_complex), scalar(p["beta"], is_complex)
        len_a, len_b, len_c = gemm_lengths(p)
        c_dtype = ctx.torch.float32 if kind == "ex" else None
        head = [p["transa"], p["transb"], p["m"], p["n"], p["k"], alpha]
        if kind == "batched":
            count = p["batch"]
            a = [_draw(ctx, len_a, is_complex) for _ in range(count)]
            b = [_draw(ctx, len_b, is_complex) for _ in range(count)]
            c = [_draw(ctx, len_c, is_complex, nan=beta == 0) for _ in range(count)]
            return [*head, a, p["lda"], b, p["ldb"], beta, c, p["ldc"], count]
        a = _draw(ctx, len_a, is_complex)
        b = _draw(ctx, len_b, is_complex)
        c = _draw(ctx, len_c, is_complex, dtype=c_dtype, nan=beta == 0)
        if kind == "ex":
            name = "CUDA_R_16F" if ctx.dtype_name == "float16" else "CUDA_R_16BF"
            return [*head, a, name, p["lda"], b, name, p["ldb"], beta, c, "CUDA_R_32F",
                    p["ldc"]]
        if kind == "strided":
            return [*head, a, p["lda"], p["strideA"], b, p["ldb"], p["strideB"], beta, c,
                    p["ldc"], p["strideC"], p["batch"]]
        return [*head, a, p["lda"], b, p["ldb"], beta, c, p["ldc"]]

    return make


# -- references ------------------------------------------------------------------------------
def _accumulate(c: Any, a: Any, b: Any, alpha: Any, beta: Any, fp32_once: bool) -> None:
    """c = alpha * a @ b + beta * c in place (c not read when beta == 0); ``fp32_once``
    computes an fp16 product in fp32 and rounds once."""
    if fp32_once:
        out = (a.float() @ b.float()) * alpha
        if beta != 0:
            out += beta * c.float()
        c.copy_(out.to(c.dtype))
    elif c.dim() == 2:
        c.addmm_(a, b, beta=beta, alpha=alpha)  # torch ignores c when beta == 0, as cuBLAS
    else:
        c.baddbmm_(a, b, beta=beta, alpha=alpha)


def _accumulate_fp32(c: Any, a: Any, b: Any, alpha: float, beta: float) -> None:
    """gemmEx's fp32 compute: the fp32 product of the upcast inputs, then alpha and beta in
    fp32 (composed, not addmm_: cuBLASLt rejected addmm_ on these upcast views on an H200)."""
    product = a.float().contiguous() @ b.float().contiguous()
    if beta == 0:
        c.copy_(product.mul_(alpha))
    else:
        c.mul_(beta).add_(product, alpha=alpha)


def _gemm_reference(kind: str, is_complex: bool, fp32_once: bool = False) -> Callable[..., None]:
    def reference(*args: Any) -> None:
        transa, transb, m, n, k, alpha = args[:6]
        if kind == "ex":
            a, _, lda, b, _, ldb, beta, c, _, ldc = args[6:]
        elif kind == "strided":
            a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch = args[6:]
        else:
            a, lda, b, ldb, beta, c, ldc = args[6:13]
        (ar, ac), (br, bc) = (((m, k) if transa == "N" else (k, m)),
                              ((k, n) if transb == "N" else (n, k)))
        if kind == "strided":
            if batch <= 0 or m == 0 or n == 0:
                return
            va = op(batched_matrix(a, batch, ar, ac, lda, stride_a, is_complex), transa)
            vb = op(batched_matrix(b, batch, br, bc, ldb, stride_b, is_complex), transb)
            vc = batched_matrix(c, batch, m, n, ldc, stride_c, is_complex)
            _accumulate(vc, va, vb, alpha, beta, fp32_once)
            return
        pairs = (list(zip(a, b, c))[:args[13]] if kind == "batched" else [(a, b, c)])
        for one_a, one_b, one_c in pairs:
            va = op(matrix(one_a, ar, ac, lda, is_complex=is_complex), transa)
            vb = op(matrix(one_b, br, bc, ldb, is_complex=is_complex), transb)
            vc = matrix(one_c, m, n, ldc, is_complex=is_complex)
            if kind == "ex":
                _accumulate_fp32(vc, va, vb, alpha, beta)
            else:
                _accumulate(vc, va, vb, alpha, beta, fp32_once)

    return reference


def _gemm_ex_baseline(transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c,  # noqa: ANN001, ANN202, E501
                      ctype, ldc):
    """The timed baseline on GPUs: one fp16/bf16 tensor-core GEMM with an fp32 result
    (torch.mm's out_dtype, cuBLAS's GemmEx), not the reference's upcast fp32 GEMM."""
    import torch

    if not c.is_cuda:
        return _gemm_reference("ex", False)(transa, transb, m, n, k, alpha, a, atype, lda, b,
                                             btype, ldb, beta, c, ctype, ldc)
    (ar, ac), (br, bc) = gemm_stored({"transa": transa, "transb": transb, "m": m, "n": n, "k": k})
    va = op(matrix(a, ar, ac, lda), transa)
    vb = op(matrix(b, br, bc, ldb), transb)
    vc = matrix(c, m, n, ldc)
    product = torch.mm(va, vb, out_dtype=torch.float32)
    if beta == 0:
        vc.copy_(product.mul_(alpha))
    else:
        vc.mul_(beta).add_(product, alpha=alpha)


def _hgemm_baseline(kind: str) -> Callable[..., None]:
    """Torch's native fp16 GEMM (cuBLAS's fp16 path), the timed baseline for Hgemm."""
    return _gemm_reference(kind, False, fp32_once=False)


# -- specs -----------------------------------------------------------------------------------
_GEMM_ARGS = ("transa: str, transb: str, m: int, n: int, k: int, alpha: {s}, A: Tensor, "
              "lda: int, B: Tensor, ldb: int, beta: {s}, C: Tensor, ldc: int")
_STRIDED_ARGS = ("transa: str, transb: str, m: int, n: int, k: int, alpha: {s}, A: Tensor, "
                 "lda: int, strideA: int, B: Tensor, ldb: int, strideB: int, beta: {s}, "
                 "C: Tensor, ldc: int, strideC: int, batchCount: int")
_BATCHED_ARGS = ("transa: str, transb: str, m: int, n: int, k: int, alpha: {s}, "
                 "Aarray: list[Tensor], lda: int, Barray: list[Tensor], ldb: int, beta: {s}, "
                 "Carray: list[Tensor], ldc: int, batchCount: int")
_MEANING = ("C = alpha * op(A) @ op(B) + beta * C, with op(A) m x k and op(B) k x n; A is "
            "stored m x k (lda >= m) when transa == 'N', else k x m (lda >= k); B is stored "
            "k x n (ldb >= k) when transb == 'N', else n x k (ldb >= n); C is m x n (ldc >= "
            "m) and is written in place.")
_PRECISION = {
    "float32": "fp32 buffers, exact fp32 arithmetic (no TF32)",
    "float64": "fp64 buffers and arithmetic",
    "float16": ("fp16 buffers; accumulate in fp32 and round the result once to fp16 (the "
                "reference computes alpha * op(A) @ op(B) + beta * C in fp32 and rounds once; "
                "cuBLAS's Hgemm may accumulate in fp16 on some GPUs, and torch's native fp16 "
                "GEMM is the timed baseline)"),
}


def _precision_note(name: str) -> str:
    dtype, is_complex = precision_of(name)
    if not is_complex:
        return f" Precision: {_PRECISION[dtype]}."
    parts = "complex64 buffers (fp32 parts), exact fp32 arithmetic (no TF32)" \
        if dtype == "float32" else "complex128 buffers (fp64 parts), fp64 arithmetic"
    return (f" Precision: {parts}. alpha and beta arrive as Python complex values (a case's "
            f"parameters list them as [re, im]).")


def _gemm_spec(name: str, kind: str, cases: tuple[ShapeCase, ...], entry: str) -> OperatorSpec:
    dtype, is_complex = precision_of(name)
    scalar = "complex" if is_complex else "float"
    args = {"gemm": _GEMM_ARGS, "strided": _STRIDED_ARGS, "batched": _BATCHED_ARGS}[kind]
    half = dtype == "float16"
    if kind == "gemm":
        layout = _MEANING
        mutated = (11,)
    elif kind == "strided":
        layout = ("For each batch i in 0..batchCount-1, " + _MEANING.replace("C = ", "C_i = ")
                  + " Matrix i of A starts at A's element i * strideA (likewise B, C: "
                  "strides in elements, complex elements for complex routines); strideA == 0 "
                  "means one A shared by every batch. Elements between one batch's matrix and "
                  "the next stay untouched.")
        mutated = (13,)
    else:
        layout = ("For each batch i in 0..batchCount-1, " + _MEANING.replace("C = ", "C_i = ")
                  + " Aarray, Barray and Carray are Python lists of separate 1-D buffers "
                  "(cuBLAS's arrays of device pointers): matrix i is Aarray[i] etc., each in "
                  "its own memory. Each Carray[i] is written in place.")
        mutated = (11,)
    description = (f"cuBLAS {name}: " + layout + _FLAG_NOTE + _BETA_NOTE + _precision_note(name)
                   + COLUMN_MAJOR_NOTE)
    if name.endswith("_64"):
        description += SIXTY_FOUR_NOTE
    if kind == "batched":
        description += (" The reference loops over the batch with torch.addmm_ (torch has no "
                        "pointer-array GEMM).")
    tags = {FAMILY, "gemm"} | ({"batched"} if kind != "gemm" else set())
    return cublas_op(
        name,
        signature=f"kernel({args.format(s=scalar)}) -> None",
        description=description,
        reference=_gemm_reference(kind, is_complex, fp32_once=half),
        make_inputs=_gemm_inputs(kind, is_complex),
        cases=cases,
        flops=gemm_flops(is_complex),
        bytes_moved=gemm_bytes(is_complex),
        tags=tuple(tags),
        mutated_args=mutated,
        reduce_dim=lambda p: p["k"],
        reference_kernel=from_template("level3_gemm", entry=entry, complex=str(is_complex)),
        baseline=_hgemm_baseline(kind) if half else None,
        product_bound="interleaved" if is_complex else True,
    )


def _gemm_ex_spec() -> OperatorSpec:
    return cublas_op(
        "cublasSgemmEx",
        signature="kernel(transa: str, transb: str, m: int, n: int, k: int, alpha: float, "
                  "A: Tensor, Atype: str, lda: int, B: Tensor, Btype: str, ldb: int, "
                  "beta: float, C: Tensor, Ctype: str, ldc: int) -> None",
        description=("cuBLAS cublasSgemmEx with low-precision inputs: " + _MEANING + _FLAG_NOTE
                     + _BETA_NOTE + " A and B are float16 (Atype = Btype = 'CUDA_R_16F') or "
                     "bfloat16 ('CUDA_R_16BF') buffers, the case's dtype; C is a float32 "
                     "buffer (Ctype = 'CUDA_R_32F'); the products are accumulated and alpha, "
                     "beta applied in fp32 (the reference upcasts A and B to fp32; the timed "
                     "baseline on GPUs is torch.mm with out_dtype=float32, a tensor-core "
                     "fp16/bf16 GEMM with an fp32 result, as cuBLAS's GemmEx)."
                     + COLUMN_MAJOR_NOTE),
        reference=_gemm_reference("ex", False),
        make_inputs=_gemm_inputs("ex", False),
        cases=GEMM_EX_CASES,
        flops=gemm_flops(False),
        bytes_moved=gemm_bytes(False, c_itemsize=4),
        dtypes=("float16", "bfloat16"),
        tags=(FAMILY, "gemm", "mixed_precision"),
        mutated_args=(13,),
        reduce_dim=lambda p: p["k"],
        reference_kernel=from_template("level3_gemm", entry="gemm_ex", complex="False"),
        baseline=_gemm_ex_baseline,
    )


# -- geam and dgmm ---------------------------------------------------------------------------
GEAM_CASES = (
    ShapeCase("nn_odd_padded", {"transa": "N", "transb": "N", "m": 37, "n": 29, "lda": 40,
                                "ldb": 39, "ldc": 41, "alpha": 1.5, "beta": -0.5}),
    ShapeCase("nt_padded", {"transa": "N", "transb": "T", "m": 23, "n": 45, "lda": 25,
                            "ldb": 47, "ldc": 26, "alpha": -0.75, "beta": 2.0}),
    ShapeCase("tn_padded", {"transa": "T", "transb": "N", "m": 50, "n": 13, "lda": 15,
                            "ldb": 53, "ldc": 52, "alpha": 0.25, "beta": 1.25}),
    ShapeCase("tt_single_row", {"transa": "T", "transb": "T", "m": 1, "n": 67, "lda": 70,
                                "ldb": 69, "ldc": 3, "alpha": 2.0, "beta": -1.0}),
    ShapeCase("heldout_tn", {"transa": "T", "transb": "N", "m": 19, "n": 31, "lda": 33,
                             "ldb": 20, "ldc": 22, "alpha": -1.5, "beta": 0.75}, heldout=True),
    ShapeCase("square_4096_nt", {"transa": "N", "transb": "T", "m": 4096, "n": 4096,
                                 "lda": 4096, "ldb": 4096, "ldc": 4096, "alpha": 1.0,
                                 "beta": 0.5}, tier=LARGE),
    ShapeCase("llm_14336x4096_nn", {"transa": "N", "transb": "N", "m": 14336, "n": 4096,
                                    "lda": 14336, "ldb": 14336, "ldc": 14336, "alpha": 1.0,
                                    "beta": -1.0}, tier=LARGE),
)

DGMM_CASES = (
    ShapeCase("right_odd_padded", {"side": "R", "m": 37, "n": 29, "lda": 40, "incx": 1,
                                   "ldc": 39}),
    ShapeCase("left_strided_x", {"side": "L", "m": 45, "n": 23, "lda": 47, "incx": 3,
                                 "ldc": 46}),
    ShapeCase("right_strided_x", {"side": "R", "m": 13, "n": 61, "lda": 15, "incx": 2,
                                  "ldc": 17}),
    ShapeCase("left_single_column", {"side": "L", "m": 67, "n": 1, "lda": 70, "incx": 1,
                                     "ldc": 68}),
    ShapeCase("heldout_left", {"side": "L", "m": 19, "n": 33, "lda": 21, "incx": 2,
                               "ldc": 20}, heldout=True),
    ShapeCase("right_4096x14336", {"side": "R", "m": 4096, "n": 14336, "lda": 4096,
                                   "incx": 1, "ldc": 4096}, tier=LARGE),
    ShapeCase("left_14336x4096", {"side": "L", "m": 14336, "n": 4096, "lda": 14336,
                                  "incx": 1, "ldc": 14336}, tier=LARGE),
)


def _geam_stored(p: Mapping[str, Any], trans: str) -> tuple[int, int]:
    return (p["m"], p["n"]) if trans == "N" else (p["n"], p["m"])


def _geam_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    a = ctx.randn(column_major_length(*_geam_stored(p, p["transa"]), p["lda"]))
    b = ctx.randn(column_major_length(*_geam_stored(p, p["transb"]), p["ldb"]))
    c = ctx.randn(column_major_length(p["m"], p["n"], p["ldc"]))
    return [p["transa"], p["transb"], p["m"], p["n"], float(p["alpha"]), a, p["lda"],
            float(p["beta"]), b, p["ldb"], c, p["ldc"]]


def _geam_reference(transa, transb, m, n, alpha, a, lda, beta, b, ldb, c, ldc):  # noqa: ANN001, ANN202, E501
    """Composed: torch has no geam; alpha * op(A) + beta * op(B) in fp32 into C's view."""
    import torch

    va = op(matrix(a, *_geam_stored({"m": m, "n": n}, transa), lda), transa)
    vb = op(matrix(b, *_geam_stored({"m": m, "n": n}, transb), ldb), transb)
    matrix(c, m, n, ldc).copy_(torch.add(va * alpha, vb, alpha=beta))


def _dgmm_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    a = ctx.randn(column_major_length(p["m"], p["n"], p["lda"]))
    length = p["n"] if p["side"] == "R" else p["m"]
    x = ctx.randn((length - 1) * p["incx"] + 1)
    c = ctx.randn(column_major_length(p["m"], p["n"], p["ldc"]))
    return [p["side"], p["m"], p["n"], a, p["lda"], x, p["incx"], c, p["ldc"]]


def _dgmm_reference(side, m, n, a, lda, x, incx, c, ldc):  # noqa: ANN001, ANN202
    """Composed: A scaled by x along its columns (side R) or rows (side L)."""
    from kgb_sources.cublas._build import vector

    va = matrix(a, m, n, lda)
    if side == "R":
        scaled = va * vector(x, n, incx)[None, :]
    elif side == "L":
        scaled = va * vector(x, m, incx)[:, None]
    else:
        raise ValueError(f"side must be L or R, not {side!r}")
    matrix(c, m, n, ldc).copy_(scaled)


def _elementwise_specs() -> list[OperatorSpec]:
    return [
        cublas_op(
            "cublasSgeam",
            signature="kernel(transa: str, transb: str, m: int, n: int, alpha: float, "
                      "A: Tensor, lda: int, beta: float, B: Tensor, ldb: int, C: Tensor, "
                      "ldc: int) -> None",
            description=("cuBLAS cublasSgeam: C = alpha * op(A) + beta * op(B), all m x n; A "
                         "is stored m x n (lda >= m) when transa == 'N', else n x m (lda >= "
                         "n), likewise B with transb and ldb; C (ldc >= m) is written, not "
                         "read." + _FLAG_NOTE + " fp32 arithmetic. The reference is composed "
                         "(torch has no geam): alpha * op(A) + beta * op(B) copied into C."
                         + COLUMN_MAJOR_NOTE),
            reference=_geam_reference,
            make_inputs=_geam_inputs,
            cases=GEAM_CASES,
            flops=lambda p: 3.0 * p["m"] * p["n"],
            bytes_moved=lambda p, size: 3.0 * p["m"] * p["n"] * size,
            tags=(FAMILY, "geam"),
            mutated_args=(10,),
        ),
        cublas_op(
            "cublasSdgmm",
            signature="kernel(side: str, m: int, n: int, A: Tensor, lda: int, x: Tensor, "
                      "incx: int, C: Tensor, ldc: int) -> None",
            description=("cuBLAS cublasSdgmm: C = A @ diag(x) when side == 'R' (C[i, j] = "
                         "A[i, j] * x[j], x of n elements) or C = diag(x) @ A when side == 'L' "
                         "(C[i, j] = x[i] * A[i, j], x of m elements); A and C are m x n "
                         "(lda, ldc >= m); x's element i is x[i * incx]. C is written, not "
                         "read. fp32 arithmetic. The reference is composed (torch has no "
                         "dgmm): a broadcast multiply copied into C." + COLUMN_MAJOR_NOTE),
            reference=_dgmm_reference,
            make_inputs=_dgmm_inputs,
            cases=DGMM_CASES,
            flops=lambda p: float(p["m"] * p["n"]),
            bytes_moved=lambda p, size: (2.0 * p["m"] * p["n"]
                                         + (p["n"] if p["side"] == "R" else p["m"])) * size,
            tags=(FAMILY, "dgmm"),
            mutated_args=(7,),
        ),
    ]


def operators() -> list[OperatorSpec]:
    real_strided = _batched_cases(False, True, (512, 1024))
    complex_strided = _batched_cases(True, True, (512,))
    return [
        _gemm_spec("cublasSgemm_v2", "gemm", SGEMM_CASES, "gemm"),
        _gemm_spec("cublasCgemm_v2", "gemm", CGEMM_CASES, "gemm"),
        _gemm_ex_spec(),
        _gemm_spec("cublasSgemmStridedBatched", "strided", real_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasDgemmStridedBatched", "strided", real_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasDgemmStridedBatched_64", "strided", real_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasCgemmStridedBatched", "strided", complex_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasCgemmStridedBatched_64", "strided", complex_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasZgemmStridedBatched", "strided", complex_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasHgemmStridedBatched", "strided", real_strided,
                   "gemm_strided_batched"),
        _gemm_spec("cublasDgemmBatched", "batched", _batched_cases(False, False, (512,)),
                   "gemm_batched"),
        _gemm_spec("cublasHgemmBatched", "batched", _batched_cases(False, False, (1024,)),
                   "gemm_batched"),
        _gemm_spec("cublasSgemmBatched_64", "batched", _batched_cases(False, False, (1024,)),
                   "gemm_batched"),
        _gemm_spec("cublasZgemmBatched", "batched", _batched_cases(True, False, (256,)),
                   "gemm_batched"),
        *_elementwise_specs(),
    ]
