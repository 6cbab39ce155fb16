"""What kind of address an outbound request may not reach by default, and why."""

from __future__ import annotations

import ipaddress

from holodeck.spec.models.network_settings import IpAddress

# Most specific first: 169.254.169.254 is named for what it is, not as link-local.
_REFUSED: tuple[tuple[str, str], ...] = (
    ("169.254.169.254/32", "a cloud metadata address"),
    ("fd00:ec2::254/128", "a cloud metadata address"),
    ("0.0.0.0/8", "an unspecified address"),
    ("::/128", "an unspecified address"),
    ("127.0.0.0/8", "a loopback address"),
    ("::1/128", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),
    ("fe80::/10", "a link-local address"),
    ("10.0.0.0/8", "a private address"),
    ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"),
    ("fc00::/7", "a private (unique-local) address"),
    ("fec0::/10", "a private (site-local) address"),
    ("100.64.0.0/10", "a carrier-grade NAT address"),
    ("224.0.0.0/4", "a multicast address"),
    ("ff00::/8", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),  # with the broadcast address 255.255.255.255
    ("::/96", "a reserved address"),  # IPv4-compatible IPv6, deprecated
)
_NETWORKS = tuple((ipaddress.ip_network(net), why) for net, why in _REFUSED)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(address: IpAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, 6to4, NAT64): the
    host it reaches is that one."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refused_kind(address: IpAddress) -> str | None:
    """ "a loopback address" and the like, when `address` is refused by default; None when
    it is a public address."""
    target = embedded_ipv4(address) or address
    plain = ipaddress.ip_address(str(target).split("%", 1)[0])  # without an IPv6 zone
    for network, why in _NETWORKS:
        if plain.version == network.version and plain in network:
            return why
    return None


def is_loopback(address: IpAddress) -> bool:
    target = embedded_ipv4(address) or address
    return target.is_loopback


def loopback_name(name: str) -> bool:
    """`name` (a host name or address, without a port or brackets) is this machine's own:
    `localhost` or a loopback address (also one embedded in IPv6)."""
    if name.lower() == "localhost":
        return True
    try:
        return is_loopback(ipaddress.ip_address(name))
    except ValueError:  # another name
        return False
