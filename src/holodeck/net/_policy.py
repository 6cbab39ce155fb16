"""`OutboundPolicy`: whether a request the model or an uploaded image steers may reach a
host, decided on the addresses the host resolves to (the ones then connected to)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from holodeck.errors import ExecutionError
from holodeck.net._addresses import embedded_ipv4, is_loopback, refused_kind
from holodeck.spec.models.network_settings import (
    IpAddress,
    NetworkRule,
    NetworkSettings,
    parse_rule,
)

log = logging.getLogger("holodeck.net")

# host, port -> the addresses to connect to, in order (a test passes its own)
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class OutboundBlocked(ExecutionError):
    """A request the policy refuses; the message is what the model and the log see."""

    def __init__(self, message: str) -> None:
        super().__init__(f"blocked: {message}")


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses `host` has, as the operating system resolves it."""
    loop = asyncio.get_running_loop()
    found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


@dataclass(frozen=True)
class OutboundPolicy:
    """`allow` and `deny` rules (deny wins), on top of refusing non-public addresses.

    `trusted`: (host, port) pairs the operator configured (a search endpoint), reached as
    written. `allow_loopback`: `holodeck chat --allow-loopback` on a developer's machine."""

    allow: tuple[NetworkRule, ...] = ()
    deny: tuple[NetworkRule, ...] = ()
    allow_loopback: bool = False
    trusted: frozenset[tuple[str, int]] = frozenset()
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def from_settings(
        cls, settings: NetworkSettings | None, *, allow_loopback: bool = False
    ) -> OutboundPolicy:
        if settings is None:
            return cls(allow_loopback=allow_loopback)
        allow = tuple(parse_rule(entry) for entry in settings.allow)
        deny = tuple(parse_rule(entry) for entry in settings.deny)
        return cls(allow, deny, allow_loopback)

    def trusting(self, url: str) -> OutboundPolicy:
        """This policy, with the host and port of `url` (written by the operator) reached
        as written."""
        host, port = _host_port(url)
        return replace(self, trusted=self.trusted | {(host, port)})

    def check_url(self, url: str) -> None:
        """Refuse a URL that is not http(s) before anything is resolved."""
        scheme = urlsplit(url.strip()).scheme.lower()
        if scheme not in SCHEMES:
            shown = url if len(url) <= 80 else url[:77] + "..."
            raise OutboundBlocked(
                f"{shown} is not an http:// or https:// URL; only those are fetched"
            )

    async def addresses(self, host: str, port: int) -> list[IpAddress]:
        """The addresses of `host` a connection to `port` may use: every one it resolves
        to must pass, or `OutboundBlocked` says which did not and why."""
        host = host.lower().rstrip(".")
        if (host, port) in self.trusted:
            return await self._resolve(host, port)
        for rule in self.deny:
            if rule.network is None and rule.matches(host, None, port):
                raise self._refused(f"{_shown(host, port)} is denied by network.deny ({rule.text})")
        found = await self._resolve(host, port)
        for address in found:
            why = self._why_refused(host, address, port)
            if why is not None:
                raise self._refused(why)
        return found

    async def _resolve(self, host: str, port: int) -> list[IpAddress]:
        literal = _literal(host)
        if literal is not None:
            return [literal]
        return [ipaddress.ip_address(a) for a in await self.resolver(host, port)]

    def _why_refused(self, host: str, address: IpAddress, port: int) -> str | None:
        seen = [address] + [a for a in [embedded_ipv4(address)] if a is not None]
        named = "" if _literal(host) is not None else f"{host} resolves to "
        for rule in self.deny:
            if any(rule.matches(host, a, port) for a in seen):
                return f"{named}{address} is denied by network.deny ({rule.text})"
        if any(rule.matches(host, a, port) for rule in self.allow for a in seen):
            return None
        kind = refused_kind(address)
        if kind is None or (self.allow_loopback and is_loopback(address)):
            return None
        shown = _display(address)
        if named:
            return f"{named}{shown}, {kind}; allow it under network.allow"
        return f"{shown} is {kind}; allow it under network.allow"

    def _refused(self, why: str) -> OutboundBlocked:
        blocked = OutboundBlocked(why)
        log.warning("outbound request %s", blocked)
        return blocked


def _literal(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _display(address: IpAddress) -> str:
    """`::ffff:127.0.0.1` rather than `::ffff:7f00:1`: the IPv4 address it reaches."""
    mapped = getattr(address, "ipv4_mapped", None)
    return f"::ffff:{mapped}" if mapped is not None else str(address)


def _shown(host: str, port: int) -> str:
    return f"{host}:{port}"


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().rstrip(".")
    return host, parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 80)
