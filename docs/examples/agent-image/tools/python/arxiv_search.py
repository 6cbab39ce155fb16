"""One public function, so the tool is named after the file: `arxiv_search`."""

from __future__ import annotations

from urllib.parse import urlencode

_API = "https://export.arxiv.org/api/query"


def search(query: str, max_results: int = 5) -> str:
    """Search arXiv and return the Atom feed of matching papers.

    Args:
        query: Words to search for in titles and abstracts.
        max_results: How many papers to return.
    """
    from urllib.request import urlopen

    url = f"{_API}?{urlencode({'search_query': f'all:{query}', 'max_results': max_results})}"
    with urlopen(url, timeout=20) as response:
        return str(response.read().decode("utf-8"))
