"""Defines get_weather and get_forecast; `_cache` is private, so it is not a tool."""

_TABLE = {"oslo": "6 °C, overcast"}


def _cache() -> dict[str, str]:
    return _TABLE


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return _cache().get(city.lower(), "unknown")


def get_forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return "rain"
