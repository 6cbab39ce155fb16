"""`web_search`: where its results come from for the run's model (`search_backend`), a
search provider's API (Google Custom Search, Perplexity, Nimble), and the offline
stand-in for the `test` model. This searches the web; search over an agent's own files
(`vectorstore`, `hierarchical_document`) is `holodeck.search`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import httpx2
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from holodeck.errors import ConfigurationError
from holodeck.llm.providers import override_settings
from holodeck.llm.tool_context import ToolContext
from holodeck.net import OutboundPolicy, checked_client
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.model_settings import ProviderType
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


class WebResult(TypedDict):
    title: str
    url: str
    snippet: str


# --- web_search ----------------------------------------------------------------------

SearchBackend = Literal["provider", "native", "offline"]


def search_backend(spec: AgentSpec, options: ToolContext, builtin: BuiltinConfig) -> SearchBackend:
    """Where `web_search` results come from, for the model this run uses.

    Raises `ToolLoadError` when there is none: no provider and a model without native
    search (possible when `--model` replaces the image's OpenAI model)."""
    if builtin.search_provider is not None:
        _check_provider(builtin, spec)
        return "provider"
    provider, label = _run_model(spec, options)
    kind = options.settings.provider_type(provider) if provider else None
    if kind is ProviderType.TEST:
        return "offline"
    if kind is ProviderType.OPENAI:
        return "native"
    raise ToolLoadError(
        f"web_search: {label} has no built-in web search (only OpenAI models do); "
        "set a search_provider with its key, e.g. "
        "`{name: web_search, search_provider: perplexity, api_key: ${PERPLEXITY_API_KEY}}` "
        "(google also needs engine_id)",
        spec.source,
    )


def _run_model(spec: AgentSpec, options: ToolContext) -> tuple[str | None, str]:
    """The provider of the model the run uses, and how to name that model."""
    if options.model is not None and not isinstance(options.model, str):
        return None, f"the model `{options.model.model_name}`"
    if options.model is not None:
        try:
            provider: str | None = override_settings(options.model).provider
        except ConfigurationError:  # not `test` or `provider/name`: building the model says so
            provider = None
        return provider, f"the model `{options.model}`"
    if spec.model is None:
        return None, "an agent with no model"
    name = f"{spec.model.provider}/{spec.model.name}" if spec.model.name else spec.model.provider
    return spec.model.provider, f"the model `{name}`"


def _check_provider(builtin: BuiltinConfig, spec: AgentSpec) -> None:
    provider = builtin.search_provider
    if builtin.api_key is None or not builtin.api_key.get_secret_value().strip():
        raise ToolLoadError(
            f"web_search: search_provider `{provider}` needs an `api_key` "
            "(is the ${VARIABLE} it refers to set?)",
            spec.source,
        )
    if provider == "google" and not builtin.engine_id:
        raise ToolLoadError(
            "web_search: search_provider `google` needs an `engine_id` "
            "(the cx of a Programmable Search Engine)",
            spec.source,
        )


async def offline_web_search(query: str) -> list[WebResult]:
    """Search the web. Offline stand-in for the `test` model: it returns no results.

    Args:
        query: What to search for.
    """
    return []


SearchFunction = Callable[[str], Awaitable[list[WebResult]]]


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

    async def web_search(query: str) -> list[WebResult]:
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
) -> list[WebResult]:
    """Custom Search JSON API: GET ?key=&cx=&q=&num= (num at most 10) -> items[]."""
    params = {"key": key, "cx": cfg.engine_id or "", "q": query, "num": str(DEFAULT_RESULTS)}
    body = await _call(reach, "google", "GET", endpoint, timeout, params=params)
    items = body.get("items", []) if isinstance(body, dict) else None  # no items: no results
    return _results("google", items, url="link", snippet=("snippet",), limit=SNIPPET_CHARS)


async def _perplexity(
    reach: OutboundPolicy, endpoint: str, key: str, query: str, cfg: BuiltinConfig, timeout: float
) -> list[WebResult]:
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
) -> list[WebResult]:
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
) -> list[WebResult]:
    if not isinstance(items, list):
        raise WebSearchError(f"{provider} search: the answer has no list of results")
    out: list[WebResult] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get(url), str):
            continue
        text = next((item[k] for k in snippet if isinstance(item.get(k), str) and item[k]), "")
        out.append(
            WebResult(
                title=str(item.get("title") or ""),
                url=item[url],
                snippet=_clip(text.strip(), limit),
            )
        )
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
