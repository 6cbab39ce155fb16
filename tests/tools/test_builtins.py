"""Builtin tools: `web_fetch` against a local site, `web_search` against fake Google,
Perplexity and Nimble APIs, the load-time choice of search backend, OpenAI's native
search as a capability, and a whole turn with the offline test model.

Every server listens on 127.0.0.1 with a random port; nothing leaves the machine.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.net import OutboundBlocked, OutboundPolicy
from holodeck.runtime import (
    Agent,
    Event,
    FinalMessage,
    Hosting,
    ToolCallFinished,
    ToolCallStarted,
    tool_context,
)
from holodeck.runtime.toolsets import builtin_capabilities, builtin_toolset
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.tools import builtins
from holodeck.tools.builtins import (
    FetchLimits,
    WebFetchError,
    WebSearchError,
    fetch_text,
    html_to_text,
    web_fetch_tool,
)
from holodeck.tools.errors import ToolLoadError
from local_http import LocalHTTPServer

pytestmark = pytest.mark.anyio

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local servers are reached directly, whatever proxy the machine has."""
    for variable in PROXY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


# The local servers listen on loopback, which web_fetch refuses by default
# (tests/net/test_outbound.py): here it is allowed.
LOCAL = OutboundPolicy(allow_loopback=True)


def toolset_for(
    spec: AgentSpec,
    options: RunOptions,
    hosting: Hosting | None = None,
    fetch_limits: FetchLimits = builtins.FETCH_LIMITS,
    search_timeout: float = builtins.SEARCH_TIMEOUT,
) -> Any:
    """The builtin tools of `spec`, as an agent run with `options` gets them."""
    context = tool_context(spec, options, hosting)
    return builtin_toolset(spec, context, fetch_limits=fetch_limits, search_timeout=search_timeout)


def capabilities_for(spec: AgentSpec, options: RunOptions) -> list[Any]:
    return builtin_capabilities(spec, tool_context(spec, options))


async def fetch_local(url: str, limits: FetchLimits | None = None) -> str:
    return await fetch_text(url, limits, policy=LOCAL)


# --- a small HTTP server -------------------------------------------------------------


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Route = Callable[[BaseHTTPRequestHandler, "Server"], None]


@dataclass
class Server:
    routes: dict[str, Route]
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                server.seen.append(
                    Seen(
                        self.command,
                        parts.path,
                        parse_qs(parts.query),
                        {k.lower(): v for k, v in self.headers.items()},
                        self.rfile.read(length) if length else b"",
                    )
                )
                route = server.routes.get(parts.path)
                if route is None:
                    send(self, 404, b"no such page", "text/plain")
                else:
                    route(self, server)

            do_GET = do_POST = _any

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = LocalHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        self.release.set()  # lets slow handlers finish
        self.httpd.shutdown()
        self.httpd.server_close()


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    content_type: str | None,
    headers: dict[str, str] | None = None,
) -> None:
    handler.send_response(status)
    if content_type is not None:
        handler.send_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def reply(status: int, body: bytes | str, content_type: str | None = "text/plain") -> Route:
    data = body.encode() if isinstance(body, str) else body
    return lambda handler, _server: send(handler, status, data, content_type)


def reply_json(payload: Any, status: int = 200) -> Route:
    return reply(status, json.dumps(payload), "application/json")


@pytest.fixture
def serve() -> Iterator[Callable[[dict[str, Route]], Server]]:
    started: list[Server] = []

    def start(routes: dict[str, Route]) -> Server:
        started.append(Server(routes))
        return started[-1]

    yield start
    for server in started:
        server.stop()


# --- the site web_fetch reads ----------------------------------------------------------

PAGE = """<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Tide   Tables</title>
  <style>body { color: red }</style>
  <script>var menu = "<p>not text</p>";</script>
</head>
<body>
  <nav><a href="/">Home</a> <a href="/about">About us</a></nav>
  <h1>Harbour  tides</h1>
  <p>High water is at <b>06:12</b>
     and again at 18:40.</p>
  <h2>Notes</h2>
  <ul><li>Spring tides &amp; neaps</li><li>Times are local</li></ul>
  <noscript>Enable JavaScript</noscript>
  <p>Line one<br>Line two</p>
</body>
</html>
"""


def slow(handler: BaseHTTPRequestHandler, server: Server) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", "100")
    handler.end_headers()
    handler.wfile.write(b"a first part")
    handler.wfile.flush()
    server.release.wait(10)  # the rest never comes while the test runs


def redirects(count: int) -> dict[str, Route]:
    routes: dict[str, Route] = {}
    for n in range(1, count + 1):
        target = f"/hop/{n - 1}"
        routes[f"/hop/{n}"] = lambda h, _s, t=target: send(h, 302, b"", None, {"Location": t})
    routes["/hop/0"] = reply(200, "<title>Arrived</title><p>End of the chain</p>", "text/html")
    return routes


@pytest.fixture
def site(serve: Callable[[dict[str, Route]], Server]) -> Server:
    return serve(
        {
            "/page.html": reply(200, PAGE, "text/html; charset=utf-8"),
            "/data.json": reply_json({"station": "Harbour", "heights": [1.2, 3.4]}),
            "/notes.txt": reply(200, "  plain notes\nsecond line\n", "text/plain"),
            "/latin1.txt": reply(200, "café".encode("latin-1"), "text/plain; charset=ISO-8859-1"),
            "/meta-charset.html": reply(
                200,
                '<meta charset="windows-1252"><p>na\xefve</p>'.encode("cp1252"),
                "text/html",
            ),
            "/feed.xml": reply(200, "<rss><title>t</title></rss>", "application/rss+xml"),
            "/app.html": reply(
                200, "<html><body><script>render()</script></body></html>", "text/html"
            ),
            "/big.txt": reply(200, "x" * 300_000, "text/plain"),
            "/untyped": reply(200, "<!doctype html><title>T</title><p>Sniffed</p>", None),
            "/binary": reply(200, b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
            "/untyped-binary": reply(200, b"GIF89a\x00\x01\x00", None),
            "/error": reply(500, "boom"),
            "/slow": slow,
            "/moved": lambda h, _s: send(h, 301, b"", None, {"Location": "/nowhere"}),
            "/to-ftp": lambda h, _s: send(h, 302, b"", None, {"Location": "ftp://files.test/x"}),
            **redirects(6),
        }
    )


async def test_html_comes_back_as_readable_text(site: Server) -> None:
    text = await fetch_local(f"{site.url}/page.html")
    assert text == (
        "Tide Tables\n\n"
        "# Harbour tides\n\n"
        "High water is at 06:12 and again at 18:40.\n\n"
        "## Notes\n\n"
        "- Spring tides & neaps\n"
        "- Times are local\n\n"
        "Line one\nLine two"
    )
    request = site.seen[-1]
    assert request.method == "GET"
    assert request.headers["user-agent"].startswith("Mozilla/5.0")
    assert "holodeck/" in request.headers["user-agent"]
    assert "text/html" in request.headers["accept"]


def test_html_extraction_keeps_structure_and_drops_chrome() -> None:
    html = (
        "<html><head><title>T</title></head><body>"
        "<svg><title>icon</title><text>no</text></svg>"
        "<header>Site</header><article><h3>Deep</h3><p>a<i>b</i> c</p>"
        "<pre>  keep\n    indent</pre><table><tr><th>k</th><td>v</td></tr></table>"
        "</article><template><p>hidden</p></template><footer>Foot</footer></body></html>"
    )
    assert html_to_text(html) == (
        "T\n\nSite\n\n### Deep\n\nab c\n\n  keep\n    indent\n\nk v\n\nFoot"
    )
    assert html_to_text("<p>no title</p>") == "no title"
    assert html_to_text("<nav>unclosed navigation") == ""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/data.json", '{"station": "Harbour", "heights": [1.2, 3.4]}'),
        ("/notes.txt", "plain notes\nsecond line"),
        ("/latin1.txt", "café"),
        ("/meta-charset.html", "naïve"),
        ("/feed.xml", "<rss><title>t</title></rss>"),
        ("/untyped", "T\n\nSniffed"),
    ],
)
async def test_json_and_text_come_back_as_they_are(site: Server, path: str, expected: str) -> None:
    assert await fetch_local(site.url + path) == expected


async def test_big_bodies_are_cut_off_with_a_note(site: Server) -> None:
    text = await fetch_local(f"{site.url}/big.txt", FetchLimits(max_bytes=64 * 1024))
    assert text.startswith("x" * 1000)
    assert text.count("x") == 64 * 1024
    assert text.endswith("[truncated: only the first 64 KB of the page were read]")
    short = await fetch_local(f"{site.url}/big.txt", FetchLimits(max_chars=500))
    assert short == "x" * 500 + "\n\n[truncated: the text is cut off at 500 characters]"


async def test_pages_without_text_say_so(site: Server) -> None:
    assert await fetch_local(f"{site.url}/app.html") == (
        "[no readable text: the page is empty, or built by JavaScript]"
    )


async def test_the_tool_reads_within_its_toolsets_limits(write: Write, site: Server) -> None:
    spec = image(write, "anthropic/claude-sonnet-4-5", "    - web_fetch\n")
    limited = toolset_for(spec, RunOptions(), Hosting(outbound=LOCAL), FetchLimits(max_chars=10))
    fetch = limited.tools["web_fetch"].function  # type: ignore[attr-defined]
    text = await fetch(f"{site.url}/notes.txt")
    assert text == "plain note\n\n[truncated: the text is cut off at 10 characters]"
    assert await web_fetch_tool(LOCAL)(f"{site.url}/notes.txt") == "plain notes\nsecond line"


async def test_redirects_are_followed_up_to_the_limit(site: Server) -> None:
    assert await fetch_local(f"{site.url}/hop/5") == "Arrived\n\nEnd of the chain"
    with pytest.raises(WebFetchError, match="more than 5 redirects"):
        await fetch_local(f"{site.url}/hop/6")
    with pytest.raises(WebFetchError, match="redirected to a URL that is not http"):
        await fetch_local(f"{site.url}/to-ftp")


async def test_http_errors_are_one_line(site: Server) -> None:
    with pytest.raises(WebFetchError) as missing:
        await fetch_local(f"{site.url}/nowhere")
    assert str(missing.value) == f"{site.url}/nowhere: HTTP 404 Not Found"
    with pytest.raises(WebFetchError) as failing:
        await fetch_local(f"{site.url}/error")
    assert str(failing.value) == f"{site.url}/error: HTTP 500 Internal Server Error"
    with pytest.raises(WebFetchError) as moved:
        await fetch_local(f"{site.url}/moved")
    assert str(moved.value) == (
        f"{site.url}/moved: HTTP 404 Not Found (after redirects, at {site.url}/nowhere)"
    )


async def test_the_time_limit_covers_the_whole_fetch(site: Server) -> None:
    started = time.monotonic()
    with pytest.raises(WebFetchError) as caught:
        await fetch_local(f"{site.url}/slow", FetchLimits(timeout=0.3))
    assert time.monotonic() - started < 5
    assert (
        str(caught.value)
        == f"{site.url}/slow: no complete answer within 0.3 s (the fetch time limit)"
    )


async def test_binary_content_is_refused(site: Server) -> None:
    with pytest.raises(WebFetchError) as png:
        await fetch_local(f"{site.url}/binary")
    assert "image/png, not a text page" in str(png.value)
    with pytest.raises(WebFetchError, match="binary, not a text page"):
        await fetch_local(f"{site.url}/untyped-binary")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_unreachable_hosts_and_bad_urls() -> None:
    with pytest.raises(WebFetchError, match="could not connect"):
        await fetch_local(f"http://127.0.0.1:{free_port()}/", FetchLimits(timeout=5))
    with pytest.raises(WebFetchError, match="could not connect"):
        await fetch_local("http://no-such-host.invalid/", FetchLimits(timeout=5))
    for bad in ("a", "/relative/path", "http://"):
        with pytest.raises(
            WebFetchError, match=r"absolute http:// or https:// URL|not a valid URL"
        ):
            await fetch_local(bad)
    for other in ("ftp://files.test/x", "file:///etc/passwd"):  # not http(s): never fetched
        with pytest.raises(OutboundBlocked, match="not an http:// or https:// URL"):
            await fetch_local(other)


# --- images for the toolset ----------------------------------------------------------


def image(write: Write, model: str, builtins_yaml: str) -> AgentSpec:
    config = f"spec_version: 1\nname: scout\nllm: {{model: {model}}}\ntools:\n  builtins:\n{builtins_yaml}"
    return load_agent(write({"config.yaml": config}))


def tool_names(spec: AgentSpec, options: RunOptions) -> list[str]:
    toolset = toolset_for(spec, options)
    return sorted(toolset.tools)  # type: ignore[attr-defined]


def search_function(spec: AgentSpec, options: RunOptions) -> Any:
    return toolset_for(spec, options).tools["web_search"].function  # type: ignore[attr-defined]


GOOGLE = "    - {name: web_search, search_provider: google, api_key: gk-123, engine_id: cx-9}\n"
PERPLEXITY = "    - {name: web_search, search_provider: perplexity, api_key: pk-123}\n"
NIMBLE = "    - {name: web_search, search_provider: nimble, api_key: nk-123, max_results: 3, search_depth: deep}\n"


async def test_web_fetch_is_a_function_tool_with_a_described_url(write: Write) -> None:
    spec = image(write, "anthropic/claude-sonnet-4-5", "    - web_fetch\n")
    toolset = toolset_for(spec, RunOptions())
    tool = toolset.tools["web_fetch"]  # type: ignore[attr-defined]
    schema = tool.function_schema.json_schema
    assert schema["required"] == ["url"]
    assert "http" in schema["properties"]["url"]["description"]
    assert "readable text" in tool.description
    assert capabilities_for(spec, RunOptions()) == []


async def test_google_custom_search(
    write: Write, serve: Callable[[dict[str, Route]], Server]
) -> None:
    api = serve(
        {
            "/customsearch/v1": reply_json(
                {
                    "kind": "customsearch#search",
                    "searchInformation": {"totalResults": "2"},
                    "items": [
                        {
                            "kind": "customsearch#result",
                            "title": "Tides",
                            "link": "https://tides.test/a",
                            "displayLink": "tides.test",
                            "snippet": "High water  today.",
                        },
                        {"title": "No link"},
                        {"title": "Moon", "link": "https://moon.test/", "snippet": ""},
                    ],
                }
            )
        }
    )
    options = RunOptions(env={"HOLODECK_GOOGLE_SEARCH_URL": f"{api.url}/customsearch/v1"})
    search = search_function(image(write, "anthropic/claude-sonnet-4-5", GOOGLE), options)
    results = await search("tide times")
    assert results == [
        {"title": "Tides", "url": "https://tides.test/a", "snippet": "High water  today."},
        {"title": "Moon", "url": "https://moon.test/", "snippet": ""},
    ]
    request = api.seen[-1]
    assert (request.method, request.path) == ("GET", "/customsearch/v1")
    assert request.query == {"key": ["gk-123"], "cx": ["cx-9"], "q": ["tide times"], "num": ["5"]}


async def test_google_without_results_and_with_errors(
    write: Write, serve: Callable[[dict[str, Route]], Server]
) -> None:
    api = serve(
        {
            "/empty": reply_json({"kind": "customsearch#search", "searchInformation": {}}),
            "/denied": reply_json(
                {
                    "error": {
                        "code": 403,
                        "message": "API key not valid.",
                        "status": "PERMISSION_DENIED",
                    }
                },
                status=403,
            ),
        }
    )
    spec = image(write, "anthropic/claude-sonnet-4-5", GOOGLE)
    empty = search_function(
        spec, RunOptions(env={"HOLODECK_GOOGLE_SEARCH_URL": f"{api.url}/empty"})
    )
    assert await empty("nothing") == []
    denied = search_function(
        spec, RunOptions(env={"HOLODECK_GOOGLE_SEARCH_URL": f"{api.url}/denied"})
    )
    with pytest.raises(WebSearchError) as caught:
        await denied("tides")
    message = str(caught.value)
    assert (
        message
        == "google search failed: HTTP 403 Forbidden: API key not valid. (check the api_key)"
    )
    assert "gk-123" not in message


async def test_perplexity_search(write: Write, serve: Callable[[dict[str, Route]], Server]) -> None:
    api = serve(
        {
            "/search": reply_json(
                {
                    "id": "e38104d5",
                    "results": [
                        {
                            "title": "Tide tables",
                            "url": "https://tides.test/",
                            "snippet": "Tables for every harbour.",
                            "date": "2025-03-01",
                            "last_updated": "2025-03-02",
                        }
                    ],
                }
            )
        }
    )
    options = RunOptions(env={"HOLODECK_PERPLEXITY_SEARCH_URL": f"{api.url}/search"})
    search = search_function(image(write, "anthropic/claude-sonnet-4-5", PERPLEXITY), options)
    assert await search("tide tables") == [
        {
            "title": "Tide tables",
            "url": "https://tides.test/",
            "snippet": "Tables for every harbour.",
        }
    ]
    request = api.seen[-1]
    assert (request.method, request.path) == ("POST", "/search")
    assert request.headers["authorization"] == "Bearer pk-123"
    assert request.headers["content-type"] == "application/json"
    assert request.json() == {"query": "tide tables", "max_results": 5}


async def test_perplexity_errors(write: Write, serve: Callable[[dict[str, Route]], Server]) -> None:
    api = serve(
        {
            "/limited": reply_json(
                {"error": {"message": "Rate limit exceeded", "type": "rate_limit"}}, 429
            ),
            "/html": reply(200, "<html>gateway</html>", "text/html"),
            "/odd": reply_json({"answer": "no list"}),
        }
    )
    spec = image(write, "anthropic/claude-sonnet-4-5", PERPLEXITY)

    def at(path: str) -> Any:
        return search_function(
            spec, RunOptions(env={"HOLODECK_PERPLEXITY_SEARCH_URL": api.url + path})
        )

    with pytest.raises(WebSearchError, match=r"HTTP 429 Too Many Requests: Rate limit exceeded$"):
        await at("/limited")("q")
    with pytest.raises(WebSearchError, match=r"127\.0\.0\.1 did not answer with JSON"):
        await at("/html")("q")
    with pytest.raises(WebSearchError, match="the answer has no list of results"):
        await at("/odd")("q")
    closed = search_function(
        spec,
        RunOptions(
            env={"HOLODECK_PERPLEXITY_SEARCH_URL": f"http://127.0.0.1:{free_port()}/search"}
        ),
    )
    with pytest.raises(WebSearchError, match=r"perplexity search: could not reach 127\.0\.0\.1"):
        await closed("q")


async def test_nimble_search(write: Write, serve: Callable[[dict[str, Route]], Server]) -> None:
    results = [
        {
            "title": "Tides",
            "url": "https://tides.test/",
            "description": "Short",
            "content": "Full page text",
        },
        {"title": "Only description", "url": "https://b.test/", "description": "Just this"},
    ]
    api = serve({"/v2/search": reply_json({"request_id": "r-1", "results": results})})
    options = RunOptions(env={"HOLODECK_NIMBLE_SEARCH_URL": f"{api.url}/v2/search"})
    deep = search_function(image(write, "anthropic/claude-sonnet-4-5", NIMBLE), options)
    assert await deep("tides") == [
        {"title": "Tides", "url": "https://tides.test/", "snippet": "Full page text"},
        {"title": "Only description", "url": "https://b.test/", "snippet": "Just this"},
    ]
    request = api.seen[-1]
    assert (request.method, request.path) == ("POST", "/v2/search")
    assert request.headers["authorization"] == "Bearer nk-123"
    assert request.json() == {"query": "tides", "max_results": 3, "search_depth": "deep"}

    lite_yaml = "    - {name: web_search, search_provider: nimble, api_key: nk-9}\n"
    lite = search_function(image(write, "anthropic/claude-sonnet-4-5", lite_yaml), options)
    assert (await lite("tides"))[0]["snippet"] == "Short"
    assert api.seen[-1].json() == {"query": "tides", "max_results": 5, "search_depth": "lite"}


async def test_long_snippets_are_clipped(
    write: Write, serve: Callable[[dict[str, Route]], Server]
) -> None:
    long = {"title": "Long", "url": "https://l.test/", "snippet": "w" * 5000}
    api = serve({"/search": reply_json({"results": [long]})})
    options = RunOptions(env={"HOLODECK_PERPLEXITY_SEARCH_URL": f"{api.url}/search"})
    search = search_function(image(write, "anthropic/claude-sonnet-4-5", PERPLEXITY), options)
    snippet = (await search("q"))[0]["snippet"]
    assert len(snippet) == builtins.SNIPPET_CHARS
    assert snippet.endswith("…")


async def test_a_slow_search_api_hits_the_time_limit(
    write: Write, serve: Callable[[dict[str, Route]], Server]
) -> None:
    api = serve({"/search": slow})
    options = RunOptions(env={"HOLODECK_PERPLEXITY_SEARCH_URL": f"{api.url}/search"})
    spec = image(write, "anthropic/claude-sonnet-4-5", PERPLEXITY)
    tools = toolset_for(spec, options, search_timeout=0.3).tools  # type: ignore[attr-defined]
    search = tools["web_search"].function
    with pytest.raises(WebSearchError, match=r"^perplexity search: no answer within 0.3 s$"):
        await search("q")


# --- which search backend, decided at load time ------------------------------------


async def test_openai_models_search_natively(write: Write) -> None:
    from pydantic_ai.capabilities import NativeTool
    from pydantic_ai.native_tools import WebSearchTool

    spec = image(write, "openai/gpt-4o", "    - web_search\n    - web_fetch\n")
    assert tool_names(spec, RunOptions()) == ["web_fetch"]  # no function tool: it is native
    capabilities = capabilities_for(spec, RunOptions())
    assert len(capabilities) == 1
    assert isinstance(capabilities[0], NativeTool)
    assert isinstance(capabilities[0].tool, WebSearchTool)
    # another OpenAI model given at run time keeps it native
    assert capabilities_for(spec, RunOptions(model="openai/gpt-4.1")) == capabilities


async def test_a_provider_wins_over_native_search(write: Write) -> None:
    spec = image(write, "openai/gpt-4o", PERPLEXITY)
    assert tool_names(spec, RunOptions()) == ["web_search"]
    assert capabilities_for(spec, RunOptions()) == []


async def test_native_search_on_a_model_without_it_is_a_load_error(write: Write) -> None:
    spec = image(write, "openai/gpt-4o", "    - web_search\n")
    with pytest.raises(ToolLoadError) as caught:
        toolset_for(spec, RunOptions(model="anthropic/claude-sonnet-4-5"))
    message = str(caught.value)
    assert message.startswith(f"{spec.source}: web_search: the model `anthropic/claude-sonnet-4-5`")
    assert "set a search_provider" in message
    with pytest.raises(ToolLoadError, match="only OpenAI models do"):
        capabilities_for(spec, RunOptions(model="ollama/llama3"))


async def test_the_test_model_gets_an_offline_search(write: Write) -> None:
    spec = image(write, "openai/gpt-4o", "    - web_search\n")
    options = RunOptions(model="test")
    assert capabilities_for(spec, options) == []
    assert await search_function(spec, options)("anything") == []


async def test_provider_settings_are_checked_at_load(write: Write) -> None:
    root = write(
        {
            "config.yaml": "spec_version: 1\nllm: {model: anthropic/claude-sonnet-4-5}\n"
            "tools:\n  builtins:\n"
            "    - {name: web_search, search_provider: perplexity, api_key: '${PPLX_KEY}'}\n"
        }
    )
    spec = load_agent(root, environ={"PPLX_KEY": ""})
    with pytest.raises(ToolLoadError, match="search_provider `perplexity` needs an `api_key`"):
        toolset_for(spec, RunOptions())

    google = image(write, "anthropic/claude-sonnet-4-5", GOOGLE)
    no_engine = google.model_copy(
        update={"builtins": (google.builtins[0].model_copy(update={"engine_id": None}),)}
    )
    with pytest.raises(ToolLoadError, match="needs an `engine_id`"):
        toolset_for(no_engine, RunOptions())

    with pytest.raises(ToolLoadError, match="HOLODECK_GOOGLE_SEARCH_URL must be an http"):
        toolset_for(google, RunOptions(env={"HOLODECK_GOOGLE_SEARCH_URL": "ftp://x"}))


# --- native search reaches OpenAI's Responses API -----------------------------------


def responses_reply(handler: BaseHTTPRequestHandler, _server: Server) -> None:
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "model": "gpt-4o",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Searched.", "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": 5,
            "output_tokens": 2,
            "total_tokens": 7,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    send(handler, 200, json.dumps(body).encode(), "application/json")


async def test_native_search_is_sent_to_the_responses_api(
    write: Write, serve: Callable[[dict[str, Route]], Server]
) -> None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    api = serve({"/v1/responses": responses_reply})
    spec = image(write, "openai/gpt-4o", "    - web_search\n")
    model = OpenAIResponsesModel(
        "gpt-4o", provider=OpenAIProvider(base_url=f"{api.url}/v1", api_key="sk-test")
    )
    agent = PydanticAgent(model, capabilities=capabilities_for(spec, RunOptions()))
    result = await agent.run("tides today?")
    assert result.output == "Searched."
    tools = api.seen[-1].json()["tools"]
    assert [t["type"] for t in tools] == ["web_search"]


# --- whole turns with the offline test model ----------------------------------------


async def turn(agent: Agent, prompt: str = "read the page /call *") -> list[Event]:
    return [event async for event in agent.run(prompt)]


def finished(events: list[Event]) -> dict[str, ToolCallFinished]:
    return {e.name: e for e in events if isinstance(e, ToolCallFinished)}


class _Arguments:
    """Stands in for the test model's argument generator: web_fetch gets `url`."""

    def __init__(self, url: str) -> None:
        from holodeck.llm import offline_model

        self.url = url
        self.original = offline_model._ARGS

    def gen_tool_args(self, tool: Any) -> Any:
        if tool.name == "web_fetch":
            return {"url": self.url}
        return self.original.gen_tool_args(tool)


async def test_a_turn_fetches_a_page_through_the_runtime(
    write: Write, site: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holodeck.llm import offline_model

    monkeypatch.setattr(offline_model, "_ARGS", _Arguments(f"{site.url}/page.html"))
    root = write({"config.yaml": "spec_version: 1\nname: reader\ntools: {builtins: [web_fetch]}\n"})
    agent = Agent(load_agent(root), RunOptions(model="test"), hosting=Hosting(allow_loopback=True))
    events = await turn(agent)
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.name, e.args) for e in started] == [("web_fetch", {"url": f"{site.url}/page.html"})]
    call = finished(events)["web_fetch"]
    assert call.ok
    assert call.result.startswith("Tide Tables\n\n# Harbour tides\n\nHigh water is at 06:12")
    assert "not text" not in call.result and "About us" not in call.result
    final = events[-1]
    assert isinstance(final, FinalMessage)
    assert "Harbour tides" in final.text


async def test_failed_fetches_and_offline_search_in_a_turn(write: Write) -> None:
    root = write(
        {
            "config.yaml": "spec_version: 1\nname: scout\nllm: {model: openai/gpt-4o}\n"
            "tools: {builtins: [web_search, web_fetch]}\n"
        }
    )
    agent = Agent(load_agent(root), RunOptions(model="test"))
    calls = finished(await turn(agent))
    assert calls["web_search"].ok and calls["web_search"].result == []
    # the test model's generated argument is no URL: the call fails, the turn goes on
    fetch = calls["web_fetch"]
    assert fetch.result == ""
    assert fetch.error is not None
    assert fetch.error.startswith(
        "WebFetchError: web_fetch needs an absolute http:// or https:// URL"
    )


async def test_a_turn_searches_with_a_provider(
    write: Write, serve: Callable[[dict[str, Route]], Server]
) -> None:
    hit = {"title": "Tides", "url": "https://tides.test/", "snippet": "Tables."}
    api = serve({"/search": reply_json({"results": [hit]})})
    root = write(
        {
            "config.yaml": "spec_version: 1\nname: scout\nllm: {model: anthropic/claude-sonnet-4-5}\n"
            "tools:\n  builtins:\n" + PERPLEXITY
        }
    )
    env = {"HOLODECK_PERPLEXITY_SEARCH_URL": f"{api.url}/search"}
    agent = Agent(load_agent(root), RunOptions(model="test", env=env))
    call = finished(await turn(agent, "find tide tables /call web_search"))["web_search"]
    assert call.ok and call.result == [hit]
    assert api.seen[-1].headers["authorization"] == "Bearer pk-123"
