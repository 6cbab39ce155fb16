"""The builtin tools an agent image lists under `tools.builtins`: `web_fetch` and `web_search`.

`web_fetch(url)` is a plain HTTP(S) GET: the page comes back as readable text (HTML
reduced to its title, headings and paragraphs; JSON and text/* as they are). Any other
content type is refused. Reads are capped in size and time (`FETCH_LIMITS`).

`web_search(query)` returns `[{title, url, snippet}]` from the image's
`search_provider`: Google Custom Search (`api_key` + `engine_id`), Perplexity's Search
API or Nimble's Search API (`max_results`, `search_depth`). Without a provider it is
the model's own server-side search, which only OpenAI models have: that is a native
tool, not a function tool, so it comes from `builtin_capabilities`, not the toolset.
With the offline `test` model there is no server-side search: `web_search` is then an
offline stand-in that returns no results, so `--model test` runs stay offline.

Failures raise `BuiltinToolError` with a one-line message; the runtime records it and
the model sees an empty result.

Security: both tools make outbound requests from this process. `web_fetch` goes to any
URL the model names, private and loopback addresses included (there is no
application-level URL filtering, as for MCP servers): where agents or their inputs are
untrusted, restrict egress at the network level (proxy, network policy).

The search endpoints can be pointed elsewhere (a proxy, a test server): set
HOLODECK_GOOGLE_SEARCH_URL, HOLODECK_PERPLEXITY_SEARCH_URL or HOLODECK_NIMBLE_SEARCH_URL
(in the run's environment) to the full endpoint URL that replaces the provider's.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Literal

import httpx2
from pydantic_ai import FunctionToolset
from pydantic_ai.capabilities import AbstractCapability, NativeTool
from pydantic_ai.native_tools import WebSearchTool
from pydantic_ai.toolsets import AbstractToolset
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from holodeck._version import __version__
from holodeck.llm.errors import ProviderError
from holodeck.runtime.models import override_settings
from holodeck.runtime.options import RunOptions
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.image_files import BuiltinConfig
from holodeck.spec.model_settings import ProviderType
from holodeck.tools.errors import ToolLoadError

USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    f"Chrome/126.0.0.0 Safari/537.36 holodeck/{__version__}"
)


@dataclass(frozen=True)
class FetchLimits:
    """How much `web_fetch` reads, and for how long."""

    max_bytes: int = 2 * 1024 * 1024  # of the body; the rest is cut off, with a note
    max_chars: int = 100_000  # of the text the model receives
    timeout: float = 15.0  # seconds for the whole fetch, redirects included
    max_redirects: int = 5


FETCH_LIMITS = FetchLimits()  # read at each call: replace it to change the limits
SEARCH_TIMEOUT = 30.0  # seconds per search request
DEFAULT_RESULTS = 5
SNIPPET_CHARS = 1_000
DEEP_SNIPPET_CHARS = 8_000  # nimble `search_depth: deep` returns page content: keep more

SEARCH_URLS = {
    "google": ("HOLODECK_GOOGLE_SEARCH_URL", "https://www.googleapis.com/customsearch/v1"),
    "perplexity": ("HOLODECK_PERPLEXITY_SEARCH_URL", "https://api.perplexity.ai/search"),
    "nimble": ("HOLODECK_NIMBLE_SEARCH_URL", "https://sdk.nimbleway.com/v2/search"),
}

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-ndjson"}
)


class BuiltinToolError(Exception):
    """A builtin tool's call failed; the message is one line a user can act on."""


class WebFetchError(BuiltinToolError):
    pass


class WebSearchError(BuiltinToolError):
    pass


class SearchResult(TypedDict):
    title: str
    url: str
    snippet: str


# --- assembly ----------------------------------------------------------------------

SearchBackend = Literal["provider", "native", "offline"]


def builtin_toolset(spec: AgentSpec, options: RunOptions) -> AbstractToolset[Any]:
    """The function tools for `spec.builtins`. A native `web_search` is not among them:
    the agent gets it from `builtin_capabilities`."""
    toolset: FunctionToolset[Any] = FunctionToolset()
    env = options.env if options.env is not None else os.environ
    for builtin in spec.builtins:
        if builtin.name == "web_fetch":
            toolset.add_function(web_fetch, name="web_fetch", takes_ctx=False)
            continue
        backend = search_backend(spec, options, builtin)
        if backend == "provider":
            search = provider_search(builtin, env, spec)
            toolset.add_function(search, name="web_search", takes_ctx=False)
        elif backend == "offline":
            toolset.add_function(offline_web_search, name="web_search", takes_ctx=False)
    return toolset


def builtin_capabilities(spec: AgentSpec, options: RunOptions) -> list[AbstractCapability[Any]]:
    """The native tools for `spec.builtins`, for `Agent(capabilities=...)`: OpenAI's
    server-side web search when `web_search` has no provider and the model is OpenAI's."""
    for builtin in spec.builtins:
        if builtin.name == "web_search" and search_backend(spec, options, builtin) == "native":
            return [NativeTool[Any](WebSearchTool())]
    return []


def search_backend(spec: AgentSpec, options: RunOptions, builtin: BuiltinConfig) -> SearchBackend:
    """Where `web_search` results come from, for the model this run uses.

    Raises `ToolLoadError` when there is none: no provider and a model without native
    search (possible when `--model` replaces the image's OpenAI model)."""
    if builtin.search_provider is not None:
        _check_provider(builtin, spec)
        return "provider"
    provider, label = _run_model(spec, options)
    settings = options.for_agent(spec).settings
    assert settings is not None
    kind = settings.provider_type(provider) if provider else None
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


def _run_model(spec: AgentSpec, options: RunOptions) -> tuple[str | None, str]:
    """The provider of the model the run uses, and how to name that model."""
    if options.model is not None and not isinstance(options.model, str):
        return None, f"the model `{options.model.model_name}`"
    if options.model is not None:
        try:
            provider: str | None = override_settings(options.model).provider
        except ProviderError:  # not `test` or `provider/name`: building the model says so
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


# --- web_fetch -----------------------------------------------------------------------


async def web_fetch(url: str) -> str:
    """Fetch a web page and return its readable text.

    HTML comes back as text: the title first, then headings and paragraphs, without
    scripts, styles or navigation. JSON and plain text come back as they are. Images,
    PDFs and other binary content are refused. Long pages are cut off, with a note.

    Args:
        url: The absolute http:// or https:// URL of the page.
    """
    return await fetch_text(url)


async def fetch_text(url: str, limits: FetchLimits | None = None) -> str:
    """GET `url` and return its text, within `limits` (default `FETCH_LIMITS`);
    raises `WebFetchError`."""
    limits = limits or FETCH_LIMITS
    target = _http_url(url)
    try:
        async with asyncio.timeout(limits.timeout):
            body, media_type, charset, truncated = await _download(target, limits)
    except (TimeoutError, httpx2.TimeoutException):
        raise WebFetchError(
            f"{url}: no complete answer within {limits.timeout:g} s (the fetch time limit)"
        ) from None
    except httpx2.TooManyRedirects:
        raise WebFetchError(f"{url}: more than {limits.max_redirects} redirects") from None
    except httpx2.UnsupportedProtocol as exc:
        raise WebFetchError(f"{url}: redirected to a URL that is not http(s) ({exc})") from None
    except httpx2.HTTPError as exc:
        raise WebFetchError(f"{url}: {_network_problem(exc)}") from None
    text = _to_text(body, media_type, charset, url)
    if not text:
        return "[no readable text: the page is empty, or built by JavaScript]"
    notes = []
    if truncated:
        notes.append(f"only the first {_size(limits.max_bytes)} of the page were read")
    if len(text) > limits.max_chars:
        text = text[: limits.max_chars].rstrip()
        notes.append(f"the text is cut off at {limits.max_chars:,} characters")
    if notes:
        text += f"\n\n[truncated: {'; '.join(notes)}]"
    return text


def _http_url(url: str) -> httpx2.URL:
    try:
        target = httpx2.URL(url.strip())
    except (httpx2.InvalidURL, TypeError):
        raise WebFetchError(f"not a valid URL: {url!r}") from None
    if target.scheme not in ("http", "https") or not target.host:
        raise WebFetchError(f"web_fetch needs an absolute http:// or https:// URL, not {url!r}")
    return target


async def _download(target: httpx2.URL, limits: FetchLimits) -> tuple[bytes, str, str | None, bool]:
    """The body (at most `limits.max_bytes`), its media type and charset, and whether
    it was cut off."""
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1",
        "Accept-Language": "en-US,en;q=0.8",
    }
    async with (
        httpx2.AsyncClient(
            headers=headers,
            follow_redirects=True,
            max_redirects=limits.max_redirects,
            timeout=httpx2.Timeout(limits.timeout),
        ) as client,
        client.stream("GET", target) as response,
    ):
        if response.status_code >= 400:
            reason = f" {response.reason_phrase}" if response.reason_phrase else ""
            where = "" if response.url == target else f" (after redirects, at {response.url})"
            raise WebFetchError(f"{target}: HTTP {response.status_code}{reason}{where}")
        media_type, charset = _content_type(response.headers.get("content-type", ""))
        if media_type and not _is_text(media_type):
            raise WebFetchError(
                f"{target}: the content is {media_type}, not a text page "
                "(web_fetch reads HTML, JSON and plain text)"
            )
        chunks: list[bytes] = []
        size = 0
        truncated = False
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > limits.max_bytes:
                truncated = True
                break
        body = b"".join(chunks)[: limits.max_bytes]
    return body, media_type, charset, truncated


def _content_type(header: str) -> tuple[str, str | None]:
    media_type, _, rest = header.partition(";")
    charset = None
    for parameter in rest.split(";"):
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media_type.strip().lower(), charset


def _is_text(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in HTML_TYPES
        or media_type in TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


def _to_text(body: bytes, media_type: str, charset: str | None, url: str) -> str:
    if not media_type:  # undeclared: sniff
        if b"\x00" in body[:4096]:
            raise WebFetchError(f"{url}: the content is binary, not a text page")
        head = body[:1024].lstrip().lower()
        media_type = "text/html" if head.startswith((b"<!doctype html", b"<html")) else "text/plain"
    if media_type in HTML_TYPES:
        return html_to_text(_decode(body, charset or _meta_charset(body)))
    return _decode(body, charset).strip()


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def _meta_charset(body: bytes) -> str | None:
    found = _META_CHARSET.search(body[:4096])
    return found.group(1).decode("ascii") if found else None


def _decode(body: bytes, charset: str | None) -> str:
    encoding = "utf-8"
    if charset:
        with contextlib.suppress(LookupError):
            encoding = codecs.lookup(charset).name
    if encoding == "utf-8" and body.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    return body.decode(encoding, errors="replace")


def _network_problem(exc: httpx2.HTTPError) -> str:
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.ConnectError):
        return f"could not connect ({detail})"
    return f"the request failed ({detail})"


def _size(count: int) -> str:
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MB"
    if count >= 1024:
        return f"{count / 1024:g} KB"
    return f"{count} bytes"


# --- HTML to text --------------------------------------------------------------------

# Elements whose content is never readable text (or is page chrome, like navigation).
SKIPPED = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "nav",
        "iframe",
        "object",
        "embed",
        "canvas",
        "select",
        "datalist",
    }
)
BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "ul",
    }
)
HEADINGS = {f"h{level}": level for level in range(1, 7)}
_SPACES = re.compile(r"\s+")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.title: list[str] = []
        self.skipping: list[str] = []  # open elements whose content is dropped
        self.in_title = False
        self.title_done = False
        self.pre = 0
        self.started = False  # any body text yet
        self.newlines = 0  # newlines at the end of the output
        self.pending_space = False  # a space is due before the next word

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skipping.append(tag)
        if self.skipping:
            return
        if tag == "title" and not self.title_done:
            self.in_title = True
        elif tag in HEADINGS:
            self._break(2)
            self._emit("#" * HEADINGS[tag] + " ")
        elif tag == "li":
            self._break(1)
            self._emit("- ")
        elif tag == "br":
            self.pending_space = False
            if self.newlines < 2:
                self._emit("\n")
        elif tag in ("td", "th"):
            self.pending_space = True
        elif tag in BLOCKS:
            self._break(2)
            if tag == "pre":
                self.pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.skipping:
            while self.skipping and self.skipping.pop() != tag:
                pass
            return
        if self.skipping:
            return
        if tag == "title" and self.in_title:
            self.in_title = False
            self.title_done = True
        elif tag in HEADINGS or tag in BLOCKS:
            if tag == "pre" and self.pre:
                self.pre -= 1
            self._break(2)
        elif tag == "li":
            self._break(1)

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if self.in_title:
            self.title.append(data)
            return
        if self.pre:
            self._emit(data)
            return
        text = _SPACES.sub(" ", data)
        word = text.strip(" ")
        if not word:
            self.pending_space = self.pending_space or bool(text)
            return
        if (self.pending_space or text.startswith(" ")) and self.started and not self.newlines:
            word = " " + word
        self._emit(word)
        self.pending_space = text.endswith(" ")

    def _emit(self, text: str) -> None:
        self.out.append(text)
        self.started = True
        self.pending_space = False
        kept = text.rstrip("\n")
        self.newlines = len(text) - len(kept) if kept else self.newlines + len(text)

    def _break(self, count: int) -> None:
        """End the line; `count` 2 leaves a blank line after it."""
        self.pending_space = False
        if self.started and self.newlines < count:
            self._emit("\n" * (count - self.newlines))

    def text(self) -> str:
        title = _SPACES.sub(" ", "".join(self.title)).strip()
        lines = [line.rstrip() for line in "".join(self.out).split("\n")]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
        return f"{title}\n\n{body}".strip() if title else body


def html_to_text(html: str) -> str:
    """Readable text of an HTML page: the title, then headings (as `#` lines), paragraphs,
    list items and preformatted text; scripts, styles and navigation are dropped."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return parser.text()


# --- web_search ----------------------------------------------------------------------


async def offline_web_search(query: str) -> list[SearchResult]:
    """Search the web. Offline stand-in for the `test` model: it returns no results.

    Args:
        query: What to search for.
    """
    return []


SearchFunction = Callable[[str], Awaitable[list[SearchResult]]]


def provider_search(
    builtin: BuiltinConfig, env: Mapping[str, str], spec: AgentSpec
) -> SearchFunction:
    """`web_search` backed by the builtin's search_provider."""
    provider = builtin.search_provider
    assert provider is not None and builtin.api_key is not None
    variable, default = SEARCH_URLS[provider]
    endpoint = env.get(variable) or default
    if not endpoint.startswith(("http://", "https://")):
        raise ToolLoadError(f"{variable} must be an http(s) URL, not {endpoint!r}", spec.source)
    key = builtin.api_key.get_secret_value().strip()
    adapters = {"google": _google, "perplexity": _perplexity, "nimble": _nimble}
    adapter = adapters[provider]

    async def web_search(query: str) -> list[SearchResult]:
        """Search the web. Returns a ranked list of results, each with the page's title,
        its URL and a snippet of its text.

        Args:
            query: What to search for, as keywords or a question.
        """
        try:
            async with asyncio.timeout(SEARCH_TIMEOUT):
                return await adapter(endpoint, key, query, builtin)
        except (TimeoutError, httpx2.TimeoutException):
            raise WebSearchError(
                f"{provider} search: no answer within {SEARCH_TIMEOUT:g} s"
            ) from None

    return web_search


async def _google(endpoint: str, key: str, query: str, cfg: BuiltinConfig) -> list[SearchResult]:
    """Custom Search JSON API: GET ?key=&cx=&q=&num= (num at most 10) -> items[]."""
    params = {"key": key, "cx": cfg.engine_id or "", "q": query, "num": str(DEFAULT_RESULTS)}
    body = await _call("google", "GET", endpoint, params=params)
    items = body.get("items", []) if isinstance(body, dict) else None  # no items: no results
    return _results("google", items, url="link", snippet=("snippet",), limit=SNIPPET_CHARS)


async def _perplexity(
    endpoint: str, key: str, query: str, cfg: BuiltinConfig
) -> list[SearchResult]:
    """Search API: POST {query, max_results} with a bearer key -> results[]."""
    payload = {"query": query, "max_results": DEFAULT_RESULTS}
    headers = {"Authorization": f"Bearer {key}"}
    body = await _call("perplexity", "POST", endpoint, json=payload, headers=headers)
    items = body.get("results") if isinstance(body, dict) else None
    return _results("perplexity", items, url="url", snippet=("snippet",), limit=SNIPPET_CHARS)


async def _nimble(endpoint: str, key: str, query: str, cfg: BuiltinConfig) -> list[SearchResult]:
    """Search API: POST {query, max_results, search_depth} with a bearer key -> results[]."""
    depth = cfg.search_depth or "lite"
    payload = {
        "query": query,
        "max_results": cfg.max_results or DEFAULT_RESULTS,
        "search_depth": depth,
    }
    headers = {"Authorization": f"Bearer {key}"}
    body = await _call("nimble", "POST", endpoint, json=payload, headers=headers)
    items = body.get("results") if isinstance(body, dict) else None
    if depth == "deep":  # deep returns each page's content: that is what was asked for
        return _results("nimble", items, "url", ("content", "description"), DEEP_SNIPPET_CHARS)
    return _results("nimble", items, "url", ("description", "content"), SNIPPET_CHARS)


async def _call(provider: str, method: str, endpoint: str, **kwargs: Any) -> Any:
    """One request to a search API; its JSON body, or `WebSearchError`. Messages name
    the host only: a Google key travels in the query string."""
    host = httpx2.URL(endpoint).host
    async with httpx2.AsyncClient(
        headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        timeout=httpx2.Timeout(SEARCH_TIMEOUT),
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
