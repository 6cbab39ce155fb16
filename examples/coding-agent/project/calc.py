"""Small arithmetic helpers."""


def add(a: int, b: int) -> int:
    """The sum of `a` and `b`."""
    return a - b


def double(a: int) -> int:
    """Twice `a`."""
    return add(a, a)
