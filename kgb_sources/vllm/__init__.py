"""The ``vllm`` source: vLLM's production custom operators (vLLM 0.13 semantics), each with a
plain-PyTorch reference that runs on CPU, shape cases at Llama/Qwen/DeepSeek sizes and small
ones for the interpreter, and a known-good Triton kernel.

vLLM's ops write into out-parameters and update arguments in place (``rms_norm(out, input,
weight, eps)``); a spec's ``mutated_args`` names exactly the arguments the candidate writes, and
the checker compares those and requires every other argument to come back unchanged.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.source_kit import family_source

from kgb_sources.vllm._build import SOURCE
from kgb_sources.vllm.inventory import PUBLISHED_SPECS, PUBLISHED_TAG

# Each family is a module with ``operators() -> list[OperatorSpec]``.
FAMILIES = ("activation", "norm", "rotary", "quant", "kv_cache", "attention", "moe", "sampling",
            "mamba", "spec_decode", "lora", "wquant")


@hookimpl
def kgb_register_sources(register):
    register(family_source(
        name=SOURCE,
        description="vLLM's custom operators with vLLM's exact semantics, out-parameters "
                    "and in-place updates",
        package="kgb_sources.vllm", families=FAMILIES,
        # Specs that check an operator of the published KernelGenBench vLLM set (inventory.py).
        tagged={PUBLISHED_TAG: PUBLISHED_SPECS},
    ))


@hookimpl
def kgb_add_cli(app, registry):
    """``kgb vllm-crosscheck``: the references against vLLM's own ops, where vllm imports."""
    from kgb_sources.vllm.crosscheck import register_cli

    register_cli(app, registry)
