"""The cuBLAS mixed-precision and cuBLASLt family (gemmEx fp16/bf16/int8, cublasLtMatmul with
epilogues, fp8 with per-tensor scales, grouped GEMM): every routine is registered with its
tags, the cases cover the flags and cuBLAS's layout rules, the references and the timed
baselines agree and write only their outputs, the reference kernels pass through the CPU
evaluator (bf16 cases included, through the CPU backend's bf16 shim), and
plausible-but-wrong kernels, each one targeted edit of the reference kernel, are rejected."""

from __future__ import annotations

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.checker import clone_tree
from kgb_core.evaluation.compare import compare_outputs
from kgb_core.operators import LARGE, SMALL, InputContext
from kgb_core.plugins import load_registry
from kgb_sources.cublas.lt_matmul import int_mm_applies, scaled_mm_applies

ROUTINES = {
    "cublasGemmEx_f16_f32", "cublasGemmEx_bf16_f32", "cublasGemmEx_i8_i32",
    "cublasLtMatmul_bias", "cublasLtMatmul_relu", "cublasLtMatmul_gelu",
    "cublasLtMatmul_bias_relu", "cublasLtMatmul_bias_gelu", "cublasLtMatmul_bias_gelu_aux",
    "cublasLtMatmul_fp8_e4m3", "cublasGemmGroupedBatchedEx",
}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_registry().operators(["cublas"])
            if "lt_matmul" in spec.tags}


def test_family_routines_are_registered_with_tags(specs):
    assert set(specs) == ROUTINES
    for name, spec in specs.items():
        assert {"lt_matmul", "gemm"} <= spec.tags, (name, sorted(spec.tags))
        assert "published" not in spec.tags and "complex" not in spec.tags, name
        shown_small = [c for c in spec.cases_in([SMALL]) if not c.heldout]
        assert 3 <= len(shown_small) <= 5, name
        assert sum(case.heldout for case in spec.cases) == 1, name
        assert 1 <= len(spec.cases_in([LARGE])) <= 3, name
        source = spec.reference_kernel()
        assert "\nkernel = " in source and "__" + "ENTRY__" not in source, name
        for case in spec.cases:
            assert spec.flops(case.params) > 0 and spec.bytes_moved(case.params, 2) > 0
    assert specs["cublasGemmEx_bf16_f32"].dtypes == ("bfloat16",)
    assert specs["cublasGemmEx_i8_i32"].tolerance("int8", {}).exact


def test_cases_cover_the_flags_and_cublas_layout_rules(specs):
    for name in ("cublasGemmEx_f16_f32", "cublasLtMatmul_bias", "cublasLtMatmul_bias_gelu_aux"):
        small = specs[name].cases_in([SMALL])
        assert {c.params["transa"] + c.params["transb"] for c in small} == \
            {"NN", "NT", "TN", "TT"}, name
        ld = "ldc" if "ldc" in small[0].params else "ldd"
        assert all(c.params[ld] > c.params["m"] for c in small), f"{name}: no padding"
    assert any(c.params["beta"] == 0 for c in specs["cublasGemmEx_f16_f32"].cases_in([SMALL]))
    assert all(c.params["ldaux"] > c.params["m"]
               for c in specs["cublasLtMatmul_bias_gelu_aux"].cases_in([SMALL]))
    # int8: alpha, beta in {1, 0}, lda and ldb multiples of 4 (cuBLAS's int8 GemmEx rules);
    # torch._int_mm is the reference in at least one small and one large case.
    int8 = specs["cublasGemmEx_i8_i32"].cases
    assert all(c.params["alpha"] == 1 and c.params["beta"] in (0, 1) for c in int8)
    assert all(c.params["lda"] % 4 == 0 and c.params["ldb"] % 4 == 0 for c in int8)
    assert {0, 1} <= {c.params["beta"] for c in int8}
    uses_int_mm = [c.tier for c in int8 if int_mm_applies(
        *(c.params[key] for key in ("transa", "transb", "m", "n", "k")))]
    assert SMALL in uses_int_mm and uses_int_mm.count(LARGE) == len(
        specs["cublasGemmEx_i8_i32"].cases_in([LARGE])), "a large int8 case without _int_mm"
    # fp8: the TN layout only, k, lda and ldb multiples of 16; _scaled_mm is the reference in
    # a small case and in every large one.
    fp8 = specs["cublasLtMatmul_fp8_e4m3"].cases
    assert all(c.params["transa"] + c.params["transb"] == "TN" for c in fp8)
    assert all(c.params[key] % 16 == 0 for c in fp8 for key in ("k", "lda", "ldb"))
    scaled = {c.name: scaled_mm_applies(*(c.params[key] for key in
                                          ("transa", "transb", "m", "n", "k", "alpha")))
              for c in fp8}
    assert any(scaled[c.name] for c in fp8 if c.tier == SMALL)
    assert all(scaled[c.name] for c in fp8 if c.tier == LARGE)
    assert any(c.params["alpha"] != 1 for c in fp8 if c.tier == SMALL)
    # grouped: groups of different shapes, a group of several problems, a beta == 0 group.
    groups = [c.params["groups"] for c in specs["cublasGemmGroupedBatchedEx"].cases_in([SMALL])]
    assert any(len({(g["m"], g["n"], g["k"]) for g in gs}) == len(gs) > 1 for gs in groups)
    assert any(g["size"] > 1 for gs in groups for g in gs)
    assert any(g["beta"] == 0 for gs in groups for g in gs)
    assert len({g["transa"] + g["transb"] for gs in groups for g in gs}) >= 3
    # LARGE: the Llama MLP shape and decode (a side of at most 16) in every routine.
    for name, spec in specs.items():
        large = spec.cases_in([LARGE])
        shapes = [[(g["m"], g["n"], g["k"]) for g in c.params["groups"]]
                  if "groups" in c.params else [(c.params["m"], c.params["n"], c.params["k"])]
                  for c in large]
        flat = [s for case in shapes for s in case]
        assert any(14336 in s and 4096 in s for s in flat), name
        assert any(min(s[0], s[1]) <= 16 for s in flat), name


def _outputs(spec, params, inputs):
    """(written buffer, m, n, its leading dimension) for every buffer the routine writes."""
    if "groups" in params:
        shapes = [(g["m"], g["n"], g["ldc"]) for g in params["groups"] for _ in range(g["size"])]
        return [(c, *shape) for c, shape in zip(inputs[spec.mutated_args[0]], shapes)]
    lds = ["ldc"] if "ldc" in params else ["ldd", "ldaux"]
    return [(inputs[index], params["m"], params["n"], params[ld])
            for index, ld in zip(spec.mutated_args, lds)]


def _same(now, old) -> bool:
    if isinstance(old, list):
        return len(now) == len(old) and all(_same(n, o) for n, o in zip(now, old))
    if isinstance(old, torch.Tensor):
        return torch.equal(now.float().nan_to_num(7.0), old.float().nan_to_num(7.0))
    return now == old


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_and_baseline_agree_and_write_only_outputs(specs, name):
    """On the CPU (torch computes bf16 right there): the reference leaves every other argument
    and every padding element of its outputs as they were and writes every m x n element (no
    NaN left), and the timed baseline (torch's cuBLAS/cuBLASLt calls on NVIDIA) computes the
    same result."""
    spec = specs[name]
    dtype = spec.dtypes[0]
    for case in spec.cases_in([SMALL]):
        inputs = list(spec.make_inputs(InputContext(case, dtype, 0, "cpu")))
        before, baseline_inputs = clone_tree(inputs), clone_tree(inputs)
        spec.reference(*inputs)
        spec.timing_baseline(*baseline_inputs)
        tolerance = spec.tolerance(dtype, case.params)
        for index in spec.mutated_args:
            comparison = compare_outputs(baseline_inputs[index], inputs[index], tolerance)
            assert comparison.ok, (name, case.name, "baseline", comparison.message)
        for index, (now, old) in enumerate(zip(inputs, before)):
            if index not in spec.mutated_args:
                assert _same(now, old), (name, case.name, index)
        for (now, m, n, ld), (old, *_) in zip(_outputs(spec, case.params, inputs),
                                              _outputs(spec, case.params, before)):
            written = torch.zeros(now.numel(), dtype=torch.bool)
            written[[i + j * ld for j in range(n) for i in range(m)]] = True
            assert _same(now[~written], old[~written]), (name, case.name, "padding written")
            if now.is_floating_point():
                assert not now[written].isnan().any(), (name, case.name, "left unwritten")


@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_reference_kernel_passes_on_the_cpu_evaluator(cpu_evaluator, specs, name):
    spec = specs[name]
    result = cpu_evaluator.evaluate(spec.id, spec.reference_kernel())
    assert result.verdict == verdicts.PASS, result.message
    statuses = {(c["dtype"], c["status"]) for c in result.cases}
    assert {(d, "pass") for d in spec.dtypes} <= statuses  # bf16 included
    assert not [c for c in result.cases if c["status"] == "skipped"]


# (routine, what the edit breaks, [(text in the reference kernel, its wrong replacement)]).
WRONG_KERNELS = [
    ("cublasGemmEx_f16_f32", "beta_ignored",
     [("out += beta * c.to(out.dtype)", "out += c.to(out.dtype)")]),
    ("cublasGemmEx_f16_f32", "transb_ignored",
     [("_strides(transb, ldb)", "_strides('N', ldb)")]),
    ("cublasGemmEx_f16_f32", "c_read_when_beta_is_zero",
     [("BETA_ZERO=beta == 0", "BETA_ZERO=False")]),
    # C written tightly packed (ldc taken as m): rows land in other columns' padding.
    ("cublasGemmEx_i8_i32", "ldc_ignored",
     [("beta, C, ldc, C, ldc)", "beta, C, m, C, m)")]),
    ("cublasLtMatmul_bias", "bias_broadcast_over_rows_instead_of_columns",
     [("bias_ptr + offs_m, mask=offs_m < M", "bias_ptr + offs_n, mask=offs_n < M"),
      ("out += bias[:, None]", "out += bias[None, :]")]),
    ("cublasLtMatmul_bias", "ldd_ignored",
     [("offs_n[None, :] * ldd", "offs_n[None, :] * M")]),
    ("cublasLtMatmul_relu", "activation_before_alpha",
     [("out = alpha * acc\n    if not BETA_ZERO",
       "out = alpha * tl.maximum(acc, 0)\n    if not BETA_ZERO")]),
    # x * sigmoid(1.702 x), the "quick" GELU, is not cuBLASLt's GELU. (The exact erf GELU is
    # within 5e-4 of the tanh form: below these tolerances, so it is not among the edits.)
    ("cublasLtMatmul_bias_gelu", "quick_gelu_instead_of_tanh_gelu",
     [("two_u = 2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)", "two_u = 1.702 * x")]),
    ("cublasLtMatmul_bias_gelu_aux", "aux_holds_the_activation",
     [("tl.store(aux_ptrs, out.to(", "tl.store(aux_ptrs, _gelu_tanh(out).to(")]),
    ("cublasLtMatmul_fp8_e4m3", "b_scale_ignored",
     [("alpha * tl.load(a_scale_ptr) * tl.load(b_scale_ptr)", "alpha * tl.load(a_scale_ptr)")]),
    # The last, partial K tile dropped: the wider fp8 rtol (2e-3, for Hopper's tensor-core
    # accumulation) must still catch a sum missing a few terms.
    ("cublasLtMatmul_fp8_e4m3", "k_tail_dropped",
     [("range(0, tl.cdiv(K, BLOCK_K))", "range(0, K // BLOCK_K)")]),
    ("cublasGemmGroupedBatchedEx", "group_zero_alpha_for_every_group",
     [("alpha = tl.load(alphas + group)", "alpha = tl.load(alphas)")]),
    ("cublasGemmGroupedBatchedEx", "group_zero_beta_for_every_group",
     [("beta = tl.load(betas + group)", "beta = tl.load(betas)")]),
]


@pytest.mark.parametrize("name, bug, edits", WRONG_KERNELS,
                         ids=[f"{name}-{bug}" for name, bug, _ in WRONG_KERNELS])
def test_wrong_kernel_is_rejected(cpu_evaluator, specs, name, bug, edits):
    source = specs[name].reference_kernel()
    for original, wrong in edits:
        assert source.count(original) == 1, f"the reference kernel of {name} changed: {original}"
        source = source.replace(original, wrong)
    result = cpu_evaluator.evaluate(f"cublas.{name}", source)
    assert result.verdict in {verdicts.WRONG_OUTPUT, verdicts.HELDOUT_FAILED}, \
        f"{bug}: {result.verdict}: {result.message}"
