"""`web_search` through a search provider's API (Google Custom Search, Perplexity, Nimble),
and the offline stand-in for the `test` model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx2
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from holodeck.net import OutboundPolicy, checked_client
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.image_files import BuiltinConfig
from holodeck.tools.builtins._errors import WebSearchError
from holodeck.tools.builtins._fetch import USER_AGENT
from holodeck.tools.builtins._html import _SPACES
from holodeck.tools.errors import ToolLoadError

DEFAULT_RESULTS = 5
SEARCH_TIMEOUT = 30.0  # seconds per search request, unless `provider_search` is given another
SNIPPET_CHARS = 1_000
DEEP_SNIPPET_CHARS = 8_000  # nimble `search_depth: deep` returns page content: keep more

SEARCH_URLS = {
    "google": ("HOLODECK_GOOGLE_SEARCH_URL", "https://www.googleapis.com/customsearch/v1"),
    "perplexity": ("HOLODECK_PERPLEXITY_SEARCH_URL", "https://api.perplexity.ai/search"),
    "nimble": ("HOLODECK_NIMBLE_SEARCH_URL", "https://sdk.nimbleway.com/v2/search"),
}


class SearchResult(TypedDict):
    title: str
    url: str
    snippet: str


# --- web_search ----------------------------------------------------------------------


async def offline_web_search(query: str) -> list[SearchResult]:
    """Search the web. Offline stand-in for the `test` model: it returns no results.

    Args:
        query: What to search for.
    """
    return []


SearchFunction = Callable[[str], Awaitable[list[SearchResult]]]


def provider_search(
    builtin: BuiltinConfig,
    env: Mapping[str, str],
    spec: AgentSpec,
    policy: OutboundPolicy | None = None,
    timeout: float = SEARCH_TIMEOUT,
) -> SearchFunction:
    """`web_search` backed by the builtin's search_provider; each search ends after
    `timeout` seconds. Its endpoint (the provider's, or the operator's variable) is
    reached as written; a redirect elsewhere goes through `policy`."""
    provider = builtin.search_provider
    assert provider is not None and builtin.api_key is not None
    variable, default = SEARCH_URLS[provider]
    endpoint = env.get(variable) or default
    if not endpoint.startswith(("http://", "https://")):
        raise ToolLoadError(f"{variable} must be an http(s) URL, not {endpoint!r}", spec.source)
    key = builtin.api_key.get_secret_value().strip()
    reach = (policy or OutboundPolicy()).trusting(endpoint)
    adapters = {"google": _google, "perplexity": _perplexity, "nimble": _nimble}
    adapter = adapters[provider]

    async def web_search(query: str) -> list[SearchResult]:
        """Search the web. Returns a ranked list of results, each with the page's title,
        its URL and a snippet of its text.

        Args:
            query: What to search for, as keywords or a question.
        """
        try:
            async with asyncio.timeout(timeout):
                return await adapter(reach, endpoint, key, query, builtin, timeout)
        except (TimeoutError, httpx2.TimeoutException):
            raise WebSearchError(f"{provider} search: no answer within {timeout:g} s") from None

    return web_search


async def _google(
    reach: OutboundPolicy, endpoint: str, key: str, query: str, cfg: BuiltinConfig, timeout: float
) -> list[SearchResult]:
    """Custom Search JSON API: GET ?key=&cx=&q=&num= (num at most 10) -> items[]."""
    params = {"key": key, "cx": cfg.engine_id or "", "q": query, "num": str(DEFAULT_RESULTS)}
    body = await _call(reach, "google", "GET", endpoint, timeout, params=params)
    items = body.get("items", []) if isinstance(body, dict) else None  # no items: no results
    return _results("google", items, url="link", snippet=("snippet",), limit=SNIPPET_CHARS)


async def _perplexity(
    reach: OutboundPolicy, endpoint: str, key: str, query: str, cfg: BuiltinConfig, timeout: float
) -> list[SearchResult]:
    """Search API: POST {query, max_results} with a bearer key -> results[]."""
    payload = {"query": query, "max_results": DEFAULT_RESULTS}
    headers = {"Authorization": f"Bearer {key}"}
    body = await _call(
        reach, "perplexity", "POST", endpoint, timeout, json=payload, headers=headers
    )
    items = body.get("results") if isinstance(body, dict) else None
    return _results("perplexity", items, url="url", snippet=("snippet",), limit=SNIPPET_CHARS)


async def _nimble(
    reach: OutboundPolicy, endpoint: str, key: str, query: str, cfg: BuiltinConfig, timeout: float
) -> list[SearchResult]:
    """Search API: POST {query, max_results, search_depth} with a bearer key -> results[]."""
    depth = cfg.search_depth or "lite"
    payload = {
        "query": query,
        "max_results": cfg.max_results or DEFAULT_RESULTS,
        "search_depth": depth,
    }
    headers = {"Authorization": f"Bearer {key}"}
    body = await _call(reach, "nimble", "POST", endpoint, timeout, json=payload, headers=headers)
    items = body.get("results") if isinstance(body, dict) else None
    if depth == "deep":  # deep returns each page's content: that is what was asked for
        return _results("nimble", items, "url", ("content", "description"), DEEP_SNIPPET_CHARS)
    return _results("nimble", items, "url", ("description", "content"), SNIPPET_CHARS)


async def _call(
    reach: OutboundPolicy, provider: str, method: str, endpoint: str, timeout: float, **kwargs: Any
) -> Any:
    """One request to a search API; its JSON body, or `WebSearchError`. Messages name
    the host only: a Google key travels in the query string."""
    host = httpx2.URL(endpoint).host
    async with checked_client(
        reach,
        headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        timeout=httpx2.Timeout(timeout),
        follow_redirects=True,
    ) as client:
        try:
            response = await client.request(method, endpoint, **kwargs)
        except httpx2.TimeoutException:
            raise
        except httpx2.HTTPError as exc:
            raise WebSearchError(
                f"{provider} search: could not reach {host} ({type(exc).__name__}: {exc})"
            ) from None
    if response.status_code >= 400:
        detail = _error_detail(response)
        raise WebSearchError(
            f"{provider} search failed: HTTP {response.status_code} {response.reason_phrase}"
            + (f": {detail}" if detail else "")
            + (" (check the api_key)" if response.status_code in (401, 403) else "")
        )
    try:
        return response.json()
    except ValueError:
        raise WebSearchError(f"{provider} search: {host} did not answer with JSON") from None


def _error_detail(response: httpx2.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        plain = response.headers.get("content-type", "").startswith("text/plain")
        return _clip(_SPACES.sub(" ", response.text).strip(), 200) if plain else ""
    candidates: list[Any] = []
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            candidates.append(error.get("message"))
        candidates += [error, body.get("message"), body.get("detail")]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            return _clip(_SPACES.sub(" ", candidate), 200)
    return ""


def _results(
    provider: str, items: Any, url: str, snippet: tuple[str, ...], limit: int
) -> list[SearchResult]:
    if not isinstance(items, list):
        raise WebSearchError(f"{provider} search: the answer has no list of results")
    out: list[SearchResult] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get(url), str):
            continue
        text = next((item[k] for k in snippet if isinstance(item.get(k), str) and item[k]), "")
        out.append(
            SearchResult(
                title=str(item.get("title") or ""),
                url=item[url],
                snippet=_clip(text.strip(), limit),
            )
        )
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
