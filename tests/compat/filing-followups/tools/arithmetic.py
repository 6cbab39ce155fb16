"""Arithmetic the analyst must do with tools, so graders can see each step."""


def _number(text: str) -> float:
    return float(str(text).replace(",", "").replace("_", "").strip())


def subtract(a: str, b: str) -> str:
    """Return a - b as a string."""
    return repr(_number(a) - _number(b))


def divide(a: str, b: str) -> str:
    """Return a / b as a string."""
    return repr(_number(a) / _number(b))
