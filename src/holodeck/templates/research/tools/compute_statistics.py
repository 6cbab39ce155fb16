"""A descriptive statistics tool: deterministic, no network access.

Every public function in this file is a tool; helpers start with `_`.
"""

from __future__ import annotations

import statistics


def _rounded(value: float) -> float:
    return round(value, 4)


def compute_statistics(values: list[float]) -> dict[str, float | int | str]:
    """Compute descriptive statistics of a list of numbers.

    Use it for every mean, median, range or standard deviation instead of doing the
    arithmetic yourself.

    Args:
        values: The numbers to summarize, e.g. [29.1, 30.4, 31.2, 32.3].

    Returns:
        count, mean, median, min, max, range and the sample standard deviation
        (0 for a single value), rounded to 4 decimals; or an `error` message when
        `values` is empty.
    """
    if not values:
        return {"error": "give at least one number"}
    numbers = [float(v) for v in values]
    low, high = min(numbers), max(numbers)
    return {
        "count": len(numbers),
        "mean": _rounded(statistics.fmean(numbers)),
        "median": _rounded(statistics.median(numbers)),
        "min": low,
        "max": high,
        "range": _rounded(high - low),
        "stdev": _rounded(statistics.stdev(numbers)) if len(numbers) > 1 else 0.0,
    }
