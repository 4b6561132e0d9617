"""Values kept by key within a budget of bytes, least recently used out first.

The judge keeps two such caches for an operator's next candidate: its large input draws
(``kgb_core/draw_cache.py``) and its slow references' answers
(``kgb_core/evaluation/reference_cache.py``). Both live in the judge's host memory, each bounded
by a variable of its own in MiB, and are read by the judge's threads alike.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable


def budget_from_environment(variable: str, default_mib: int = 1024) -> int:
    """Bytes from ``variable``, a count of MiB (0 turns a cache off), else ``default_mib``."""
    value = os.environ.get(variable, "").strip()
    return (int(value) if value.isdigit() else default_mib) << 20


def tensor_bytes(value: Any) -> int:
    """Bytes of the tensors under ``value`` (tuples and lists), each as its elements."""
    from kgb_core.evaluation.runner import tensors_in

    return sum(t.numel() * t.element_size() for t in tensors_in(value))


class BudgetCache:
    """Values by key, at most ``budget`` bytes in all (``size`` of each value)."""

    def __init__(self, budget: int, size: Callable[[Any], int] = tensor_bytes) -> None:
        self.budget = budget
        self.size = size
        self.held = 0
        self.hits = self.misses = 0
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The value kept under ``key`` (a hit), or None (a miss)."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found

    def holds(self, key: Hashable) -> bool:
        """Whether ``key`` is kept (no hit or miss counted)."""
        with self._lock:
            return key in self._entries

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` unless it alone passes the budget; the least recently used values
        go first to make room."""
        size = self.size(value)
        if size > self.budget:
            return
        with self._lock:
            if key in self._entries:
                return
            while self._entries and self.held + size > self.budget:
                _, dropped = self._entries.popitem(last=False)
                self.held -= self.size(dropped)
            self._entries[key] = value
            self.held += size
