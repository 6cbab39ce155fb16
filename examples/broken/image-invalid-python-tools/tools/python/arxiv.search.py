"""The file stem `arxiv.search` makes the tool name invalid: providers reject dots."""


def search(query: str) -> str:
    """Search arXiv."""
    return query
