"""The builtin tools an agent image lists under `tools.builtins`: `web_fetch` and `web_search`.

`web_fetch(url)` is a plain HTTP(S) GET: the page comes back as readable text (HTML
reduced to its title, headings and paragraphs; JSON and text/* as they are). Any other
content type is refused. Reads are capped in size and time (`FetchLimits`; the defaults
are `FETCH_LIMITS`; the runtime's `builtin_toolset` takes others).

`web_search(query)` returns `[{title, url, snippet}]` from the image's
`search_provider`: Google Custom Search (`api_key` + `engine_id`), Perplexity's Search
API or Nimble's Search API (`max_results`, `search_depth`). Without a provider it is
the model's own server-side search, which only OpenAI models have: that is a native
tool, not a function tool, so the runtime offers it as a capability, not in the toolset
(`holodeck.runtime.toolsets`).
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

from holodeck.tools.builtins._errors import BuiltinToolError, WebFetchError, WebSearchError
from holodeck.tools.builtins._fetch import (
    FETCH_LIMITS,
    HTML_TYPES,
    TEXT_TYPES,
    USER_AGENT,
    FetchLimits,
    fetch_text,
    web_fetch_tool,
)
from holodeck.tools.builtins._html import BLOCKS, HEADINGS, SKIPPED, html_to_text
from holodeck.tools.builtins._web_search import (
    DEEP_SNIPPET_CHARS,
    DEFAULT_RESULTS,
    SEARCH_TIMEOUT,
    SEARCH_URLS,
    SNIPPET_CHARS,
    SearchBackend,
    SearchFunction,
    WebResult,
    offline_web_search,
    provider_search,
    search_backend,
)

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
    "WebFetchError",
    "WebResult",
    "WebSearchError",
    "fetch_text",
    "html_to_text",
    "offline_web_search",
    "provider_search",
    "search_backend",
    "web_fetch_tool",
]
