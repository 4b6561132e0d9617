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


def median_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """A distribution-free confidence interval for the median (about 95 % with the default
    ``z``): the order statistics at ranks n/2 -+ z*sqrt(n)/2, which assume nothing about the
    timings' distribution (they are skewed: a slow outlier is common, a fast one rare)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median interval of no values")
    n = len(ordered)
    half_width = z * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half_width))
    high = min(n - 1, math.ceil(n / 2 + half_width) - 1)
    return ordered[low], ordered[max(low, high)]


def relative_median_interval(values: Sequence[float]) -> float:
    """The median's confidence interval's half-width over the median (``inf`` when it is 0)."""
    low, high = median_interval(values)
    middle = median(values)
    return (high - low) / (2 * middle) if middle > 0 else math.inf
