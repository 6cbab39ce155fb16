"""The a2a-sdk client speaks `httpx`; HoloDeck's outbound walls are an `httpx2` transport.
This transport hands each request of the one to the other, so every connection the
client opens is checked by the agent's `OutboundPolicy` (resolved once, checked, and made
to the checked address), as `web_fetch`'s are."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import httpx2

from holodeck.net import CheckedTransport, OutboundBlocked, OutboundPolicy


class _Body(httpx.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class PolicyTransport(httpx.AsyncBaseTransport):
    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self._inner = CheckedTransport(policy)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.policy.check_url(str(request.url))
        body = await request.aread()  # JSON-RPC requests: small, and read once
        forwarded = httpx2.Request(
            request.method,
            str(request.url),
            headers=request.headers.raw,
            content=body,
            extensions={"timeout": request.extensions.get("timeout", {})},
        )
        try:
            response = await self._inner.handle_async_request(forwarded)
        except OutboundBlocked:
            raise
        except httpx2.TimeoutException as exc:
            raise httpx.TimeoutException(str(exc), request=request) from None
        except httpx2.TransportError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers.raw,
            stream=_Body(response.stream),
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
