"""An agent's A2A card: its name and description, one skill for each of its tools, skills
and sub-agents, streaming, the media types it takes and gives (its modalities), the
JSON-RPC endpoint it answers at (`/a2a/<name>`), and the bearer key it needs when the
server has keys. Built from the definition on each request:
it describes what is served now (an upload replaced, keys configured)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from holodeck._version import __version__
from holodeck.server._registry import ServedAgent

if TYPE_CHECKING:
    from a2a.types import AgentCard

BEARER = "bearer"

# A2A names content by media type; a modality is every type of its kind (an attachment's
# kind is its media type's first part, anything but image, audio and video being a file).
MEDIA_TYPES: dict[str, tuple[str, ...]] = {
    "text": ("text/plain",),
    "image": ("image/*",),
    "audio": ("audio/*",),
    "video": ("video/*",),
    "file": ("application/*",),
}


def media_types(modalities: tuple[str, ...]) -> list[str]:
    """The media types of `modalities`, in the order declared."""
    return [kind for modality in modalities for kind in MEDIA_TYPES[modality]]


def endpoint_path(name: str) -> str:
    """Where agent `name`'s JSON-RPC endpoint is, under the server's base URL."""
    return f"/a2a/{quote(name, safe='')}"


def skills_of(served: ServedAgent) -> list[tuple[str, str, str]]:
    """(id, name, description) of each thing the agent can do: its tools (an MCP server
    counts as one), its skills and sub-agents; the description says what it is when the
    definition says nothing."""
    spec = served.spec
    found: list[tuple[str, str, str]] = []
    for tool in spec.tools:
        if tool.type == "agent":
            continue  # listed with the sub-agents below
        described = getattr(tool, "description", None) or f"the {tool.type} tool {tool.name}"
        found.append((f"tool:{tool.name}", tool.name, described))
    for skill in spec.skills:
        found.append((f"skill:{skill.name}", skill.name, skill.description))
    for name, sub in spec.subagents.items():
        found.append((f"agent:{name}", name, sub.description or f"the sub-agent {name}"))
    for builtin in spec.builtins:
        found.append((f"tool:{builtin.name}", builtin.name, f"the built-in tool {builtin.name}"))
    return found


def agent_card(served: ServedAgent, base_url: str, keyed: bool) -> AgentCard:
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
        StringList,
    )
    from a2a.utils.constants import (
        PROTOCOL_VERSION_0_3,
        PROTOCOL_VERSION_CURRENT,
        TransportProtocol,
    )

    spec = served.spec
    card = AgentCard(
        name=spec.name,
        description=spec.description or f"The HoloDeck agent {spec.name}.",
        version=spec.prompt_version.version if spec.prompt_version else __version__,
        # one endpoint speaks both versions: clients of 0.3 read the card's `url`
        supported_interfaces=[
            AgentInterface(
                url=base_url.rstrip("/") + endpoint_path(spec.name),
                protocol_binding=TransportProtocol.JSONRPC,
                protocol_version=version,
            )
            for version in (PROTOCOL_VERSION_CURRENT, PROTOCOL_VERSION_0_3)
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=media_types(spec.interaction.input_modalities),
        default_output_modes=media_types(spec.interaction.output_modalities),
        skills=[
            AgentSkill(id=id_, name=name, description=described, tags=[id_.split(":")[0]])
            for id_, name, described in skills_of(served)
        ],
    )
    if keyed:
        card.security_schemes[BEARER].CopyFrom(
            SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer",
                    description="A key this server's operator gave you, sent as "
                    "`Authorization: Bearer <key>`",
                )
            )
        )
        card.security_requirements.append(
            SecurityRequirement(schemes={BEARER: StringList(list=[])})
        )
    return card


def card_json(card: AgentCard) -> dict[str, Any]:
    """The card as JSON: 1.0's fields, with 0.3's beside them (`url`, `security`...) for
    clients of 0.3. A security scheme is 1.0's form alone: the SDK merges 0.3's into the
    same entry, which 1.0's schema refuses (an entry is one of the forms)."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from google.protobuf.json_format import MessageToDict

    found = agent_card_to_dict(card)
    if card.security_schemes:
        found["securitySchemes"] = {
            name: MessageToDict(scheme) for name, scheme in card.security_schemes.items()
        }
    return found


def etag(card: dict[str, Any]) -> str:
    """A weak tag of the card's content, as the a2a-sdk's own card route gives."""
    body = json.dumps(card, sort_keys=True, separators=(",", ":"))
    return f'W/"{hashlib.sha256(body.encode()).hexdigest()}"'


def etag_matches(header: str, tag: str) -> bool:
    """Whether an If-None-Match header names `tag` (weakly compared, RFC 9110 13.1.2)."""
    tags = [candidate.strip().removeprefix("W/") for candidate in header.split(",")]
    return "*" in tags or tag.removeprefix("W/") in tags
