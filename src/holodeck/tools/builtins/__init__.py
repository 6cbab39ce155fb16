"""The builtin tools an agent image lists under `tools.builtins`: `web_fetch` and `web_search`.

`web_fetch(url)` is a plain HTTP(S) GET: the page comes back as readable text (HTML
reduced to its title, headings and paragraphs; JSON and text/* as they are). Any other
content type is refused. Reads are capped in size and time (`FetchLimits`; the defaults
are `FETCH_LIMITS`, `builtin_toolset` takes others).

`web_search(query)` returns `[{title, url, snippet}]` from the image's
`search_provider`: Google Custom Search (`api_key` + `engine_id`), Perplexity's Search
API or Nimble's Search API (`max_results`, `search_depth`). Without a provider it is
the model's own server-side search, which only OpenAI models have: that is a native
tool, not a function tool, so it comes from `builtin_capabilities`, not the toolset.
With the offline `test` model there is no server-side search: `web_search` is then an
offline stand-in that returns no results, so `--model test` runs stay offline.

Failures raise `BuiltinToolError` with a one-line message; the runtime records it and
the model sees an empty result.

Security: both tools make outbound requests from this process. `web_fetch` reaches only
what the agent's outbound policy (`holodeck.net`, `network:` in config.yaml and
agent.yaml) allows: by default no loopback, private, link-local or other non-public
address, checked on every redirect; a refused fetch reaches the model as "blocked: ...".
A search provider's endpoint is the operator's (the provider's URL or the variable
below) and is reached as written; where its answers redirect is checked.

The search endpoints can be pointed elsewhere (a proxy, a test server): set
HOLODECK_GOOGLE_SEARCH_URL, HOLODECK_PERPLEXITY_SEARCH_URL or HOLODECK_NIMBLE_SEARCH_URL
(in the run's environment) to the full endpoint URL that replaces the provider's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic_ai import FunctionToolset
from pydantic_ai.capabilities import AbstractCapability, NativeTool
from pydantic_ai.native_tools import WebSearchTool
from pydantic_ai.toolsets import AbstractToolset

from holodeck.errors import ConfigurationError
from holodeck.llm.providers import override_settings
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.image_files import BuiltinConfig
from holodeck.spec.model_settings import ProviderType
from holodeck.tools.builtins._errors import BuiltinToolError, WebFetchError, WebSearchError
from holodeck.tools.builtins._fetch import (
    HTML_TYPES,
    TEXT_TYPES,
    USER_AGENT,
    FetchLimits,
    fetch_text,
    web_fetch_tool,
)
from holodeck.tools.builtins._html import BLOCKS, HEADINGS, SKIPPED, html_to_text
from holodeck.tools.builtins._search import (
    DEEP_SNIPPET_CHARS,
    DEFAULT_RESULTS,
    SEARCH_TIMEOUT,
    SEARCH_URLS,
    SNIPPET_CHARS,
    SearchFunction,
    SearchResult,
    offline_web_search,
    provider_search,
)
from holodeck.tools.context import ToolContext
from holodeck.tools.errors import ToolLoadError

__all__ = [
    "BLOCKS",
    "DEEP_SNIPPET_CHARS",
    "DEFAULT_RESULTS",
    "FETCH_LIMITS",
    "HEADINGS",
    "HTML_TYPES",
    "SEARCH_TIMEOUT",
    "SEARCH_URLS",
    "SKIPPED",
    "SNIPPET_CHARS",
    "TEXT_TYPES",
    "USER_AGENT",
    "BuiltinToolError",
    "FetchLimits",
    "SearchBackend",
    "SearchFunction",
    "SearchResult",
    "WebFetchError",
    "WebSearchError",
    "builtin_capabilities",
    "builtin_toolset",
    "fetch_text",
    "html_to_text",
    "offline_web_search",
    "provider_search",
    "search_backend",
    "web_fetch_tool",
]

FETCH_LIMITS = FetchLimits()  # the defaults; `builtin_toolset(fetch_limits=...)` for others


# --- assembly ----------------------------------------------------------------------

SearchBackend = Literal["provider", "native", "offline"]


def builtin_toolset(
    spec: AgentSpec,
    options: ToolContext,
    *,
    fetch_limits: FetchLimits = FETCH_LIMITS,
    search_timeout: float = SEARCH_TIMEOUT,
) -> AbstractToolset[Any]:
    """The function tools for `spec.builtins`, `web_fetch` reading within `fetch_limits`
    and a provider's `web_search` ending after `search_timeout` seconds. A native
    `web_search` is not among them: the agent gets it from `builtin_capabilities`."""
    toolset: FunctionToolset[Any] = FunctionToolset()
    env, policy = options.env, options.outbound
    for builtin in spec.builtins:
        if builtin.name == "web_fetch":
            fetch = web_fetch_tool(policy, fetch_limits)
            toolset.add_function(fetch, name="web_fetch", takes_ctx=False)
            continue
        backend = search_backend(spec, options, builtin)
        if backend == "provider":
            search = provider_search(builtin, env, spec, policy, search_timeout)
            toolset.add_function(search, name="web_search", takes_ctx=False)
        elif backend == "offline":
            toolset.add_function(offline_web_search, name="web_search", takes_ctx=False)
    return toolset


def builtin_capabilities(spec: AgentSpec, options: ToolContext) -> list[AbstractCapability[Any]]:
    """The native tools for `spec.builtins`, for `Agent(capabilities=...)`: OpenAI's
    server-side web search when `web_search` has no provider and the model is OpenAI's."""
    for builtin in spec.builtins:
        if builtin.name == "web_search" and search_backend(spec, options, builtin) == "native":
            return [NativeTool[Any](WebSearchTool())]
    return []


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
