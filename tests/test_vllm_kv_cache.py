"""vLLM KV-cache ops: every shipped kernel passes, and plausible wrong kernels are rejected
(padding slot written, wrong cache layout, strides ignored, one cache forgotten, start
offsets ignored, the indexer cache read per token, an argument written that the op must
leave alone); zero-filled and
untouched caches fail for every op."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry

OPS = ("reshape_and_cache", "reshape_and_cache_flash", "concat_and_cache_mla", "copy_blocks",
       "copy_blocks_mla", "swap_blocks", "cp_gather_cache", "gather_and_maybe_dequant_cache",
       "cp_gather_indexer_k_quant_cache")
SPECS = {spec.name: spec for spec in load_registry().operators(["vllm"]) if spec.name in OPS}

REJECTED = (verdicts.WRONG_OUTPUT, verdicts.WRONG_SHAPE_OR_DTYPE, verdicts.STALE_OUTPUT,
            verdicts.HELDOUT_FAILED, verdicts.INPUT_MUTATED)


def _broken(name: str, old: str, new: str) -> str:
    """The shipped kernel with one targeted change; the change must have happened."""
    text = SPECS[name].reference_kernel()
    assert old in text, f"{name}: {old!r} not in the kernel"
    return text.replace(old, new)


def _controls(mutated: tuple[int, ...]) -> dict[str, str]:
    common = f'''

_kgb_reference_kernel = kernel
_KGB_MUTATED = {mutated!r}


def _kgb_tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _kgb_tensors(v)]
    return []


@triton.jit
def _kgb_zero_fill(ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offsets, tl.zeros((BLOCK,), dtype=ptr.dtype.element_ty), mask=offsets < n)
'''
    return {
        # Right values first, then every written argument zeroed.
        "zeros": common + '''

def kernel(*args):
    _kgb_reference_kernel(*args)
    for index in _KGB_MUTATED:
        for tensor in _kgb_tensors(args[index]):
            flat = tensor.contiguous()
            _kgb_zero_fill[(triton.cdiv(max(flat.numel(), 1), 1024),)](flat, flat.numel(),
                                                                      BLOCK=1024)
            tensor.copy_(flat)
    return None
''',
        # A Triton launch that writes nothing the op owns: the caches keep their old values.
        "untouched": common + '''

def kernel(*args):
    scratch = torch.empty(16, device=_kgb_tensors(args[_KGB_MUTATED[0]])[0].device)
    _kgb_zero_fill[(1,)](scratch, 16, BLOCK=16)
    return None
''',
    }


@pytest.mark.parametrize("name", OPS)
def test_shipped_kernel_passes(cpu_evaluator, name):
    result = cpu_evaluator.evaluate(f"vllm.{name}", SPECS[name].reference_kernel())
    assert result.verdict == verdicts.PASS, result.message
    assert any(c["status"] == "pass" and c.get("heldout") for c in result.cases)


@pytest.mark.parametrize("control", ("zeros", "untouched"))
@pytest.mark.parametrize("name", OPS)
def test_negative_controls_are_rejected(cpu_evaluator, name, control):
    spec = SPECS[name]
    source = spec.reference_kernel() + _controls(spec.mutated_args)[control]
    result = cpu_evaluator.evaluate(spec.id, source)
    assert result.verdict in REJECTED, f"{control}: {result.verdict}: {result.message}"


WRONG = {
    # The padding slot -1 read as Python's "last slot" instead of being skipped.
    "padding_written": ("reshape_and_cache",
                        "    valid = (slot >= 0) & (slot < num_slots)\n",
                        "    slot = tl.where((slot < 0) & (token < num_tokens), slot + num_slots,"
                        " slot)\n"
                        "    valid = (slot >= 0) & (slot < num_slots)\n"),
    # The paged op written in the flash layout [block, offset, head, dim].
    "flash_layout_for_paged": ("reshape_and_cache",
                               "    k_dst = (block * kc_block + head * kc_head + (dim // X) * "
                               "kc_chunk + offset * kc_offset\n             + dim % X)\n",
                               "    k_dst = block * kc_block + offset * (n) + head * head_size"
                               " + dim\n"),
    # Block stride assumed to be block_size * heads * head_size (FlashInfer views break it).
    "flash_strides_ignored": ("reshape_and_cache_flash",
                              "    tl.store(key_cache_ptr + block * kc_block",
                              "    tl.store(key_cache_ptr + block * (block_size * n)"),
    # k_pe written over the start of the entry instead of after kv_c.
    "mla_rope_misplaced": ("concat_and_cache_mla",
                           "    tl.store(cache_ptr + base + idx, tl.where(from_c, c, pe), "
                           "mask=from_c | from_pe)",
                           "    tl.store(cache_ptr + base + tl.where(from_c, idx, idx - rank),"
                           " tl.where(from_c, c, pe), mask=from_c | from_pe)"),
    # Only the key caches copied.
    "value_cache_forgotten": ("copy_blocks",
                              "    tl.store(value_ptr + dst * value_block_stride + idx, v, "
                              "mask=mask)\n",
                              "\n"),
    # seq_starts ignored (gathering from each request's first slot).
    "seq_starts_ignored": ("cp_gather_cache",
                           "        pos = pos + tl.load(starts_ptr + b).to(tl.int64)\n",
                           "        pos = pos + 0\n"),
    # The indexer cache read as per-token entries [block_size, head_dim + scale_bytes]
    # instead of its per-block layout (all keys, then all scales).
    "indexer_per_token_layout": ("cp_gather_indexer_k_quant_cache",
                                 "    k = tl.load(cache_ptr + base[:, None] + offset[:, None] * "
                                 "head_dim + h[None, :], mask=k_mask)\n",
                                 "    k = tl.load(cache_ptr + base[:, None] + offset[:, None] * "
                                 "(head_dim + scale_bytes) + h[None, :], mask=k_mask)\n"),
    # The source block cleared after the copy: src must not be modified.
    "source_written": ("swap_blocks",
                       "    tl.store(dst_ptr + dst * dst_block_stride + idx, values, mask=mask)\n",
                       "    tl.store(dst_ptr + dst * dst_block_stride + idx, values, mask=mask)\n"
                       "    tl.store(src_ptr + src * src_block_stride + idx, values * 0, "
                       "mask=mask)\n"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_wrong_kernel_is_rejected(cpu_evaluator, case):
    name, old, new = WRONG[case]
    result = cpu_evaluator.evaluate(f"vllm.{name}", _broken(name, old, new))
    assert result.verdict in REJECTED, f"{case}: {result.verdict}: {result.message}"
    if case == "source_written":
        assert result.verdict == verdicts.INPUT_MUTATED
