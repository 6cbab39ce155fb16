"""The endpoints an uploaded definition names itself (model and embedding `endpoint`s,
vector database `url`s), checked against the outbound policy before its agent starts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from holodeck.net._policy import OutboundBlocked, OutboundPolicy, _host_port
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.vector_databases import DatabaseConnection


def named_endpoints(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(field path, URL) of every model `endpoint` and vector database `url` in `value`
    (an `AgentSpec`, its tools, evaluations and sub-agents, at any depth)."""
    if isinstance(value, ModelSettings) and value.endpoint:
        yield f"{where}.endpoint", value.endpoint
    if isinstance(value, DatabaseConnection) and value.url:
        yield f"{where}.url", value.url
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from named_endpoints(getattr(value, name), f"{where}.{name}".lstrip("."))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from named_endpoints(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from named_endpoints(item, f"{where}.{key}")


async def check_named_endpoints(value: Any, policy: OutboundPolicy) -> None:
    """`OutboundBlocked` naming the field when one of the endpoints `value` names is
    refused. A `${VAR}` left unexpanded (an upload's) points nowhere yet: not checked."""
    for where, url in named_endpoints(value):
        if "${" in url:
            continue
        try:
            policy.check_url(url)
            await policy.addresses(*_host_port(url))
        except OutboundBlocked as exc:
            reason = str(exc).removeprefix("blocked: ")
            raise OutboundBlocked(f"`{where}` {url}: {reason}") from None
        except OSError:  # does not resolve: the request itself will say so
            continue
