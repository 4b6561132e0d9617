"""The vllm activation, norm, rotary and quant families: every op's reference kernel passes,
zero-filled and untouched outputs fail, and plausible-but-wrong kernels are rejected for the
reason they are wrong; the ops listing shows written args; vllm-crosscheck works without vllm."""

from __future__ import annotations

import json

import pytest
import torch

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.compare import compare_outputs
from kgb_core.operators import SMALL, InputContext, Tolerance, WithTolerance
from kgb_core.plugins import load_registry

from conftest import kgb
from kgb_sources.vllm import wquant

FAMILIES = ("activation", "norm", "rotary", "quant")
REGISTRY = load_registry()
# The quantised GEMMs and weight formats (wquant.py) carry the quant tag too; they have their
# own checks in test_vllm_published_ops.py.
_WQUANT = {spec.name for spec in wquant.operators()}
SPECS = [s for s in REGISTRY.operators(["vllm"])
         if s.tags & set(FAMILIES) and s.name not in _WQUANT]


def _spec(name):
    return REGISTRY.operator(f"vllm.{name}")


def _mutated(spec, _unused: str, old: str, new: str) -> str:
    source = spec.reference_kernel()
    assert old in source, f"the reference kernel of {spec.id} no longer contains {old!r}"
    return source.replace(old, new)


def test_family_ops_are_registered():
    names = {s.name for s in SPECS}
    assert {"silu_and_mul", "rms_norm", "fused_add_rms_norm", "rotary_embedding",
            "static_scaled_fp8_quant", "dynamic_scaled_int8_quant", "convert_fp8"} <= names
    assert len(names) >= 20


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_inputs_are_seeded_and_outputs_prefilled_with_garbage(spec):
    case = spec.cases_in([SMALL])[0]
    first = spec.make_inputs(InputContext(case, "float32", 0, "cpu"))
    again = spec.make_inputs(InputContext(case, "float32", 0, "cpu"))
    for a, b in zip(first, again):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a.view(torch.uint8) if a.dtype == torch.float8_e4m3fn else a,
                               b.view(torch.uint8) if b.dtype == torch.float8_e4m3fn else b)
    expected = [t.clone() if isinstance(t, torch.Tensor) else t for t in first]
    spec.reference(*expected)
    for index in spec.mutated_args:
        before, after = first[index], expected[index]
        if isinstance(before, torch.Tensor):
            assert not torch.equal(before.float(), after.float()), \
                f"argument {index} of {spec.id} already holds the answer before the call"


# Negative controls: the op's own kernel runs (so a launch happened), then the written
# arguments are zeroed, or nothing is written at all.
_ZEROS = '''

_kgb_reference_kernel = kernel


def kernel(*args):
    _kgb_reference_kernel(*args)
    for index in __MUTATED__:
        if isinstance(args[index], torch.Tensor):
            args[index].zero_()
    return None
'''
_UNTOUCHED = '''

@triton.jit
def _kgb_nothing(ptr):
    pass


def kernel(*args):
    _kgb_nothing[(1,)](next(a for a in args if isinstance(a, torch.Tensor)))
    return None
'''


@pytest.mark.parametrize("control", ["zeros", "untouched"])
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_negative_control_is_rejected(cpu_evaluator, spec, control):
    if control == "zeros":
        source = spec.reference_kernel() + _ZEROS.replace("__MUTATED__",
                                                          repr(tuple(spec.mutated_args)))
    else:
        source = spec.reference_kernel() + _UNTOUCHED
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict in (verdicts.WRONG_OUTPUT, verdicts.STALE_OUTPUT,
                              verdicts.HELDOUT_FAILED), \
        f"{control} control on {spec.id}: {result.verdict}: {result.message}"


# -- targeted wrong kernels ------------------------------------------------------------------
def test_fused_add_rms_norm_without_the_residual_update_is_rejected(cpu_evaluator):
    spec = _spec("fused_add_rms_norm")
    source = _mutated(spec, "", "        tl.store(r_row + idx, z, mask=mask)\n", "")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT
    assert "argument 1" in result.message


def test_rms_norm_writing_its_input_is_rejected(cpu_evaluator):
    spec = _spec("rms_norm")
    # Also store the (correct) output over the input row: out is right, input is not kept.
    source = _mutated(spec, "", "        tl.store(out_row + idx, (normed * w).to(out_ptr.dtype.element_ty), mask=mask)\n",
                      "        tl.store(out_row + idx, (normed * w).to(out_ptr.dtype.element_ty), mask=mask)\n"
                      "        tl.store(x_row + idx, (normed * w).to(out_ptr.dtype.element_ty), mask=mask)\n")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.INPUT_MUTATED, result.message
    assert "argument 1" in result.message


def test_fused_add_static_fp8_writing_input_is_rejected(cpu_evaluator):
    spec = _spec("fused_add_rms_norm_static_fp8_quant")
    # fused_add_rms_norm writes input; this op must not: a kernel carried over is caught.
    source = _mutated(spec, "", "        tl.store(r_row + idx, z, mask=mask)\n",
                      "        tl.store(r_row + idx, z, mask=mask)\n"
                      "        tl.store(x_row + idx, z, mask=mask)\n")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.INPUT_MUTATED, result.message


def test_rotary_with_the_other_style_is_rejected(cpu_evaluator):
    spec = _spec("rotary_embedding")
    source = _mutated(spec, "", "IS_NEOX=bool(is_neox)", "IS_NEOX=not bool(is_neox)")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT


def test_rotary_touching_the_unrotated_tail_is_rejected(cpu_evaluator):
    spec = _spec("rotary_embedding")
    # Rotating all head_size entries instead of rot_dim: caught by the partial-rotary case.
    source = _mutated(spec, "", "rot_dim = cos_sin_cache.shape[-1]",
                      "rot_dim = head_size if head_size <= cos_sin_cache.shape[-1] else cos_sin_cache.shape[-1]\n"
                      "    rot_dim = head_size")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict != verdicts.PASS


def test_dynamic_fp8_with_a_wrong_scale_rule_is_rejected(cpu_evaluator):
    spec = _spec("dynamic_scaled_fp8_quant")
    # ROCm's fnuz maximum (240) instead of e4m3fn's 448.
    source = _mutated(spec, "", "tl.max(largest, axis=0) / 448.0", "tl.max(largest, axis=0) / 240.0")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT


def test_a_scale_off_by_more_than_fp32_tolerance_is_caught_with_right_values():
    spec = _spec("dynamic_scaled_fp8_quant")
    case = spec.cases_in([SMALL])[0]
    expected = list(spec.make_inputs(InputContext(case, "float32", 0, "cpu")))
    spec.reference(*expected)
    actual = [t.clone() if isinstance(t, torch.Tensor) else t for t in expected]
    actual[2] *= 1.0001  # the fp8 values stay, the written scale is 1e-4 off
    comparison = compare_outputs(spec.compared(None, actual), spec.compared(None, expected),
                                 spec.tolerance("float32", case.params))
    assert not comparison.ok and "output[1]" in comparison.message


def test_per_token_fp8_ignoring_scale_ub_is_rejected(cpu_evaluator):
    spec = _spec("dynamic_per_token_scaled_fp8_quant")
    source = _mutated(spec, "", "HAS_UB=scale_ub is not None", "HAS_UB=False")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT


def test_static_fp8_multiplying_by_the_scale_is_rejected(cpu_evaluator):
    spec = _spec("static_scaled_fp8_quant")
    source = _mutated(spec, "", "_round_to_e4m3(x * inv_scale)",
                      "_round_to_e4m3(x * tl.load(scale_ptr))")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT


def test_int8_with_round_half_away_from_zero_is_rejected(cpu_evaluator):
    spec = _spec("static_scaled_int8_quant")
    source = _mutated(spec, "", "q = _round_half_even(x / scale)",
                      "q = tl.where(x >= 0, tl.floor(x / scale + 0.5), -tl.floor(-x / scale + 0.5))")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT
    assert "exact match" not in result.message  # compared as values, exactly: atol 0


def test_power_of_two_int8_case_has_ties():
    spec = _spec("static_scaled_int8_quant")
    case = next(c for c in spec.cases if c.params.get("power_of_two_scale"))
    _, x, scale, _ = spec.make_inputs(InputContext(case, "float16", 0, "cpu"))
    quotient = x.float() / scale
    ties = (quotient - quotient.floor() == 0.5).sum().item()
    assert ties > 20, "the tie rule is only checked where ties occur"


def test_dynamic_per_token_quant_without_residual_write_is_rejected(cpu_evaluator):
    spec = _spec("rms_norm_dynamic_per_token_quant")
    source = _mutated(spec, "", "            tl.store(r_row + idx, x.to(res_ptr.dtype.element_ty), mask=mask)\n",
                      "            pass\n")
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict == verdicts.WRONG_OUTPUT


def test_gated_activation_on_the_wrong_half_is_rejected(cpu_evaluator):
    spec = _spec("silu_and_mul")
    source = _mutated(spec, "", "ACT_FIRST=True", "ACT_FIRST=False")
    assert cpu_evaluator.evaluate(spec.id, source).verdict == verdicts.WRONG_OUTPUT


def test_fatrelu_with_greater_or_equal_is_rejected_only_at_the_threshold():
    # The reference's rule is strict: x == threshold gives 0.
    spec = _spec("fatrelu_and_mul")
    out = torch.empty(1, 2)
    spec.reference(out, torch.tensor([[0.3, 1.0, 2.0, 3.0]]), 0.3)
    assert out[0, 0].item() == 0.0 and out[0, 1].item() == 3.0


# -- comparison rules ------------------------------------------------------------------------
def test_one_e4m3_step_is_allowed_two_are_not():
    step = WithTolerance(torch.tensor([16.0, 0.015625]), Tolerance(0.125, 2.0 ** -9))
    one = compare_outputs(torch.tensor([18.0, 0.015625 + 2.0 ** -9]), step, Tolerance(0, 0))
    two = compare_outputs(torch.tensor([20.0, 0.015625]), step, Tolerance(0, 0))
    assert one.ok and not two.ok


def test_fp8_compared_values_and_scales_have_their_own_tolerance():
    spec = _spec("dynamic_scaled_fp8_quant")
    case = spec.cases_in([SMALL])[0]
    args = list(spec.make_inputs(InputContext(case, "float32", 0, "cpu")))
    spec.reference(*args)
    values, scale = spec.compared(None, args)
    assert values.tolerance.rtol == 0.125 and scale.tolerance.rtol == 1e-5


# -- listing and crosscheck ------------------------------------------------------------------
def test_ops_listing_shows_written_args():
    assert _spec("fused_add_rms_norm").written_args() == ["input", "residual"]
    assert _spec("rms_norm_dynamic_per_token_quant").written_args() == ["out", "scales",
                                                                       "residual"]
    listing = kgb("ops", "--source", "vllm")
    assert listing.returncode == 0 and "writes" in listing.stdout
    assert "input,residual" in listing.stdout
    info = json.loads(kgb("ops", "show", "vllm.rotary_embedding", "--json").stdout)
    assert info["writes"] == ["query", "key"]
    assert "writes: out" in kgb("ops", "show", "vllm.rms_norm").stdout


def test_vllm_crosscheck_says_plainly_when_vllm_is_missing():
    pytest.importorskip("typer")
    try:
        import vllm  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("vllm is importable here")
    done = kgb("vllm-crosscheck")
    assert done.returncode == 2
    assert "vllm is not importable here" in done.stderr


def test_crosscheck_machinery_against_a_stand_in_op():
    from kgb_sources.vllm.crosscheck import crosscheck_spec

    spec = _spec("fused_add_rms_norm")
    agree = crosscheck_spec(spec, spec.reference, device="cpu")
    assert agree and all(row.verdict == verdicts.PASS for row in agree)

    def forgets_residual(input, residual, weight, epsilon):  # noqa: A002
        kept = residual.clone()
        spec.reference(input, residual, weight, epsilon)
        residual.copy_(kept)

    disagree = crosscheck_spec(spec, forgets_residual, device="cpu", dtypes=["float32"])
    assert any(row.verdict == verdicts.WRONG_OUTPUT for row in disagree)
