"""`type: a2a` tools as the model sees them: one `message` in, the remote agent's answer
out (the A2A client is `holodeck.tools.a2a`). Each conversation here keeps its own
conversation with the remote agent, for as long as the conversation's scope lives."""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.tools import ToolDefinition

from holodeck.net import OutboundPolicy
from holodeck.runtime._scope import SessionScope
from holodeck.runtime._turn import CURRENT_TURN
from holodeck.spec.models.tools import A2ATool
from holodeck.tools.a2a import A2ACallError, Conversation, RemoteAgent


def a2a_tool(tool: A2ATool, policy: OutboundPolicy) -> Tool[Any]:
    """The tool calling the remote agent of `tool`, through `policy`."""
    remote = RemoteAgent(tool, policy)
    # a session's conversation with the remote, dropped with the session's scope
    conversations: weakref.WeakKeyDictionary[SessionScope, Conversation] = (
        weakref.WeakKeyDictionary()
    )

    def conversation() -> Conversation | None:
        turn = CURRENT_TURN.get()
        if turn is None or turn.scope is None:
            return None  # a call outside any conversation: a new one at the remote
        return conversations.setdefault(turn.scope, Conversation())

    async def ask(message: str) -> str:
        """Ask the remote agent; its answer is returned.

        Args:
            message: Everything the remote agent needs: the question or task, with its
                context (it sees nothing else of this conversation).
        """
        try:
            from a2a.client import ClientFactory  # noqa: F401
        except ImportError:
            raise A2ACallError(
                f"{tool.name}: A2A tools need the a2a-sdk package: "
                "pip install 'holodeck-agents[a2a]'"
            ) from None
        return await remote.ask(message, conversation())

    async def prepare(ctx: RunContext[Any], definition: ToolDefinition) -> ToolDefinition:
        if tool.description is not None:
            return definition
        described = await remote.describe()
        if described is None:
            return definition
        return _replace_description(definition, described)

    fallback = f"Ask the remote agent at {tool.url} (A2A); it answers in text."
    return Tool(
        ask,
        name=tool.name,
        description=tool.description or fallback,
        takes_ctx=False,
        docstring_format="google",
        prepare=prepare,
    )


def _replace_description(definition: ToolDefinition, description: str) -> ToolDefinition:
    return replace(definition, description=description)
