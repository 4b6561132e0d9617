"""Random values for operator inputs: drawn on the host, the same on every chip, and fast.

Inputs are drawn on the CPU so that one seed gives bit-identical inputs on every chip (each
vendor's device generator differs). torch's CPU generator is one Mersenne Twister and fills a
tensor on one core at about 70-80 M values/s; on the H200 its ``torch.randn`` and
``torch.randint`` were 42 % of a timed vLLM candidate's evaluation (35 of 83 s over 8
operators, ``benchmarks/results/h200-profile-*``), while the host's other 15 cores idled.

So a tensor larger than ``CHUNK_ELEMENTS`` is filled in fixed-size chunks, each from its own
generator, on a thread pool (torch releases the GIL inside the fill). The chunk seeds come from
one draw of the caller's generator mixed with the chunk's index (SplitMix64), so the values
depend only on the seed and the sizes, never on how many threads ran, and the caller's
generator moves on by exactly one draw. Tensors of at most ``CHUNK_ELEMENTS`` values are drawn
as before, from the caller's generator itself: every small case keeps its values.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pragma: no cover
    import torch

# 1 Mi values: about 13 ms of one core's generator, so a pool hand-off is noise beside it.
CHUNK_ELEMENTS = 1 << 20
_MASK64 = (1 << 64) - 1


def _pool_size() -> int:
    # torch's own thread count without importing torch here (operators.py imports this
    # module, and building a spec must not import torch): OMP_NUM_THREADS, else the cores
    # this process may run on.
    configured = os.environ.get("OMP_NUM_THREADS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# Made at import (its threads start on first use), never rebound while a candidate runs: the
# integrity guard takes any kgb module attribute that changes during a call for tampering
# (a pool made lazily on the first large draw was, on the H200).
_POOL = ThreadPoolExecutor(max_workers=_pool_size(), thread_name_prefix="kgb-draws")


def _new_pool_after_fork() -> None:
    # A forked child has the parent's pool object but none of its threads; this runs in the
    # child before anything of it can be guarded.
    global _POOL
    _POOL = ThreadPoolExecutor(max_workers=_pool_size(), thread_name_prefix="kgb-draws")


os.register_at_fork(after_in_child=_new_pool_after_fork)


def splitmix64(value: int) -> int:
    """One SplitMix64 step: neighbouring inputs give unrelated outputs in all 64 bits (torch's
    CPU generator seeds its Mersenne Twister from the low 32 bits only, so base + index would
    not do)."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def chunk_seed(base: int, index: int) -> int:
    """The seed of chunk ``index`` of a tensor whose draw took ``base`` from the caller's
    generator (a non-negative int64, as ``torch.Generator.manual_seed`` takes)."""
    return splitmix64(splitmix64(base) ^ index) >> 1


def fill_in_chunks(flat: "torch.Tensor", base: int,
                   fill: Callable[["torch.Tensor", "torch.Generator"], None],
                   pool: ThreadPoolExecutor | None = None) -> None:
    """``fill(chunk, generator)`` on every ``CHUNK_ELEMENTS``-sized slice of the 1-d ``flat``,
    each with its own seeded generator, in parallel."""
    import torch

    def one(index: int) -> None:
        chunk = flat[index * CHUNK_ELEMENTS:(index + 1) * CHUNK_ELEMENTS]
        fill(chunk, torch.Generator(device="cpu").manual_seed(chunk_seed(base, index)))

    chunks = math.ceil(flat.numel() / CHUNK_ELEMENTS)
    # list() waits for every chunk and re-raises the first error one of them met.
    list((pool or _POOL).map(one, range(chunks)))


def _base(generator: "torch.Generator") -> int:
    import torch

    return int(torch.randint(0, 2 ** 62, (1,), generator=generator, dtype=torch.int64))


def is_chunked(shape: tuple[int, ...]) -> bool:
    """Whether a draw of this shape is filled in chunks, moving the caller's generator on by
    one draw of its base whatever its size (``advance_past_a_chunked_draw``)."""
    return math.prod(shape) > CHUNK_ELEMENTS


def advance_past_a_chunked_draw(generator: "torch.Generator") -> None:
    """Move ``generator`` on exactly as a chunked draw does (the judge's draw cache, on a hit)."""
    _base(generator)


def _drawn(shape: tuple[int, ...], dtype: "torch.dtype", generator: "torch.Generator",
           serial: Callable[[], "torch.Tensor"],
           fill: Callable[["torch.Tensor", "torch.Generator"], None]) -> "torch.Tensor":
    """serial() from the caller's generator for a tensor of at most CHUNK_ELEMENTS values,
    else an empty tensor filled chunk by chunk."""
    import torch

    if not is_chunked(shape):
        return serial()
    flat = torch.empty(math.prod(shape), dtype=dtype)
    fill_in_chunks(flat, _base(generator), fill)
    return flat.view(shape)


def normal(shape: tuple[int, ...], generator: "torch.Generator") -> "torch.Tensor":
    """Standard normal float32 values."""
    import torch

    return _drawn(shape, torch.float32, generator,
                  lambda: torch.randn(shape, generator=generator, dtype=torch.float32),
                  lambda chunk, g: chunk.normal_(generator=g))


def unit_uniform(shape: tuple[int, ...], generator: "torch.Generator") -> "torch.Tensor":
    """Float32 values uniform on [0, 1)."""
    import torch

    return _drawn(shape, torch.float32, generator,
                  lambda: torch.rand(shape, generator=generator, dtype=torch.float32),
                  lambda chunk, g: chunk.uniform_(0.0, 1.0, generator=g))


def integers(shape: tuple[int, ...], low: int, high: int,
             generator: "torch.Generator") -> "torch.Tensor":
    """Int64 values uniform on [low, high)."""
    import torch

    return _drawn(shape, torch.int64, generator,
                  lambda: torch.randint(low, high, shape, generator=generator,
                                        dtype=torch.int64),
                  lambda chunk, g: chunk.random_(low, high, generator=g))
