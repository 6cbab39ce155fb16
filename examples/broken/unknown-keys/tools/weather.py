def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"It is sunny in {city}."
