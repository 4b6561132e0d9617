"""Mixed-precision GEMMs and cuBLASLt matmuls: cublasGemmEx with fp16/bf16 inputs and outputs
(fp32 compute) and with int8 inputs and an int32 output; cublasLtMatmul with fused epilogues
(bias, relu, gelu, bias + relu, bias + gelu, bias + gelu with the pre-activation written to an
aux buffer); cublasLtMatmul on fp8 e4m3 with per-tensor scales; cublasGemmGroupedBatchedEx.

Everything is column-major, as cuBLAS and cuBLASLt are (``_build``'s conventions): op(A) is
m x k, op(B) k x n, the output D (C for gemmEx) m x n with a leading dimension; a bias is a
vector of m values, one per row of D, broadcast over D's columns, which is cuBLASLt's
CUBLASLT_EPILOGUE_BIAS. In torch's row-major terms D^T = op(B)^T @ op(A)^T + bias, i.e.
``torch.addmm(bias, x, w)`` with the bias along the last dim, so an LLM linear layer
(features m, tokens n) is the TN case and decode has few columns.

The references compute in fp32 (exact products of the upcast inputs) and round once, which is
what cuBLAS's CUBLAS_COMPUTE_32F does; the timed baselines on GPUs are the torch calls that
run cuBLAS/cuBLASLt themselves: addmm_ (GemmEx), addmm and _addmm_activation (cuBLASLt's
BIAS, RELU_BIAS and GELU_BIAS epilogues), _scaled_mm (fp8), _int_mm (int8). cuBLASLt's GELU is
the tanh approximation: torch treats its GELU epilogue as ``gelu(approximate="tanh")`` and
computes exactly that where it cannot fuse it (aten/src/ATen/native/cuda/Blas.cpp,
addmm_out_cuda_impl). The int8 reference is exact (``torch._int_mm`` where its cuBLASLt
layout applies, else an fp64 product, exact for these sums), compared exactly.

Triton's CPU interpreter computes bf16 on bit patterns (shared/notes/triton-interpreter-facts.md);
the CPU backend's shim computes it through fp32 (kgb_backends/interpreter_bf16.py), so every
bf16 case runs there too. fp8 arithmetic itself works in the interpreter (``tl.dot`` on
float8e4nv operands matched the fp32 product of the same values to within fp32 rounding,
Triton 3.9).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from kgb_core.operators import LARGE, SMALL, InputContext, OperatorSpec, ShapeCase

from kgb_sources.cublas._build import (
    COLUMN_MAJOR_NOTE, column_major_length, cublas_op, from_template, gemm_bytes, gemm_case,
    gemm_flops, gemm_lengths, gemm_stored, matrix, op,
)

FAMILY = "lt_matmul"
_TYPE_NAMES = {"float16": "CUDA_R_16F", "bfloat16": "CUDA_R_16BF", "float32": "CUDA_R_32F"}
_FLAG_NOTE = (" transa/transb are the letters 'N' (op(X) = X) or 'T' (X^T); 'C' means 'T' for "
              "these real types.")
_LAYOUT = ("op(A) is m x k and op(B) k x n; A is stored m x k (lda >= m) when transa == 'N', "
           "else k x m (lda >= k); B is stored k x n (ldb >= k) when transb == 'N', else "
           "n x k (ldb >= n).")


def _fp32_product(a: Any, b: Any) -> Any:
    """op(A) @ op(B) as exact fp32 products of the upcast values (contiguous copies: cuBLASLt
    rejected matmuls on some upcast strided views on an H200)."""
    return a.float().contiguous() @ b.float().contiguous()


def _operands(transa: str, transb: str, m: int, n: int, k: int, a: Any, lda: int, b: Any,
              ldb: int) -> tuple[Any, Any]:
    (ar, ac), (br, bc) = gemm_stored({"transa": transa, "transb": transb, "m": m, "n": n,
                                      "k": k})
    return op(matrix(a, ar, ac, lda), transa), op(matrix(b, br, bc, ldb), transb)


def _nan(ctx: InputContext, length: int, dtype: Any = None) -> Any:
    """An output buffer the routine must not read: NaN shows any read, or unwritten element."""
    return ctx.randn(length, dtype=dtype).fill_(float("nan"))


# == cublasGemmEx: fp16/bf16 in and out, fp32 compute ========================================
GEMM_EX_CASES = (
    gemm_case("nn_odd_padded", "NN", 37, 29, 53, (4, 3, 3), 1.5, -0.5),
    gemm_case("tn_padded", "TN", 23, 41, 61, (3, 6, 6), 0.5, 2.0),
    gemm_case("nt_beta_zero_nan_c", "NT", 45, 19, 33, (2, 4, 5), -0.75, 0.0),
    gemm_case("tt_skinny", "TT", 3, 50, 40, (3, 5, 2), 1.25, 0.25),
    gemm_case("heldout_tn", "TN", 9, 27, 70, (1, 2, 4), -1.5, 0.75, heldout=True),
    # Llama-3-8B's MLP up-projection over 4096 tokens: W (stored k x m, transposed) times X.
    gemm_case("llama_mlp_14336x4096x4096", "TN", 14336, 4096, 4096, (0, 0, 0), 1.0, 0.0,
              tier=LARGE),
    gemm_case("decode_m8_x14336_k4096", "TN", 8, 14336, 4096, (0, 0, 0), 1.0, 1.0,
              tier=LARGE),
    gemm_case("odd_3001x1999x5003", "NN", 3001, 1999, 5003, (0, 0, 0), 0.5, 0.5, tier=LARGE),
)


def _gemm_ex_inputs(ctx: InputContext) -> list[Any]:
    p = ctx.params
    len_a, len_b, len_c = gemm_lengths(p)
    c = _nan(ctx, len_c) if p["beta"] == 0 else ctx.randn(len_c)
    name = _TYPE_NAMES[ctx.dtype_name]
    return [p["transa"], p["transb"], p["m"], p["n"], p["k"], float(p["alpha"]),
            ctx.randn(len_a), name, p["lda"], ctx.randn(len_b), name, p["ldb"],
            float(p["beta"]), c, name, p["ldc"], "CUBLAS_COMPUTE_32F", "CUBLAS_GEMM_DEFAULT"]


def _gemm_ex_reference(transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta,  # noqa: ANN001, ANN202, E501
                       c, ctype, ldc, compute_type, algo):
    """Composed: the fp32 product, alpha and beta in fp32, one rounding to C's type."""
    if m <= 0 or n <= 0:
        return
    va, vb = _operands(transa, transb, m, n, k, a, lda, b, ldb)
    vc = matrix(c, m, n, ldc)
    out = _fp32_product(va, vb) * alpha
    if beta != 0:  # beta == 0: C is not read
        out += beta * vc.float()
    vc.copy_(out.to(vc.dtype))


def _gemm_ex_baseline(transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta,  # noqa: ANN001, ANN202, E501
                      c, ctype, ldc, compute_type, algo):
    """Torch's native fp16/bf16 GEMM in place on the buffers' views: cublasGemmEx with fp32
    compute on NVIDIA (torch ignores C when beta == 0, as cuBLAS does)."""
    if m <= 0 or n <= 0:
        return
    va, vb = _operands(transa, transb, m, n, k, a, lda, b, ldb)
    matrix(c, m, n, ldc).addmm_(va, vb, beta=beta, alpha=alpha)


def _gemm_ex_spec(name: str, dtype: str) -> OperatorSpec:
    type_name = _TYPE_NAMES[dtype]
    return cublas_op(
        name,
        signature="kernel(transa: str, transb: str, m: int, n: int, k: int, alpha: float, "
                  "A: Tensor, Atype: str, lda: int, B: Tensor, Btype: str, ldb: int, "
                  "beta: float, C: Tensor, Ctype: str, ldc: int, computeType: str, "
                  "algo: str) -> None",
        description=(
            f"cuBLAS cublasGemmEx with {dtype} A, B and C (Atype = Btype = Ctype = "
            f"'{type_name}') and computeType 'CUBLAS_COMPUTE_32F' (algo "
            "'CUBLAS_GEMM_DEFAULT'): C = alpha * op(A) @ op(B) + beta * C, written in place. "
            + _LAYOUT + " C is m x n (ldc >= m)." + _FLAG_NOTE + " The products are "
            "accumulated, and alpha (float) and beta (float) applied, in fp32; C is rounded "
            f"to {dtype} once. When beta == 0, C is not read (cuBLAS: it need not be set), so "
            "NaN in it must not reach the output. The reference is composed (the fp32 product "
            "of the upcast inputs, rounded once); the timed baseline on GPUs is torch's "
            f"native {dtype} addmm_ on the buffers' views, which is this cuBLAS call."
            + COLUMN_MAJOR_NOTE),
        reference=_gemm_ex_reference,
        make_inputs=_gemm_ex_inputs,
        cases=GEMM_EX_CASES,
        flops=gemm_flops(False),
        bytes_moved=gemm_bytes(False),
        dtypes=(dtype,),
        tags=(FAMILY, "gemm", "mixed_precision"),
        mutated_args=(13,),
        reduce_dim=lambda p: p["k"],
        reference_kernel=from_template("lt_matmul", entry="gemm_ex"),
        baseline=_gemm_ex_baseline,
    )


# == cublasGemmEx: int8 in, int32 out ==========================================================
# cuBLAS documents its int8 GemmEx path (CUBLAS_COMPUTE_32I) for alpha and beta of 1 or 0 and
# for lda and ldb that are multiples of 4 (4-byte aligned columns): every case keeps to that.
INT8_CASES = (
    gemm_case("nn_padded", "NN", 37, 29, 52, (3, 4, 2), 1, 1),
    gemm_case("tn_int_mm_layout", "TN", 24, 33, 48, (4, 4, 2), 1, 1),
    gemm_case("nt_beta_zero", "NT", 19, 21, 36, (1, 3, 3), 1, 0),
    gemm_case("tt_single_row", "TT", 1, 45, 20, (0, 3, 2), 1, 1),
    gemm_case("heldout_tn", "TN", 13, 17, 44, (4, 4, 1), 1, 0, heldout=True),
    gemm_case("llama_mlp_14336x4096x4096", "TN", 14336, 4096, 4096, (0, 0, 0), 1, 0,
              tier=LARGE),
    gemm_case("decode_m16_x14336_k4096", "TN", 16, 14336, 4096, (0, 0, 0), 1, 1, tier=LARGE),
    # Odd n; m and k stay multiples of 8, so that torch._int_mm (the baseline) applies.
    gemm_case("odd_n_2000x1999x3000", "TN", 2000, 1999, 3000, (0, 0, 0), 1, 1, tier=LARGE),
)


def _int8_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    len_a, len_b, len_c = gemm_lengths(p)
    a = ctx.randint(len_a, low=-128, high=128, dtype=torch.int8)
    b = ctx.randint(len_b, low=-128, high=128, dtype=torch.int8)
    # C holds values up to 2^20 (|op(A) @ op(B)| <= 2^14 k stays far below 2^31); with
    # beta == 0 they are garbage the routine must not add.
    c = ctx.randint(len_c, low=-(1 << 20), high=1 << 20, dtype=torch.int32)
    return [p["transa"], p["transb"], p["m"], p["n"], p["k"], int(p["alpha"]), a,
            "CUDA_R_8I", p["lda"], b, "CUDA_R_8I", p["ldb"], int(p["beta"]), c, "CUDA_R_32I",
            p["ldc"], "CUBLAS_COMPUTE_32I", "CUBLAS_GEMM_DEFAULT"]


def int_mm_applies(transa: str, transb: str, m: int, n: int, k: int) -> bool:
    """Whether torch._int_mm can compute op(A) @ op(B) on NVIDIA: in row-major terms it is
    C^T = op(B)^T @ op(A)^T, and _int_mm takes mat1 row-major (n x k: transb 'N') and mat2
    column-major (k x m: transa 'T'), mat1 with more than 16 rows, k and m multiples of 8
    (the checks of _int_mm_out_cuda, aten/src/ATen/native/cuda/Blas.cpp)."""
    return transa == "T" and transb == "N" and n > 16 and k % 8 == 0 and m % 8 == 0 and k > 0


def _int8_product(transa: str, transb: str, m: int, n: int, k: int, va: Any, vb: Any) -> Any:
    """op(A) @ op(B) exactly, as int64: torch._int_mm where it applies; else an fp64 product,
    exact because every partial sum is an integer below 2^14 k < 2^53 (torch has no int
    matmul on CUDA)."""
    import torch

    if int_mm_applies(transa, transb, m, n, k):
        return torch._int_mm(vb.t(), va.t()).t().long()
    return torch.round(va.double() @ vb.double()).long()


def _int8_reference(transa, transb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c,  # noqa: ANN001, ANN202, E501
                    ctype, ldc, compute_type, algo):
    if m <= 0 or n <= 0:
        return
    va, vb = _operands(transa, transb, m, n, k, a, lda, b, ldb)
    vc = matrix(c, m, n, ldc)
    out = alpha * _int8_product(transa, transb, m, n, k, va, vb)
    if beta != 0:
        out += beta * vc.long()
    vc.copy_(out.to(vc.dtype))


def _int8_spec() -> OperatorSpec:
    return cublas_op(
        "cublasGemmEx_i8_i32",
        signature="kernel(transa: str, transb: str, m: int, n: int, k: int, alpha: int, "
                  "A: Tensor, Atype: str, lda: int, B: Tensor, Btype: str, ldb: int, "
                  "beta: int, C: Tensor, Ctype: str, ldc: int, computeType: str, "
                  "algo: str) -> None",
        description=(
            "cuBLAS cublasGemmEx with int8 A and B (Atype = Btype = 'CUDA_R_8I'), an int32 C "
            "(Ctype = 'CUDA_R_32I') and computeType 'CUBLAS_COMPUTE_32I' (algo "
            "'CUBLAS_GEMM_DEFAULT'): C = alpha * op(A) @ op(B) + beta * C in int32, written in "
            "place. " + _LAYOUT + " C is m x n (ldc >= m)." + _FLAG_NOTE + " alpha and beta "
            "are Python ints; cuBLAS documents this path for alpha and beta of 1 or 0 and for "
            "lda and ldb that are multiples of 4, and the cases keep to that. When beta == 0, "
            "C is not read (it holds unrelated values). The products are accumulated in int32 "
            "without overflow for these sizes; the result is compared exactly. The reference "
            "is torch._int_mm (cuBLASLt's int8 GEMM on NVIDIA) where its layout applies "
            "(transa 'T', transb 'N', n > 16, k and m multiples of 8), else composed from an "
            "fp64 product, which is exact here." + COLUMN_MAJOR_NOTE),
        reference=_int8_reference,
        make_inputs=_int8_inputs,
        cases=INT8_CASES,
        flops=gemm_flops(False),
        # int8 A and B, an int32 C read (unless beta == 0) and written.
        bytes_moved=lambda p, size: gemm_bytes(False, c_itemsize=4)(p, 1),
        dtypes=("int8",),
        tags=(FAMILY, "gemm", "mixed_precision", "int8"),
        mutated_args=(13,),
        reduce_dim=lambda p: p["k"],
        reference_kernel=from_template("lt_matmul", entry="gemm_ex"),
    )


# == cublasLtMatmul with epilogues ============================================================
def lt_case(name: str, trans: str, m: int, n: int, k: int, pads: tuple[int, int, int],
            alpha: float, *, aux_pad: int | None = None, tier: str = SMALL,
            heldout: bool = False) -> ShapeCase:
    """A cublasLtMatmul case: beta is 0 (no C), the output D has leading dimension ldd
    (``pads[2]`` rows of padding), and an aux buffer (when ``aux_pad`` is given) ldaux."""
    base = gemm_case(name, trans, m, n, k, pads, alpha, 0.0, tier=tier, heldout=heldout)
    params = {key: value for key, value in base.params.items() if key not in ("ldc", "beta")}
    params["ldd"] = base.params["ldc"]
    if aux_pad is not None:
        params["ldaux"] = m + aux_pad
    return ShapeCase(name, params, tier=tier, heldout=heldout)


def _lt_cases(aux: bool) -> tuple[ShapeCase, ...]:
    pads = (5, 2, 8, 3, 1) if aux else (None,) * 5
    return (
        lt_case("nn_odd_padded", "NN", 37, 29, 53, (4, 3, 3), 1.5, aux_pad=pads[0]),
        lt_case("tn_padded", "TN", 23, 41, 61, (3, 6, 6), -0.75, aux_pad=pads[1]),
        # One column: a single decode token (a gemv with the epilogue).
        lt_case("nt_single_column", "NT", 45, 1, 33, (2, 4, 5), 0.5, aux_pad=pads[2]),
        lt_case("tt_padded", "TT", 19, 26, 40, (3, 5, 2), 1.25, aux_pad=pads[3]),
        lt_case("heldout_tn", "TN", 9, 27, 70, (1, 2, 4), -1.5, aux_pad=pads[4], heldout=True),
        # Llama-3-8B's MLP up-projection (14336 features) over 4096 tokens.
        lt_case("llama_mlp_14336x4096x4096", "TN", 14336, 4096, 4096, (0, 0, 0), 1.0,
                aux_pad=0 if aux else None, tier=LARGE),
        lt_case("decode_n8_x14336_k4096", "TN", 14336, 8, 4096, (0, 0, 0), 1.0,
                aux_pad=0 if aux else None, tier=LARGE),
        lt_case("odd_5003x1999x3001", "NN", 5003, 1999, 3001, (0, 0, 0), 0.5,
                aux_pad=0 if aux else None, tier=LARGE),
    )


# name suffix -> (activation, with bias, with aux, cuBLASLt epilogue)
EPILOGUES: Mapping[str, tuple[str, bool, bool, str]] = {
    "bias": ("none", True, False, "CUBLASLT_EPILOGUE_BIAS"),
    "relu": ("relu", False, False, "CUBLASLT_EPILOGUE_RELU"),
    "gelu": ("gelu", False, False, "CUBLASLT_EPILOGUE_GELU"),
    "bias_relu": ("relu", True, False, "CUBLASLT_EPILOGUE_RELU_BIAS"),
    "bias_gelu": ("gelu", True, False, "CUBLASLT_EPILOGUE_GELU_BIAS"),
    "bias_gelu_aux": ("gelu", True, True, "CUBLASLT_EPILOGUE_GELU_AUX_BIAS"),
}


def _activate(x: Any, activation: str) -> Any:
    import torch

    if activation == "relu":
        return torch.relu(x)
    if activation == "gelu":
        return torch.nn.functional.gelu(x, approximate="tanh")
    return x


def _activate_(x: Any, activation: str) -> None:
    import torch

    if activation == "relu":
        torch.relu_(x)
    elif activation == "gelu":
        x.copy_(torch.nn.functional.gelu(x, approximate="tanh"))


def _lt_inputs(with_bias: bool, with_aux: bool) -> Callable[[InputContext], list[Any]]:
    def make(ctx: InputContext) -> list[Any]:
        p = ctx.params
        len_a, len_b, _ = gemm_lengths({**p, "ldc": p["ldd"]})
        args = [p["transa"], p["transb"], p["m"], p["n"], p["k"], float(p["alpha"]),
                ctx.randn(len_a), p["lda"], ctx.randn(len_b), p["ldb"]]
        if with_bias:
            args.append(ctx.randn(p["m"]))
        args += [_nan(ctx, column_major_length(p["m"], p["n"], p["ldd"])), p["ldd"]]
        if with_aux:
            args += [_nan(ctx, column_major_length(p["m"], p["n"], p["ldaux"])), p["ldaux"]]
        return args

    return make


def _split_lt_args(args: Sequence[Any], with_bias: bool, with_aux: bool
                   ) -> tuple[Any, Any, Any, int, Any, int]:
    """(bias, D, ldd, aux, ldaux) of a cublasLtMatmul routine's arguments after ldb."""
    rest = list(args[10:])
    bias = rest.pop(0) if with_bias else None
    d, ldd = rest[0], rest[1]
    aux, ldaux = (rest[2], rest[3]) if with_aux else (None, 0)
    return bias, d, ldd, aux, ldaux


def _lt_reference(activation: str, with_bias: bool, with_aux: bool) -> Callable[..., None]:
    def reference(*args: Any) -> None:
        transa, transb, m, n, k, alpha, a, lda, b, ldb = args[:10]
        bias, d, ldd, aux, ldaux = _split_lt_args(args, with_bias, with_aux)
        if m <= 0 or n <= 0:
            return
        va, vb = _operands(transa, transb, m, n, k, a, lda, b, ldb)
        pre = _fp32_product(va, vb) * alpha
        if with_bias:
            pre += bias.float()[:, None]  # one bias value per row of D
        if with_aux:
            matrix(aux, m, n, ldaux).copy_(pre.to(aux.dtype))
        matrix(d, m, n, ldd).copy_(_activate(pre, activation).to(d.dtype))

    return reference


def _into(view: Any, compute: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """``compute(*args, out=view)`` where the view is contiguous, as cuBLASLt's epilogue path
    in torch needs; else into a new tensor, copied."""
    if view.is_contiguous():
        compute(*args, out=view, **kwargs)
    else:
        view.copy_(compute(*args, **kwargs))


def _lt_baseline(activation: str, with_bias: bool, with_aux: bool) -> Callable[..., None]:
    """The timed baseline: torch's calls that run cuBLASLt's epilogues on NVIDIA, on the
    transposed (row-major) views, D^T = op(B)^T @ op(A)^T + bias: addmm with a 1-D bias
    (CUBLASLT_EPILOGUE_BIAS) and _addmm_activation (RELU_BIAS, GELU_BIAS). torch has no call
    for the bias-free epilogues, nor for an aux output: those are composed (addmm_ with beta
    0, then the activation in place; addmm into aux, then gelu into D)."""

    def baseline(*args: Any) -> None:
        import torch

        transa, transb, m, n, k, alpha, a, lda, b, ldb = args[:10]
        bias, d, ldd, aux, ldaux = _split_lt_args(args, with_bias, with_aux)
        if m <= 0 or n <= 0:
            return
        va, vb = _operands(transa, transb, m, n, k, a, lda, b, ldb)
        mat1, mat2 = vb.t(), va.t()
        out = matrix(d, m, n, ldd).t()
        if with_aux:
            pre = matrix(aux, m, n, ldaux).t()
            _into(pre, torch.addmm, bias, mat1, mat2, alpha=alpha)
            out.copy_(_activate(pre, activation))
        elif not with_bias:
            out.addmm_(mat1, mat2, beta=0, alpha=alpha)  # D not read: beta == 0
            _activate_(out, activation)
        elif activation == "none":
            _into(out, torch.addmm, bias, mat1, mat2, alpha=alpha)
        else:
            _into(out, torch._addmm_activation, bias, mat1, mat2, alpha=alpha,
                  use_gelu=activation == "gelu")

    return baseline


def _lt_bytes(with_bias: bool, with_aux: bool) -> Callable[[Mapping[str, Any], int], float]:
    def count(p: Mapping[str, Any], size: int) -> float:
        io = (p["m"] * p["k"] + p["k"] * p["n"] + p["m"] * p["n"] * (2 if with_aux else 1))
        return (io + (p["m"] if with_bias else 0)) * size

    return count


def _lt_spec(suffix: str) -> OperatorSpec:
    activation, with_bias, with_aux, epilogue = EPILOGUES[suffix]
    args = "transa: str, transb: str, m: int, n: int, k: int, alpha: float, A: Tensor, " \
           "lda: int, B: Tensor, ldb: int, "
    args += "bias: Tensor, " if with_bias else ""
    args += "D: Tensor, ldd: int" + (", aux: Tensor, ldaux: int" if with_aux else "")
    formula = "alpha * op(A) @ op(B)" + (" + bias[:, None]" if with_bias else "")
    what = {"none": f"D = {formula}",
            "relu": f"D = relu({formula})",
            "gelu": f"D = gelu_tanh({formula})"}[activation]
    notes = [f"cuBLASLt cublasLtMatmul with the epilogue {epilogue} and beta = 0 (no C): "
             f"{what}, written to D (m x n, ldd >= m), which is not read. " + _LAYOUT
             + _FLAG_NOTE + " A, B, D" + (", bias" if with_bias else "")
             + (" and aux" if with_aux else "") + " are buffers of the case's dtype; the "
             "products are accumulated, alpha (float) applied"
             + (", the bias added" if with_bias else "") + " and the activation computed in "
             "fp32, and each output rounded once."]
    if with_bias:
        notes.append(" bias holds m values, one per row of D, broadcast over D's columns "
                     "(cuBLASLt's bias semantics; in torch's row-major view D^T = op(B)^T @ "
                     "op(A)^T + bias, the bias is along the last dim, as torch.addmm takes it).")
    if activation == "relu":
        notes.append(" relu(x) = max(x, 0).")
    if activation == "gelu":
        notes.append(" gelu_tanh is cuBLASLt's GELU, the tanh approximation: 0.5 x (1 + "
                     "tanh(sqrt(2 / pi) (x + 0.044715 x^3))), torch's gelu(approximate="
                     "'tanh') (tl.math.tanh is absent in Triton 3.9's interpreter: tanh(u) = "
                     "2 sigmoid(2u) - 1).")
    if with_aux:
        notes.append(" The pre-activation alpha * op(A) @ op(B) + bias[:, None] (what gelu is "
                     "applied to) is also written to aux (m x n, leading dimension ldaux >= m, "
                     "rounded to aux's dtype), cuBLASLt's epilogue aux output for training.")
    notes.append(" The reference is composed (the fp32 product of the upcast inputs, the "
                 "epilogue in fp32, one rounding); the timed baseline on GPUs is "
                 + ("torch.addmm with the 1-D bias (cuBLASLt's BIAS epilogue) into aux, then "
                    "gelu into D" if with_aux else
                    "torch.addmm with the 1-D bias (cuBLASLt's BIAS epilogue)"
                    if activation == "none" else
                    "torch._addmm_activation (cuBLASLt's RELU_BIAS / GELU_BIAS epilogue)"
                    if with_bias else
                    "torch's addmm_ (beta 0) followed by the activation in place (torch has "
                    "no bias-free epilogue call)")
                 + " on the transposed views." + COLUMN_MAJOR_NOTE)
    mutated = 11 if with_bias else 10
    return cublas_op(
        f"cublasLtMatmul_{suffix}",
        signature=f"kernel({args}) -> None",
        description="".join(notes),
        reference=_lt_reference(activation, with_bias, with_aux),
        make_inputs=_lt_inputs(with_bias, with_aux),
        cases=_lt_cases(with_aux),
        flops=lambda p: 2.0 * p["m"] * p["n"] * p["k"],
        bytes_moved=_lt_bytes(with_bias, with_aux),
        dtypes=("float32", "float16", "bfloat16"),
        tags=(FAMILY, "gemm", "blaslt", "epilogue"),
        mutated_args=(mutated, mutated + 2) if with_aux else (mutated,),
        reduce_dim=lambda p: p["k"],
        reference_kernel=from_template("lt_matmul", entry=f"lt_{suffix}"),
        baseline=_lt_baseline(activation, with_bias, with_aux),
    )


# == cublasLtMatmul on fp8 e4m3 with per-tensor scales ========================================
def _fp8_case(name: str, m: int, n: int, k: int, pads: tuple[int, int, int], alpha: float,
              **kwargs: Any) -> ShapeCase:
    # cuBLASLt's fp8 matmul takes the "TN" layout only (A transposed, B not: both K-major;
    # torch._scaled_mm checks the same). Its operands must be 16-byte aligned, so lda, ldb
    # and k are multiples of 16 in every case.
    case = lt_case(name, "TN", m, n, k, pads, alpha, **kwargs)
    assert case.params["lda"] % 16 == 0 and case.params["ldb"] % 16 == 0 and k % 16 == 0
    return case


FP8_CASES = (
    _fp8_case("odd_m_n_padded", 37, 29, 64, (16, 16, 3), 1.0),
    _fp8_case("scaled_mm_layout", 32, 19, 48, (0, 16, 0), 1.0),
    _fp8_case("alpha_single_column", 45, 1, 32, (32, 0, 5), -0.5),
    _fp8_case("alpha_padded", 21, 40, 80, (0, 32, 2), 1.75),
    _fp8_case("heldout", 13, 17, 96, (16, 0, 1), 0.75, heldout=True),
    _fp8_case("llama_mlp_14336x4096x4096", 14336, 4096, 4096, (0, 0, 0), 1.0, tier=LARGE),
    _fp8_case("decode_n16_x14336_k4096", 14336, 16, 4096, (0, 0, 0), 1.0, tier=LARGE),
    _fp8_case("odd_n_4096x3001x14336", 4096, 3001, 14336, (0, 0, 0), 1.0, tier=LARGE),
)


def _fp8_inputs(ctx: InputContext) -> list[Any]:
    torch, p = ctx.torch, ctx.params
    len_a, len_b, _ = gemm_lengths({**p, "ldc": p["ldd"]})
    e4m3 = torch.float8_e4m3fn
    # Values of N(0, 2^2), rounded to e4m3 by torch (exact e4m3 values, |x| well below 448).
    a = ctx.randn(len_a, scale=2.0, dtype=e4m3)
    b = ctx.randn(len_b, scale=2.0, dtype=e4m3)
    a_scale = ctx.uniform(1, low=0.25, high=2.0, dtype=torch.float32)
    b_scale = ctx.uniform(1, low=0.25, high=2.0, dtype=torch.float32)
    d = _nan(ctx, column_major_length(p["m"], p["n"], p["ldd"]))
    return [p["transa"], p["transb"], p["m"], p["n"], p["k"], float(p["alpha"]), a, p["lda"],
            a_scale, b, p["ldb"], b_scale, d, p["ldd"]]


def scaled_mm_applies(transa: str, transb: str, m: int, n: int, k: int, alpha: float) -> bool:
    """Whether torch._scaled_mm computes the routine on NVIDIA: D^T = op(B)^T @ op(A)^T with
    mat1 = op(B)^T row-major (n x k) and mat2 = op(A)^T column-major (k x m), k and m
    multiples of 16 (the checks of _scaled_mm_out_cuda, aten/src/ATen/native/cuda/Blas.cpp),
    and no alpha (_scaled_mm has none)."""
    return (transa == "T" and transb == "N" and k % 16 == 0 and m % 16 == 0 and k > 0
            and alpha == 1)


def _fp8_reference(transa, transb, m, n, k, alpha, a, lda, a_scale, b, ldb, b_scale, d, ldd):  # noqa: ANN001, ANN202, E501
    """torch._scaled_mm (cuBLASLt's fp8 matmul on NVIDIA) where it applies, else composed:
    the fp32 product of the e4m3 values (each product exact in fp32) times alpha and both
    scales, rounded once."""
    import torch

    if transa != "T" or transb != "N":
        raise ValueError("cuBLASLt's fp8 matmul takes transa 'T' and transb 'N' only")
    if m <= 0 or n <= 0:
        return
    va, vb = _operands(transa, transb, m, n, k, a, lda, b, ldb)
    out = matrix(d, m, n, ldd)
    if scaled_mm_applies(transa, transb, m, n, k, alpha):
        # _scaled_mm's scale_a multiplies its mat1 (here op(B)^T), scale_b its mat2.
        _into(out.t(), torch._scaled_mm, vb.t(), va.t(), scale_a=b_scale, scale_b=a_scale,
              out_dtype=d.dtype)
        return
    scale = alpha * a_scale.float() * b_scale.float()
    out.copy_((_fp32_product(va, vb) * scale).to(d.dtype))


def _fp8_spec() -> OperatorSpec:
    return cublas_op(
        "cublasLtMatmul_fp8_e4m3",
        signature="kernel(transa: str, transb: str, m: int, n: int, k: int, alpha: float, "
                  "A: Tensor, lda: int, a_scale: Tensor, B: Tensor, ldb: int, "
                  "b_scale: Tensor, D: Tensor, ldd: int) -> None",
        description=(
            "cuBLASLt cublasLtMatmul on fp8: A and B are torch.float8_e4m3fn buffers, a_scale "
            "and b_scale float32 tensors of one element (cuBLASLt's "
            "CUBLASLT_MATMUL_DESC_A_SCALE_POINTER and _B_SCALE_POINTER, per-tensor scales), D "
            "a buffer of the case's dtype (float32 or bfloat16), beta = 0: D = alpha * "
            "a_scale[0] * b_scale[0] * op(A) @ op(B), written to D (m x n, ldd >= m), which is "
            "not read. cuBLASLt's fp8 matmul takes only the TN layout: transa is always 'T' "
            "(A stored k x m, lda >= k) and transb 'N' (B stored k x n, ldb >= k), so both "
            "operands are contiguous along k; k, lda and ldb are multiples of 16. The products "
            "are accumulated in fp32 (on Hopper, a tensor-core fp8 accumulation is less precise "
            "than fp32: promote it to an fp32 accumulator at least every 128 products), then "
            "scaled and rounded once to D's dtype. The reference is torch._scaled_mm "
            "(cuBLASLt's fp8 matmul on NVIDIA, without fast accumulation) where it applies "
            "(alpha == 1, m a multiple of 16), else composed from the fp32 product of the e4m3 "
            "values. fp8 tensors exist on H100/H200-class GPUs (sm_89+); Triton's interpreter "
            "computes fp8 dots right, so these cases run on the CPU backend too." +
            COLUMN_MAJOR_NOTE),
        reference=_fp8_reference,
        make_inputs=_fp8_inputs,
        cases=FP8_CASES,
        flops=lambda p: 2.0 * p["m"] * p["n"] * p["k"],
        bytes_moved=lambda p, size: (p["m"] * p["k"] + p["k"] * p["n"]) * 1.0
        + p["m"] * p["n"] * size,
        dtypes=("float32", "bfloat16"),
        tags=(FAMILY, "gemm", "blaslt", "fp8", "mixed_precision"),
        mutated_args=(12,),
        reduce_dim=lambda p: p["k"],
        # On the H200 (commit 92b3648) the reference kernel, its fp8 sums left in the tensor
        # cores' accumulator (Triton's sm_90 default), missed fp32's rtol: 3.3e-4 relative
        # error at K = 80 (|D| ~ 260). Hopper's fp8 tensor-core accumulation keeps about 14
        # bits, so a kernel that promotes to fp32 periodically, as cuBLASLt without fast
        # accumulation does and as the kernel now does, still cannot promise 1e-5. 2e-3 still
        # fails a kernel with a wrong scale, alpha or layout by orders of magnitude.
        tolerances={"float32": 2e-3},
        reference_kernel=from_template("lt_matmul", entry="lt_fp8"),
    )


# == cublasGemmGroupedBatchedEx ===============================================================
def _group(trans: str, m: int, n: int, k: int, pads: tuple[int, int, int], alpha: float,
           beta: float, size: int) -> dict[str, Any]:
    params = dict(gemm_case("group", trans, m, n, k, pads, alpha, beta).params)
    params["size"] = size
    return params


GROUPED_CASES = (
    ShapeCase("three_groups_mixed", {"groups": [
        _group("NN", 17, 13, 29, (2, 3, 1), 1.5, -0.5, 2),
        _group("TN", 9, 21, 16, (1, 0, 2), 0.5, 0.0, 1),
        _group("NT", 25, 7, 33, (3, 2, 0), -1.0, 1.0, 2)]}),
    ShapeCase("one_group_tt", {"groups": [_group("TT", 11, 19, 23, (2, 1, 3), 0.75, 0.25, 3)]}),
    # MoE experts: one weight shape, a different number of tokens per expert (one has one).
    ShapeCase("moe_tokens_per_expert", {"groups": [
        _group("TN", 24, n, 40, (0, 0, 0), 1.0, 0.0, 1) for n in (5, 1, 18, 9)]}),
    ShapeCase("beta_zero_nan_c_groups", {"groups": [
        _group("NN", 13, 11, 37, (3, 1, 2), -0.5, 0.0, 2),
        _group("TT", 6, 17, 12, (1, 2, 1), 2.0, 0.0, 1)]}),
    ShapeCase("heldout", {"groups": [
        _group("TN", 15, 9, 27, (1, 2, 3), 1.25, 0.5, 1),
        _group("NT", 7, 23, 19, (2, 1, 1), -0.75, 0.0, 2)]}, heldout=True),
    # Mixtral-8x7B's expert up-projections (14336 x 4096 weights) on a prefill batch routed
    # unevenly over the 8 experts.
    ShapeCase("moe_8_experts_prefill", {"groups": [
        _group("TN", 14336, n, 4096, (0, 0, 0), 1.0, 0.0, 1)
        for n in (512, 300, 1024, 77, 2048, 600, 256, 1300)]}, tier=LARGE),
    ShapeCase("moe_8_experts_decode", {"groups": [
        _group("TN", 14336, n, 4096, (0, 0, 0), 1.0, 0.0, 1)
        for n in (1, 3, 16, 2, 8, 1, 5, 12)]}, tier=LARGE),
    # One Llama-3-8B layer's projections over 2048 tokens as groups: QKV, O, gate+up, down.
    ShapeCase("llama_layer_projections", {"groups": [
        _group("TN", 6144, 2048, 4096, (0, 0, 0), 1.0, 0.0, 1),
        _group("TN", 4096, 2048, 4096, (0, 0, 0), 1.0, 1.0, 1),
        _group("TN", 28672, 2048, 4096, (0, 0, 0), 1.0, 0.0, 1),
        _group("TN", 4096, 2048, 14336, (0, 0, 0), 1.0, 1.0, 1)]}, tier=LARGE),
)


def _grouped_inputs(ctx: InputContext) -> list[Any]:
    groups = ctx.params["groups"]
    a_list, b_list, c_list = [], [], []
    for g in groups:
        len_a, len_b, len_c = gemm_lengths(g)
        for _ in range(g["size"]):
            a_list.append(ctx.randn(len_a))
            b_list.append(ctx.randn(len_b))
            c_list.append(_nan(ctx, len_c) if g["beta"] == 0 else ctx.randn(len_c))
    name = _TYPE_NAMES[ctx.dtype_name]

    def column(key: str, kind: Callable[[Any], Any] = int) -> list[Any]:
        return [kind(g[key]) for g in groups]

    return [column("transa", str), column("transb", str), column("m"), column("n"),
            column("k"), column("alpha", float), a_list, name, column("lda"), b_list, name,
            column("ldb"), column("beta", float), c_list, name, column("ldc"), len(groups),
            column("size"), "CUBLAS_COMPUTE_32F"]


def _problems(args: Sequence[Any]) -> list[tuple[dict[str, Any], Any, Any, Any]]:
    """(the group's parameters, A, B, C) for every problem, in cuBLAS's order: group 0's
    group_size[0] problems first, then group 1's, and so on."""
    (transa, transb, ms, ns, ks, alphas, a_list, _, ldas, b_list, _, ldbs, betas, c_list, _,
     ldcs, group_count, sizes, _) = args
    problems, index = [], 0
    for g in range(group_count):
        params = {"transa": transa[g], "transb": transb[g], "m": ms[g], "n": ns[g],
                  "k": ks[g], "alpha": alphas[g], "lda": ldas[g], "ldb": ldbs[g],
                  "beta": betas[g], "ldc": ldcs[g]}
        for _ in range(sizes[g]):
            problems.append((params, a_list[index], b_list[index], c_list[index]))
            index += 1
    return problems


def _grouped_reference(*args: Any) -> None:
    """Composed: every problem's fp32 product, alpha and beta in fp32, one rounding (torch
    has no grouped GEMM for every layout)."""
    for p, a, b, c in _problems(args):
        if p["m"] <= 0 or p["n"] <= 0:
            continue
        va, vb = _operands(p["transa"], p["transb"], p["m"], p["n"], p["k"], a, p["lda"], b,
                           p["ldb"])
        vc = matrix(c, p["m"], p["n"], p["ldc"])
        out = _fp32_product(va, vb) * p["alpha"]
        if p["beta"] != 0:
            out += p["beta"] * vc.float()
        vc.copy_(out.to(vc.dtype))


def _grouped_baseline(*args: Any) -> None:
    """torch's native addmm_ per problem (one cuBLAS GEMM each), the loop a grouped GEMM
    replaces."""
    for p, a, b, c in _problems(args):
        if p["m"] <= 0 or p["n"] <= 0:
            continue
        va, vb = _operands(p["transa"], p["transb"], p["m"], p["n"], p["k"], a, p["lda"], b,
                           p["ldb"])
        matrix(c, p["m"], p["n"], p["ldc"]).addmm_(va, vb, beta=p["beta"], alpha=p["alpha"])


def _grouped_flops(params: Mapping[str, Any]) -> float:
    return sum(2.0 * g["m"] * g["n"] * g["k"] * g["size"] for g in params["groups"])


def _grouped_bytes(params: Mapping[str, Any], size: int) -> float:
    return sum(gemm_bytes(False)(g, size) * g["size"] for g in params["groups"])


def _grouped_spec() -> OperatorSpec:
    return cublas_op(
        "cublasGemmGroupedBatchedEx",
        signature="kernel(transa_array: list[str], transb_array: list[str], m_array: list[int], "
                  "n_array: list[int], k_array: list[int], alpha_array: list[float], "
                  "Aarray: list[Tensor], Atype: str, lda_array: list[int], "
                  "Barray: list[Tensor], Btype: str, ldb_array: list[int], "
                  "beta_array: list[float], Carray: list[Tensor], Ctype: str, "
                  "ldc_array: list[int], group_count: int, group_size: list[int], "
                  "computeType: str) -> None",
        description=(
            "cuBLAS cublasGemmGroupedBatchedEx: group_count groups of GEMMs; every problem of "
            "group g shares transa_array[g], transb_array[g], m_array[g], n_array[g], "
            "k_array[g], alpha_array[g], lda_array[g], ldb_array[g], beta_array[g] and "
            "ldc_array[g], and group g holds group_size[g] problems. Aarray, Barray and Carray "
            "are Python lists of separate 1-D buffers (cuBLAS's device arrays of pointers), "
            "one per problem, sum(group_size) in all, in group order: group 0's problems "
            "first. For problem j of group g, C_j = alpha_g * op(A_j) @ op(B_j) + beta_g * "
            "C_j, written in place, with the group's sizes and leading dimensions: "
            + _LAYOUT + " C_j is m x n (ldc >= m)." + _FLAG_NOTE + " Atype = Btype = Ctype "
            "name the case's dtype ('CUDA_R_16F', 'CUDA_R_16BF' or 'CUDA_R_32F'), "
            "computeType is 'CUBLAS_COMPUTE_32F': products accumulated, alpha and beta "
            "applied in fp32, each C rounded once. When a group's beta == 0 its C buffers are "
            "not read (they may hold NaN). The reference is composed, problem by problem; the "
            "timed baseline on GPUs is torch's native addmm_ per problem (torch has no "
            "grouped GEMM for these layouts)." + COLUMN_MAJOR_NOTE),
        reference=_grouped_reference,
        make_inputs=_grouped_inputs,
        cases=GROUPED_CASES,
        flops=_grouped_flops,
        bytes_moved=_grouped_bytes,
        dtypes=("float32", "float16", "bfloat16"),
        tags=(FAMILY, "gemm", "grouped", "batched"),
        mutated_args=(13,),
        reduce_dim=lambda p: max(g["k"] for g in p["groups"]),
        reference_kernel=from_template("lt_matmul", entry="grouped"),
        baseline=_grouped_baseline,
    )


def operators() -> list[OperatorSpec]:
    return [
        _gemm_ex_spec("cublasGemmEx_f16_f32", "float16"),
        _gemm_ex_spec("cublasGemmEx_bf16_f32", "bfloat16"),
        _int8_spec(),
        *[_lt_spec(suffix) for suffix in EPILOGUES],
        _fp8_spec(),
        _grouped_spec(),
    ]
