"""Tools the client runs (an AG-UI page's own tools, CopilotKit's frontend actions):
offered to the model like the agent's own, but a call to one is not run here. It ends
the run as a deferred call (pydantic-ai's external tools) for the client to run; the
result it sends back goes on with the turn (`Session.decide(..., output=...)`, then
`Session.resume()`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ExternalToolset


@dataclass(frozen=True)
class ClientTool:
    """A tool the client runs: its name, what it does, and its arguments' JSON schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)


def client_toolset(tools: Sequence[ClientTool]) -> ExternalToolset[Any]:
    defs = [
        ToolDefinition(
            name=t.name,
            description=t.description or None,
            parameters_json_schema=t.parameters or {"type": "object", "properties": {}},
            kind="external",
        )
        for t in tools
    ]
    return ExternalToolset(defs)
