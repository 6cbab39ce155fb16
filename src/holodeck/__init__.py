"""HoloDeck: define an AI agent in YAML, test it, chat with it, serve it.

The Python API, for embedding an agent in a program:

    >>> import asyncio
    >>> from holodeck import Agent, RunOptions, load_agent
    >>> spec = load_agent("examples/weather")  # agent.yaml, an image directory or .tar.gz
    >>> async def main() -> list[str]:
    ...     async with Agent(spec, RunOptions(model="test")) as agent:  # starts its servers
    ...         async with agent.session() as session:  # one conversation
    ...             final = await session.answer("What's the weather in Oslo? /call get_weather")
    ...             return [(call.name, call.args["city"]) for call in final.tool_calls]
    >>> asyncio.run(main())  # the offline test model calls what `/call` names, then answers
    [('get_weather', 'Oslo')]

`session.run(...)` streams the turn's events instead (`TextDelta`, `ToolCallStarted`,
`ToolCallFinished`, `Usage`, `FinalMessage`). Names are imported on first use, so
`import holodeck` stays cheap (the CLI starts without loading any model SDK).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports
from holodeck._version import __version__
from holodeck.errors import ConfigurationError, ExecutionError, HoloDeckError

if TYPE_CHECKING:
    from holodeck.config.loader import load_agent as load_agent
    from holodeck.errors import LifecycleError as LifecycleError
    from holodeck.errors import ModelOutputError as ModelOutputError
    from holodeck.errors import SessionError as SessionError
    from holodeck.llm.errors import ProviderError as ProviderError
    from holodeck.runtime import Agent as Agent
    from holodeck.runtime import ApprovalRequired as ApprovalRequired
    from holodeck.runtime import Attachment as Attachment
    from holodeck.runtime import Event as Event
    from holodeck.runtime import FinalMessage as FinalMessage
    from holodeck.runtime import GuardrailTriggered as GuardrailTriggered
    from holodeck.runtime import HandedOff as HandedOff
    from holodeck.runtime import HistoryCompacted as HistoryCompacted
    from holodeck.runtime import Run as Run
    from holodeck.runtime import RunOptions as RunOptions
    from holodeck.runtime import Session as Session
    from holodeck.runtime import TextDelta as TextDelta
    from holodeck.runtime import ToolCallFinished as ToolCallFinished
    from holodeck.runtime import ToolCallStarted as ToolCallStarted
    from holodeck.runtime import Usage as Usage
    from holodeck.runtime import stored_session as stored_session
    from holodeck.sessions import MemorySessionStore as MemorySessionStore
    from holodeck.sessions import PostgresSessionStore as PostgresSessionStore
    from holodeck.sessions import RedisSessionStore as RedisSessionStore
    from holodeck.sessions import SessionBusy as SessionBusy
    from holodeck.sessions import SessionStore as SessionStore
    from holodeck.sessions import SqliteSessionStore as SqliteSessionStore
    from holodeck.spec.diagnostics import SpecError as SpecError
    from holodeck.spec.models.agent_spec import AgentSpec as AgentSpec

_EXPORTS = {
    "load_agent": "holodeck.config.loader",
    "AgentSpec": "holodeck.spec.models.agent_spec",
    "SpecError": "holodeck.spec.diagnostics",
    "RunOptions": "holodeck.runtime",
    "ProviderError": "holodeck.llm.errors",
    "Agent": "holodeck.runtime",
    "Attachment": "holodeck.runtime",
    "ModelOutputError": "holodeck.errors",
    "LifecycleError": "holodeck.errors",
    "Run": "holodeck.runtime",
    "Session": "holodeck.runtime",
    "SessionError": "holodeck.errors",
    "stored_session": "holodeck.runtime",
    "Event": "holodeck.runtime",
    "TextDelta": "holodeck.runtime",
    "ToolCallStarted": "holodeck.runtime",
    "ApprovalRequired": "holodeck.runtime",
    "ToolCallFinished": "holodeck.runtime",
    "Usage": "holodeck.runtime",
    "FinalMessage": "holodeck.runtime",
    "GuardrailTriggered": "holodeck.runtime",
    "HandedOff": "holodeck.runtime",
    "HistoryCompacted": "holodeck.runtime",
    "SessionStore": "holodeck.sessions",
    "SessionBusy": "holodeck.sessions",
    "MemorySessionStore": "holodeck.sessions",
    "SqliteSessionStore": "holodeck.sessions",
    "RedisSessionStore": "holodeck.sessions",
    "PostgresSessionStore": "holodeck.sessions",
}

__all__ = [
    "ConfigurationError",
    "ExecutionError",
    "HoloDeckError",
    "__version__",
    *sorted(_EXPORTS),
]


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(__all__)
