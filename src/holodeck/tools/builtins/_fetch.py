"""`web_fetch`: a plain HTTP(S) GET, the page returned as readable text, within its
`FetchLimits` (the defaults, or those `web_fetch_tool` is given), to the hosts the
agent's outbound policy lets it reach."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2

from holodeck._version import __version__
from holodeck.net import OutboundPolicy, checked_client
from holodeck.tools.builtins._errors import WebFetchError
from holodeck.tools.builtins._html import html_to_text

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


FETCH_LIMITS = FetchLimits()  # the defaults; `builtin_toolset(fetch_limits=...)` for others


HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-ndjson"}
)

# --- web_fetch -----------------------------------------------------------------------


def web_fetch_tool(
    policy: OutboundPolicy, limits: FetchLimits | None = None
) -> Callable[[str], Awaitable[str]]:
    """The `web_fetch` tool of an agent whose outbound policy is `policy`, reading
    within `limits` (default `FetchLimits()`)."""

    async def web_fetch(url: str) -> str:
        """Fetch a web page and return its readable text.

        HTML comes back as text: the title first, then headings and paragraphs, without
        scripts, styles or navigation. JSON and plain text come back as they are. Images,
        PDFs and other binary content are refused. Long pages are cut off, with a note.

        Args:
            url: The absolute http:// or https:// URL of the page.
        """
        return await fetch_text(url, limits, policy=policy)

    return web_fetch


async def fetch_text(
    url: str, limits: FetchLimits | None = None, *, policy: OutboundPolicy | None = None
) -> str:
    """GET `url` and return its text, within `limits` (default `FetchLimits()`), reaching
    only what `policy` allows (default: public addresses); raises `WebFetchError`, or
    `OutboundBlocked` for a host or scheme the policy refuses."""
    limits = limits or FetchLimits()
    policy = policy or OutboundPolicy()
    target = _http_url(url, policy)
    try:
        async with asyncio.timeout(limits.timeout):
            body, media_type, charset, truncated = await _download(target, limits, policy)
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


def _http_url(url: str, policy: OutboundPolicy) -> httpx2.URL:
    try:
        target = httpx2.URL(url.strip())
    except (httpx2.InvalidURL, TypeError):
        raise WebFetchError(f"not a valid URL: {url!r}") from None
    if target.scheme:  # file://, ftp://...: refused by the policy, whatever the host
        policy.check_url(url)
    if target.scheme not in ("http", "https") or not target.host:
        raise WebFetchError(f"web_fetch needs an absolute http:// or https:// URL, not {url!r}")
    return target


async def _download(
    target: httpx2.URL, limits: FetchLimits, policy: OutboundPolicy
) -> tuple[bytes, str, str | None, bool]:
    """The body (at most `limits.max_bytes`), its media type and charset, and whether
    it was cut off."""
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1",
        "Accept-Language": "en-US,en;q=0.8",
    }
    async with (
        checked_client(
            policy,
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
