"""The page's own tools in an AG-UI run (`RunAgentInput.tools`, CopilotKit's frontend
actions) and the results the page sends back for their calls (the `tool` messages that
end the next run's `messages`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from holodeck.runtime import ClientTool
from holodeck.server._errors import ApiError

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput

    from holodeck.spec.models.agent_spec import AgentSpec


def page_tools_of(run_input: RunAgentInput, spec: AgentSpec) -> tuple[ClientTool, ...]:
    """The input's tools as tools the client runs; 422 for a name the agent's own tools
    take (the model could not tell which is meant) or one given twice."""
    own = {t.name for t in spec.tools}
    seen: set[str] = set()
    tools: list[ClientTool] = []
    for index, tool in enumerate(run_input.tools or ()):
        if tool.name in own or tool.name in seen:
            whose = "the agent's own tool" if tool.name in own else "another of the page's tools"
            raise ApiError(
                422,
                "invalid_request",
                f"tools.{index}.name: {tool.name!r} is the name of {whose}",
                hint="give each of the page's tools a name of its own",
            )
        seen.add(tool.name)
        parameters = tool.parameters if isinstance(tool.parameters, dict) else {}
        tools.append(ClientTool(tool.name, tool.description or "", parameters))
    return tuple(tools)


def tool_results_of(run_input: RunAgentInput) -> dict[str, Any] | None:
    """The results of the page's tool calls when `messages` ends with `tool` messages
    (call id -> result, JSON decoded when it is JSON); None when it ends otherwise."""
    results: dict[str, Any] = {}
    for message in reversed(run_input.messages):
        if message.role != "tool":
            break
        results[message.tool_call_id] = _result(message.content, message.error)
    return dict(reversed(results.items())) or None


def _result(content: Any, error: str | None) -> Any:
    if error:
        return {"error": error}
    if not isinstance(content, str):  # parts: their text
        content = "\n".join(getattr(part, "text", "") for part in content)
    try:
        return json.loads(content)
    except ValueError:
        return content  # plain text is the result as it is
