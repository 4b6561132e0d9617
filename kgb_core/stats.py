"""Small statistics shared by timers and reports (no numpy: the parent process stays light)."""

from __future__ import annotations

import math
from typing import Iterable, Sequence


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def coefficient_of_variation(values: Sequence[float]) -> float:
    """Standard deviation over mean: how far one timing can be trusted."""
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    if mean == 0:
        return 0.0
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return math.sqrt(variance) / mean


def geometric_mean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive finite values; None when there are none."""
    positive = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive))
