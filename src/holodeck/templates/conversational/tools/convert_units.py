"""A unit conversion tool: exact conversion factors, no network access.

Every public function in this file is a tool; helpers start with `_`.
"""

from __future__ import annotations

# Each unit's size in the base unit of its kind (meter, kilogram, liter).
_FACTORS: dict[str, dict[str, float]] = {
    "length": {
        "mm": 0.001,
        "cm": 0.01,
        "m": 1.0,
        "km": 1000.0,
        "in": 0.0254,
        "ft": 0.3048,
        "yd": 0.9144,
        "mi": 1609.344,
    },
    "mass": {
        "g": 0.001,
        "kg": 1.0,
        "oz": 0.028349523125,
        "lb": 0.45359237,
    },
    "volume": {
        "ml": 0.001,
        "l": 1.0,
        "fl_oz": 0.0295735295625,
        "cup": 0.2365882365,
        "gal": 3.785411784,
        "imp_gal": 4.54609,
    },
}
_TEMPERATURES = ("c", "f", "k")
_LABELS = {"c": "°C", "f": "°F", "k": "K", "imp_gal": "imperial gal", "fl_oz": "fl oz"}

_ALIASES = {
    "millimeter": "mm",
    "centimeter": "cm",
    "meter": "m",
    "metre": "m",
    "kilometer": "km",
    "kilometre": "km",
    "inch": "in",
    "inches": "in",
    "foot": "ft",
    "feet": "ft",
    "yard": "yd",
    "mile": "mi",
    "gram": "g",
    "kilogram": "kg",
    "ounce": "oz",
    "pound": "lb",
    "lbs": "lb",
    "milliliter": "ml",
    "liter": "l",
    "litre": "l",
    "fluid_ounce": "fl_oz",
    "gallon": "gal",
    "us_gallon": "gal",
    "imperial_gallon": "imp_gal",
    "celsius": "c",
    "fahrenheit": "f",
    "kelvin": "k",
}


def _normalize(unit: str) -> str:
    key = unit.strip().lower().replace("°", "").replace(" ", "_")
    candidates = [key, key[:-1]] if key.endswith("s") else [key]  # plurals: "meters"
    for candidate in candidates:
        canonical = _ALIASES.get(candidate, candidate)
        if _kind(canonical) is not None:
            return canonical
    return key


def _kind(unit: str) -> str | None:
    if unit in _TEMPERATURES:
        return "temperature"
    return next((kind for kind, units in _FACTORS.items() if unit in units), None)


def _to_celsius(value: float, unit: str) -> float:
    if unit == "f":
        return (value - 32.0) * 5.0 / 9.0
    if unit == "k":
        return value - 273.15
    return value


def _from_celsius(value: float, unit: str) -> float:
    if unit == "f":
        return value * 9.0 / 5.0 + 32.0
    if unit == "k":
        return value + 273.15
    return value


def _number(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _label(unit: str) -> str:
    return _LABELS.get(unit, unit)


def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, float | str]:
    """Convert a length, weight, volume or temperature from one unit to another.

    Supported units: mm, cm, m, km, in, ft, yd, mi (length); g, kg, oz, lb (weight);
    ml, l, fl_oz, cup, gal (US), imp_gal (volume); c, f, k (temperature). Full names
    such as "inches", "pounds" or "celsius" work too.

    Args:
        value: The amount to convert, e.g. 12.
        from_unit: The unit of `value`, e.g. "in".
        to_unit: The unit to convert to, e.g. "cm".

    Returns:
        The converted value rounded to 4 decimals, the normalized units and a short
        sentence; or an `error` message when a unit is unknown or the kinds differ.
    """
    source, target = _normalize(from_unit), _normalize(to_unit)
    source_kind, target_kind = _kind(source), _kind(target)
    if source_kind is None or target_kind is None:
        unknown = from_unit if source_kind is None else to_unit
        return {"error": f"unknown unit '{unknown}'"}
    if source_kind != target_kind:
        return {"error": f"cannot convert {source_kind} ({source}) to {target_kind} ({target})"}
    if source_kind == "temperature":
        result = _from_celsius(_to_celsius(value, source), target)
    else:
        units = _FACTORS[source_kind]
        result = value * units[source] / units[target]
    result = round(result, 4)
    return {
        "value": value,
        "from_unit": source,
        "to_unit": target,
        "result": result,
        "text": f"{_number(value)} {_label(source)} = {_number(result)} {_label(target)}",
    }
