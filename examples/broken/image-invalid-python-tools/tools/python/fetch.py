"""A syntax error: the tool cannot be read."""


def fetch(url: str) -> str
    """Fetch a page."""
    return url
