"""One public function, so the tool is named `search`."""


def run(query: str) -> str:
    """Search the local index."""
    return query
