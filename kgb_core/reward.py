"""A result as a reward for a training loop: one documented recipe, no training library.

Reward hacking is what an RL policy learns first when an evaluator can be fooled, so the recipe
pays a cheat less than an honest failure: a verdict that says the candidate tried to get a pass
it did not earn (torch did the work, the harness was tampered with, the output was cached)
costs ``cheat_penalty``; an honest failure (it did not compile, it was wrong) earns
``failure``; a pass earns ``correct``, plus a bonus for speed only where the backend's timings
measure hardware (never the CPU interpreter's). A harness error or a skipped operator is no
signal about the candidate: ``None``, which a caller should leave out of the batch.

docs/serve.md shows it as a reward function for TRL's GRPOTrainer.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping

from kgb_core.evaluation import verdicts

# The verdicts that mean the candidate tried to pass without doing the work.
CHEATS = frozenset({
    verdicts.REFERENCE_USED, verdicts.TAMPERING, verdicts.STALE_OUTPUT, verdicts.DEFERRED_WORK,
    verdicts.GHOST_REPLAY_MATCHED, verdicts.GHOST_REPLAY_DETECTED, verdicts.HOST_READ,
    verdicts.HELDOUT_FAILED, verdicts.SCREEN_REJECTED, verdicts.NO_TRITON_LAUNCH,
    verdicts.OUTPUT_ALIASES_INPUT})
# Not the candidate's doing: no reward either way.
NO_SIGNAL = frozenset({verdicts.HARNESS_ERROR, verdicts.NO_CANDIDATE}) | verdicts.SKIPPED


@dataclass(frozen=True)
class RewardRecipe:
    correct: float = 1.0
    failure: float = 0.0
    cheat_penalty: float = -1.0
    # Added to ``correct``: speed_weight per doubling of speed over the baseline (log2 of the
    # speedup), clipped to [speed_floor, speed_cap]: a slower kernel earns less than
    # ``correct``, and still more than an honest failure.
    speed_weight: float = 0.5
    speed_floor: float = -0.5
    speed_cap: float = 1.5

    def __call__(self, result: Any) -> float | None:
        """The reward for one ``EvalResult`` (or its dict, as ``kgb serve`` answers)."""
        data: Mapping[str, Any] = result if isinstance(result, Mapping) else result.to_dict()
        verdict = data.get("verdict")
        if verdict in NO_SIGNAL:
            return None
        if verdict in CHEATS:
            return self.cheat_penalty
        if verdict != verdicts.PASS:
            return self.failure
        return self.correct + self.speed_bonus(data)

    def speed_bonus(self, data: Mapping[str, Any]) -> float:
        speedup = data.get("speedup")
        if (not isinstance(speedup, (int, float)) or speedup <= 0 or data.get("emulates")
                or not measures_hardware(str(data.get("backend", "")))):
            return 0.0
        return max(self.speed_floor, min(self.speed_weight * math.log2(speedup),
                                         self.speed_cap))


@functools.lru_cache(maxsize=None)
def measures_hardware(backend: str) -> bool:
    """Whether a backend's timings are a chip's, as its profile declares (the CPU
    interpreter's are not; an unknown backend's earn no bonus)."""
    from kgb_core.plugins import load_registry

    try:
        return bool(load_registry().backend(backend).timings_measure_hardware)
    except Exception:  # noqa: BLE001 - an unknown backend's timings earn no bonus
        return False


default_recipe = RewardRecipe()
