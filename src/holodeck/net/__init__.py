"""Outbound walls: every request an agent's behaviour can steer (`web_fetch`, files from
URLs, an uploaded image's MCP servers and endpoints) goes through one `OutboundPolicy`.

By default it refuses loopback, private, link-local (cloud metadata), carrier-grade NAT,
multicast, reserved and unspecified addresses, and any scheme but http(s). A host is
resolved once, every address it resolves to is checked, and the connection goes to the
checked address; each redirect hop is checked the same way. `network: {allow, deny}` in
config.yaml and agent.yaml changes that; what the operator configured (a local
definition's MCP `url`, model endpoint, vector databases) is reached as written.

    policy = OutboundPolicy.from_settings(spec.network)
    async with checked_client(policy, follow_redirects=True) as client:
        await client.get(url)  # OutboundBlocked when the host is refused
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports
from holodeck.net._addresses import loopback_name, refused_kind
from holodeck.net._endpoints import check_named_endpoints, named_endpoints
from holodeck.net._for_agent import policy_for
from holodeck.net._policy import OutboundBlocked, OutboundPolicy, Resolver, system_resolver

if TYPE_CHECKING:  # imported when first used: they load httpx2
    from holodeck.net._download import DownloadError as DownloadError
    from holodeck.net._download import download as download
    from holodeck.net._transport import CheckedTransport as CheckedTransport
    from holodeck.net._transport import checked_client as checked_client

_EXPORTS = {
    "CheckedTransport": "holodeck.net._transport",
    "checked_client": "holodeck.net._transport",
    "DownloadError": "holodeck.net._download",
    "download": "holodeck.net._download",
}

__all__ = [
    "OutboundBlocked",
    "OutboundPolicy",
    "Resolver",
    "check_named_endpoints",
    "loopback_name",
    "named_endpoints",
    "policy_for",
    "refused_kind",
    "system_resolver",
]
__all__ += sorted(_EXPORTS)  # the names imported when first used

__getattr__ = lazy_exports(__name__, _EXPORTS)
