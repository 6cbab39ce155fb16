"""`network:`: where requests an agent's model or an uploaded image steers may go.

Each entry of `allow` and `deny` is a host name (`intranet.example`), every name under a
domain (`*.corp.example`), an address (`127.0.0.1`, `::1`) or a network (`10.0.0.0/8`,
`fd00::/8`), optionally with a port: `localhost:8080`, `10.0.0.0/8:443`, `[::1]:8080`,
`[fd00::/8]:443` (an IPv6 address or network with a port goes in brackets).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, Field

from holodeck.spec.models.base import Strict

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAME = re.compile(
    r"^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$"
)


@dataclass(frozen=True)
class NetworkRule:
    """One parsed entry: a name (`suffix` for `*.domain`), or a network; and a port or any."""

    text: str
    name: str | None = None
    suffix: bool = False
    network: IpNetwork | None = None
    port: int | None = None

    def matches(self, host: str, address: IpAddress | None, port: int) -> bool:
        """True when a request to `host` (as the URL names it), connecting to `address`
        on `port`, is what this entry names."""
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return address is not None and address in self.network
        assert self.name is not None
        host = host.lower().rstrip(".")
        if self.suffix:
            return host.endswith("." + self.name)
        return host == self.name


def parse_rule(text: str) -> NetworkRule:
    """The rule `text` names; `ValueError` saying what is wrong."""
    entry = text.strip()
    host, port = _split_port(entry)
    if not host:
        raise ValueError(f"{text!r} names no host")
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        network = None
    if network is not None:
        if isinstance(network, ipaddress.IPv6Network) and network.network_address.ipv4_mapped:
            mapped = network.network_address.ipv4_mapped
            network = ipaddress.ip_network(f"{mapped}/{max(network.prefixlen - 96, 0)}")
        return NetworkRule(entry, network=network, port=port)
    name = host.lower().rstrip(".")
    if not _NAME.match(name):
        raise ValueError(
            f"{text!r} is not a host name, `*.domain`, address or network (CIDR), "
            "with an optional `:port`"
        )
    suffix = name.startswith("*.")
    return NetworkRule(entry, name=name[2:] if suffix else name, suffix=suffix, port=port)


def _split_port(entry: str) -> tuple[str, int | None]:
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r}: write an IPv6 address with a port as `[::1]:8080`")
        return host, _port(entry, rest[1:]) if rest else None
    if entry.count(":") == 1:  # more than one: an IPv6 address without a port
        host, _, port = entry.partition(":")
        return host, _port(entry, port)
    return entry, None


def _port(entry: str, text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535")
    return int(text)


def _checked(entry: str) -> str:
    parse_rule(entry)
    return entry


Rule = Annotated[str, AfterValidator(_checked)]


class NetworkSettings(Strict):
    """Where requests the model or an uploaded image steers may go (web_fetch, an uploaded
    image's MCP `url` and endpoints). By default loopback, private, link-local (cloud
    metadata), carrier-grade NAT, multicast and unspecified addresses are refused."""

    allow: list[Rule] = Field(
        default_factory=list,
        description="Hosts, `*.domains`, addresses or CIDR networks, each with an optional "
        "`:port` (`[v6]:port`), reachable even when they are private or loopback.",
    )
    deny: list[Rule] = Field(
        default_factory=list,
        description="Hosts, `*.domains`, addresses or networks never reached; wins over `allow`.",
    )


def combine_network(*blocks: NetworkSettings | None) -> NetworkSettings | None:
    """The blocks' entries together: a project's or agent.yaml's `network` adds to the
    global one; an entry denied anywhere stays denied."""
    given = [block for block in blocks if block is not None]
    if not given:
        return None
    return NetworkSettings(
        allow=list(dict.fromkeys(e for b in given for e in b.allow)),
        deny=list(dict.fromkeys(e for b in given for e in b.deny)),
    )
