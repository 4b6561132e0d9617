"""Large input draws kept in the judge's host memory, for the next candidate of the operator.

A judge draws every input on the host from the seed (``kgb_core/draws.py``), and every candidate
of an operator is checked on the same inputs: the same seeds, cases and dtypes. Drawing them
again for each candidate cost the H100 0.15 s of a 2.55 s candidate (aten.neg, whose large
cases hold 25 M values a dtype; ``results/h100-profile-1731123.txt``). A method that samples
several candidates per operator, or an agent that iterates, pays that each time.

So a large draw (more than ``draws.CHUNK_ELEMENTS`` values: the chunked, threaded path) is kept,
as the host tensor it ends as (scaled, shifted, in its dtype), under a key that fixes its values
exactly: the caller's generator state before the draw, what was drawn (kind, shape, bounds,
dtype). A hit moves the generator on as the draw would have (one draw of its base, the large
path's only use of it) and hands out a copy, never the kept tensor, so nothing a reference or a
comparison does to its inputs reaches the next candidate. Small draws are not kept: they cost
little, and they move the generator by their size.

The cache lives in the judge only (runners draw nothing), bounded by ``KGB_DRAW_CACHE_MB``
(default 1024; 0 turns it off), least recently used first out.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Callable, Hashable

from kgb_core.budget_cache import BudgetCache, budget_from_environment

if TYPE_CHECKING:  # pragma: no cover
    import torch


class DrawCache(BudgetCache):
    """Host tensors by key, at most ``budget`` bytes in all, least recently used out first."""


# The judge's, made at import and never rebound (as draws._POOL: a kgb module attribute that
# changes under a runner's integrity guard reads as tampering, should a runner import this).
CACHE = DrawCache(budget_from_environment("KGB_DRAW_CACHE_MB"))


def generator_key(generator: Any) -> bytes:
    """A digest of a torch CPU generator's whole state: what fixes the values it draws next."""
    state = generator.get_state()
    return hashlib.blake2b(state.numpy().tobytes(), digest_size=16).digest()


def large_draw(generator: Any, what: Hashable, device: str,
               draw: Callable[[], "torch.Tensor"], advance: Callable[[], object]
               ) -> "torch.Tensor":
    """``draw()`` (a host tensor, the generator moved on by ``advance``'s amount) on ``device``,
    kept for the next time the generator is in the same state and ``what`` is asked again;
    then ``advance()`` moves the generator on instead of drawing."""
    if not CACHE.budget:
        return draw().to(device)
    key = (generator_key(generator), what)
    kept = CACHE.get(key)
    if kept is not None:
        advance()
        return kept.to(device, copy=True)
    values = draw()
    CACHE.put(key, values)
    return values.to(device, copy=True)


def draw_ahead(generator: Any, what: Hashable, draw: Callable[[], "torch.Tensor"],
               advance: Callable[[], object], nbytes: int) -> None:
    """``large_draw``'s work done ahead, with no device involved: ``draw()`` kept for the
    generator's state and ``what``, unless it is kept already or would not fit the budget
    (then ``advance()`` moves the generator on as the draw would)."""
    key = (generator_key(generator), what)
    if not CACHE.budget or nbytes > CACHE.budget or CACHE.holds(key):
        advance()
        return
    CACHE.put(key, draw())
