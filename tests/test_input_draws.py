"""Input draws: small tensors keep their values, large ones are filled in chunks on threads and
still depend only on the seed."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from conftest import CPU_JUDGE_PRELUDE
from kgb_core import draws
from kgb_core.operators import InputContext, ShapeCase

CASE = ShapeCase("c", {})


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    """Chunks of 1000 values, so that a test tensor of a few thousand takes the chunked path."""
    monkeypatch.setattr(draws, "CHUNK_ELEMENTS", 1000)
    return 1000


def test_a_small_draw_is_the_generators_own_values_scaled_in_the_same_roundings() -> None:
    ctx = InputContext(CASE, "float16", 5, "cpu")
    got = ctx.randn(3, 7, scale=0.37, shift=-1.25)
    values = torch.randn((3, 7), generator=torch.Generator().manual_seed(5))
    assert torch.equal(got, (values * 0.37 + -1.25).to(torch.float16))
    ctx = InputContext(CASE, "float32", 9, "cpu")
    got = ctx.uniform(50, low=-2.0, high=3.0)
    values = torch.rand((50,), generator=torch.Generator().manual_seed(9))
    assert torch.equal(got, values * 5.0 + -2.0)
    got = InputContext(CASE, "float32", 9, "cpu").randint(40, low=3, high=11, dtype=torch.int32)
    assert torch.equal(got, torch.randint(3, 11, (40,), generator=torch.Generator()
                                          .manual_seed(9)).to(torch.int32))


def test_chunked_values_do_not_depend_on_the_number_of_threads(small_chunks: int) -> None:
    results = []
    for threads in (1, 3):
        flat = torch.empty(4 * small_chunks + 17)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            draws.fill_in_chunks(flat, 1234, lambda c, g: c.normal_(generator=g), pool=pool)
        results.append(flat)
    assert torch.equal(results[0], results[1])
    # Every chunk is a stream of its own, not the first one repeated.
    first, second = results[0][:small_chunks], results[0][small_chunks:2 * small_chunks]
    assert not torch.equal(first, second)


def test_a_large_draw_is_reproducible_and_moves_the_generator_on_by_one_draw(
        small_chunks: int) -> None:
    def draw_then_next(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        generator = torch.Generator().manual_seed(seed)
        return draws.normal((3, 2000), generator), torch.rand((4,), generator=generator)

    values, following = draw_then_next(11)
    again, following_again = draw_then_next(11)
    assert torch.equal(values, again) and torch.equal(following, following_again)
    assert not torch.equal(values, draw_then_next(12)[0])
    generator = torch.Generator().manual_seed(11)
    torch.randint(0, 2 ** 62, (1,), generator=generator)
    assert torch.equal(following, torch.rand((4,), generator=generator))
    assert values.shape == (3, 2000) and values.dtype == torch.float32


def test_large_draws_have_the_distributions_they_name(small_chunks: int) -> None:
    generator = torch.Generator().manual_seed(0)
    normal = draws.normal((64 * small_chunks,), generator)
    assert abs(normal.mean().item()) < 0.01 and abs(normal.std().item() - 1.0) < 0.01
    uniform = draws.unit_uniform((64 * small_chunks,), generator)
    assert 0.0 <= uniform.min().item() < 0.001 and 0.999 < uniform.max().item() < 1.0
    integers = draws.integers((20 * small_chunks,), -3, 4, generator)
    assert integers.dtype == torch.int64
    assert sorted(integers.unique().tolist()) == list(range(-3, 4))


def test_input_context_takes_the_chunked_path_for_large_tensors(small_chunks: int) -> None:
    ctx = InputContext(CASE, "bfloat16", 3, "cpu")
    got = ctx.randn(50, 100, scale=2.0)
    assert got.dtype == torch.bfloat16 and got.shape == (50, 100)
    serial = torch.randn((50, 100), generator=torch.Generator().manual_seed(3))
    assert not torch.equal(got, (serial * 2.0).to(torch.bfloat16))
    assert torch.equal(got, InputContext(CASE, "bfloat16", 3, "cpu").randn(50, 100, scale=2.0))


def test_an_error_in_one_chunk_reaches_the_caller(small_chunks: int) -> None:
    def fill(chunk: torch.Tensor, generator: torch.Generator) -> None:
        if chunk.numel() < small_chunks:
            raise ValueError("the short last chunk")
        chunk.zero_()

    with pytest.raises(ValueError, match="short last chunk"):
        draws.fill_in_chunks(torch.empty(2 * small_chunks + 5), 0, fill)


def test_chunk_seeds_differ_in_the_low_32_bits_torch_seeds_from() -> None:
    seeds = [draws.chunk_seed(99, index) for index in range(20000)]
    assert len({seed & 0xFFFFFFFF for seed in seeds}) == len(seeds)
    assert all(0 <= seed < 2 ** 63 for seed in seeds)


CHECK_WITH_CHUNKED_INPUTS = """
import os, sys
from kgb_core import draws
draws.CHUNK_ELEMENTS = 64  # every input of the small cases takes the chunked path
""" + CPU_JUDGE_PRELUDE + """
spec = registry.operator(sys.argv[1])
result = judge.evaluate_spec(spec, spec.reference_kernel(), seeds=[0], timing=True)
judge.close()
print(result.verdict, result.message)
"""


def test_a_check_whose_inputs_are_drawn_on_the_pool_is_not_taken_for_tampering() -> None:
    """The pool's threads start on the first large draw, between the guard's record and the
    first call: on the H200 a pool made lazily then read as the candidate replacing
    kgb_core.draws._pool, for every operator with a large input."""
    done = subprocess.run([sys.executable, "-c", CHECK_WITH_CHUNKED_INPUTS, "aten.add"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "pass", done.stdout


def test_the_judges_draw_cache_gives_the_draw_itself_and_moves_the_generator_as_it_would(
        small_chunks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large draw kept for the next candidate is bit for bit what drawing gives, the draws
    after it too; and a candidate's reference that writes its inputs changes nothing kept."""
    from kgb_core import draw_cache

    cache = draw_cache.DrawCache(1 << 30)
    monkeypatch.setattr(draw_cache, "CACHE", cache)

    def one_case() -> list[torch.Tensor]:
        ctx = InputContext(CASE, "float16", 9, "cpu")
        return [ctx.randn(50, 40, scale=0.5, shift=1.0), ctx.randn(7),  # large, then small
                ctx.randint(40, 40, low=-3, high=9), ctx.uniform(3000, low=-1.0, high=1.0),
                ctx.randn(45, 50)]

    first = one_case()
    assert (cache.hits, cache.misses) == (0, 4)
    first[0].zero_()  # what a reference writing its input in place does to the judge's copy
    second = one_case()
    assert (cache.hits, cache.misses) == (4, 4)
    monkeypatch.setattr(cache, "budget", 0)  # as drawn with no cache
    drawn = one_case()
    for kept, fresh in zip(second, drawn):
        assert kept.dtype == fresh.dtype and torch.equal(kept, fresh)
    assert not torch.equal(first[0], drawn[0])  # (zeroed above: the cache kept its own)
    other_seed = InputContext(CASE, "float16", 10, "cpu").randn(50, 40, scale=0.5, shift=1.0)
    assert not torch.equal(other_seed, drawn[0])


def test_the_draw_cache_keeps_at_most_its_budget_least_recently_used_out_first() -> None:
    from kgb_core.draw_cache import DrawCache

    cache = DrawCache(10_000)
    for key in "abc":
        cache.put(key, torch.zeros(1000, dtype=torch.float32))  # 4000 bytes each
    assert cache.held <= 10_000 and cache.get("a") is None and cache.get("c") is not None
    cache.put("huge", torch.zeros(5000, dtype=torch.float32))  # over the whole budget: not kept
    assert cache.get("huge") is None and cache.get("b") is not None
