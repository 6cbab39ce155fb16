"""`download`: one file from a URL a definition or the model names (test-case files,
documents), through the outbound policy."""

from __future__ import annotations

import asyncio

import httpx2

from holodeck.errors import ExecutionError
from holodeck.net._policy import OutboundPolicy
from holodeck.net._transport import checked_client

MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024
DOWNLOAD_TIMEOUT_S = 60.0
MAX_REDIRECTS = 5


class DownloadError(ExecutionError):
    """The file could not be downloaded; the message says why."""


async def download(
    url: str,
    policy: OutboundPolicy,
    *,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
    timeout: float = DOWNLOAD_TIMEOUT_S,
) -> bytes:
    """The body at `url` (at most `max_bytes`). Every host, redirects included, is
    checked by `policy`: `OutboundBlocked` when one is refused, `DownloadError` otherwise.

        data = await download("https://files.example/cases.csv", policy)
    """
    policy.check_url(url)
    try:
        async with (
            asyncio.timeout(timeout),
            checked_client(
                policy, follow_redirects=True, max_redirects=MAX_REDIRECTS, timeout=timeout
            ) as client,
            client.stream("GET", url.strip()) as response,
        ):
            if response.status_code >= 400:
                raise DownloadError(f"{url}: HTTP {response.status_code} {response.reason_phrase}")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise DownloadError(f"{url}: larger than {max_bytes:,} bytes")
                chunks.append(chunk)
    except (TimeoutError, httpx2.TimeoutException):
        raise DownloadError(f"{url}: no complete answer within {timeout:g} s") from None
    except httpx2.TooManyRedirects:
        raise DownloadError(f"{url}: more than {MAX_REDIRECTS} redirects") from None
    except httpx2.UnsupportedProtocol:
        raise DownloadError(f"{url}: redirected to a URL that is not http(s)") from None
    except httpx2.HTTPError as exc:
        raise DownloadError(f"{url}: {exc or type(exc).__name__}") from None
    return b"".join(chunks)
