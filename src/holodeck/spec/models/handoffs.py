"""Handoffs: agents the conversation may be transferred to. agent.yaml lists them under
`handoffs:`; the model is offered one tool per entry, `transfer_to_<name>`, and the
target then answers the session until it hands back (`transfer_back_to_<agent>`)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, StringConstraints

from holodeck.spec.models.base import NonEmpty, Strict

TRANSFER_PREFIX = "transfer_to_"
BACK_PREFIX = "transfer_back_to_"
# the tool name `transfer_to_<name>` must stay within the 64 characters providers accept
HANDOFF_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,52}$"

HandoffName = Annotated[
    str,
    StringConstraints(pattern=HANDOFF_NAME_PATTERN),
    Field(description="The model sees tool `transfer_to_<name>`: letters, digits, `_`, `-`."),
]


class HandoffEntry(Strict):
    """One entry of agent.yaml's `handoffs:`: an agent that takes the conversation over."""

    name: HandoffName
    path: NonEmpty = Field(description="agent.yaml, image directory, or image .tar.gz.")
    description: str | None = Field(
        default=None, description="Shown to the model; default: the target's description."
    )


def transfer_tool(name: str) -> str:
    """The tool that hands the conversation to the handoff `name`."""
    return TRANSFER_PREFIX + name


def back_tool(agent_name: str) -> str:
    """The tool that returns the conversation to the agent named `agent_name` (any
    character a provider refuses in a tool name becomes `_`)."""
    return (BACK_PREFIX + re.sub(r"[^a-zA-Z0-9_-]", "_", agent_name))[:64]
