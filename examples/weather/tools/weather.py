"""Weather look-ups from a fixed table, so answers are the same on every run."""

from __future__ import annotations

_CURRENT = {
    "lisbon": (21, "sunny"),
    "oslo": (6, "overcast"),
    "tokyo": (25, "cloudy"),
    "nairobi": (24, "partly cloudy"),
    "reykjavik": (2, "snow showers"),
}
_TOMORROW = {
    "lisbon": (23, "sunny"),
    "oslo": (9, "rain"),
    "tokyo": (27, "thunderstorms"),
    "nairobi": (25, "sunny"),
    "reykjavik": (1, "snow"),
}


def _convert(celsius: int, unit: str) -> tuple[int, str]:
    if unit.lower().startswith("f"):
        return round(celsius * 9 / 5 + 32), "°F"
    return celsius, "°C"


def _lookup(table: dict[str, tuple[int, str]], city: str, unit: str) -> dict[str, object]:
    entry = table.get(city.strip().lower())
    if entry is None:
        return {"city": city, "error": f"no weather data for {city}"}
    value, symbol = _convert(entry[0], unit)
    return {"city": city, "temperature": f"{value} {symbol}", "conditions": entry[1]}


def get_weather(city: str, unit: str = "celsius") -> dict[str, object]:
    """Current temperature and conditions in a city.

    Args:
        city: City name, e.g. Lisbon.
        unit: `celsius` or `fahrenheit`.
    """
    return _lookup(_CURRENT, city, unit)


def get_forecast(city: str, unit: str = "celsius") -> dict[str, object]:
    """Tomorrow's high temperature and conditions in a city.

    Args:
        city: City name, e.g. Oslo.
        unit: `celsius` or `fahrenheit`.
    """
    return _lookup(_TOMORROW, city, unit)
