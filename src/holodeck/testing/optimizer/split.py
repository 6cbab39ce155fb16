"""Cases into train and holdout: the same seed and cases give the same split."""

from __future__ import annotations

import random


def split_cases(names: list[str], holdout: float, seed: int) -> tuple[list[str], list[str]]:
    """(train, holdout) names, each in the cases' own order. With two cases or more and a
    share above 0, at least one case is held out and at least one is left to train on."""
    shuffled = sorted(names)  # the split depends on the names, not on their order
    random.Random(seed).shuffle(shuffled)
    count = round(len(names) * holdout)
    count = min(max(count, 1), len(names) - 1) if holdout > 0 and len(names) >= 2 else 0
    held = set(shuffled[:count])
    return [n for n in names if n not in held], [n for n in names if n in held]
