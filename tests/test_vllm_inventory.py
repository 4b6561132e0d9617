"""The published KernelGenBench vLLM set (50 names of vLLM 0.13) against the vllm source: every
name maps to kgb specs that exist or to a written reason, and exactly the covering specs carry
the ``published`` tag."""

from __future__ import annotations

import json

from conftest import kgb
from kgb_core.plugins import load_registry
from kgb_sources.vllm import inventory

SPECS = {spec.name: spec for spec in load_registry().operators(["vllm"])}


def test_the_published_list_has_fifty_distinct_names():
    assert len(inventory.PUBLISHED_VLLM) == 50
    assert len(set(inventory.PUBLISHED_VLLM)) == 50


def test_every_published_name_is_covered_or_has_a_reason():
    for name in inventory.PUBLISHED_VLLM:
        targets = inventory.PUBLISHED_TO_KGB[name]
        if targets:
            missing = [t for t in targets if t not in SPECS]
            assert not missing, f"{name} maps to specs that do not exist: {missing}"
            assert name not in inventory.LEFT_OUT
        else:
            assert inventory.LEFT_OUT.get(name, "").strip(), f"{name}: no spec and no reason"
    # A reason is only for a published name, and nothing left out is quietly present.
    assert set(inventory.LEFT_OUT) <= set(inventory.PUBLISHED_VLLM)
    assert not (set(inventory.LEFT_OUT) & set(SPECS))


def test_exactly_the_covering_specs_are_tagged_published():
    tagged = {name for name, spec in SPECS.items() if inventory.PUBLISHED_TAG in spec.tags}
    assert tagged == set(inventory.PUBLISHED_SPECS)
    listed = json.loads(kgb("ops", "--source", "vllm", "--tag", "published", "--json").stdout)
    assert {op["name"] for op in listed} == tagged


def test_renamed_targets_are_the_ops_the_wrapper_dispatches_to():
    assert inventory.PUBLISHED_TO_KGB["scaled_fp8_quant"] == (
        "static_scaled_fp8_quant", "dynamic_scaled_fp8_quant",
        "dynamic_per_token_scaled_fp8_quant")
    assert inventory.PUBLISHED_TO_KGB["apply_repetition_penalties_cuda"] == (
        "apply_repetition_penalties",)


def test_the_listing_has_at_least_fifty_ops_each_with_its_written_args():
    listed = json.loads(kgb("ops", "--source", "vllm", "--json").stdout)
    assert len(listed) >= 50
    for op in listed:
        assert len(op["writes"]) == len(op["mutated_args"]), op["name"]
        assert op["has_reference_kernel"], op["name"]
        assert op["heldout_cases"] >= 1, op["name"]
        assert any(case["tier"] == "large" for case in op["cases"]), op["name"]
    by_name = {op["name"]: op for op in listed}
    assert by_name["moe_lora_align_block_size"]["writes"] == [
        "sorted_token_ids", "experts_ids", "num_tokens_post_pad"]
    assert by_name["gptq_shuffle"]["writes"] == ["q_weight"]
