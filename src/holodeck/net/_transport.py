"""An httpx2 transport that resolves each host once, checks every address with the
policy, and connects to the address it checked: a name that resolves to a public address
when checked and to a private one when connected cannot slip through, and each redirect
hop to a new host is checked when its connection opens. The URL's host stays the Host
header and the TLS server name (httpcore2 takes both from the request, not the socket)."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

import httpcore2
import httpx2

from holodeck.net._policy import OutboundBlocked, OutboundPolicy

if TYPE_CHECKING:
    from httpcore2._types import SOCKET_OPTION


class _CheckedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to addresses `policy` lets through; Unix sockets never."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self.inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            addresses = await self.policy.addresses(host, port)
        except (socket.gaierror, UnicodeError) as exc:
            raise httpcore2.ConnectError(f"{host}: the name does not resolve ({exc})") from None
        failure: Exception | None = None
        for address in addresses:  # the checked addresses, in the resolver's order
            try:
                return await self.inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore2.ConnectError(f"{host} has no address")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise OutboundBlocked(f"the Unix socket {path} is not a network address")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@cache
def _verifying_context() -> ssl.SSLContext:
    """One certificate-checking context for every checked client: building one (loading
    the CA bundle) costs over 100 ms, and web_fetch makes a client per call. It honours
    SSL_CERT_FILE / SSL_CERT_DIR as set when first used (the environment's proxies are
    what the checked clients ignore, not its certificates)."""
    return httpx2.create_ssl_context(verify=True, trust_env=True)


class CheckedTransport(httpx2.AsyncHTTPTransport):
    """`httpx2.AsyncHTTPTransport` with no proxy from the environment (a proxy would
    resolve names itself, past the policy) and every connection checked by `policy`."""

    def __init__(self, policy: OutboundPolicy, verify: ssl.SSLContext | bool = True) -> None:
        # The parent's constructor only builds `_pool`, without a way to pass a network
        # backend: the pool is built here instead, with the checking one.
        context = _verifying_context() if verify is True else httpx2.create_ssl_context(verify)
        # (no super().__init__(): it would build, and load certificates for, a pool unused)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=context, network_backend=_CheckedBackend(policy)
        )


def checked_client(policy: OutboundPolicy, **options: Any) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` whose every connection `policy` checks; `options` are the
    client's (headers, timeout, follow_redirects...)."""
    return httpx2.AsyncClient(transport=CheckedTransport(policy), trust_env=False, **options)
