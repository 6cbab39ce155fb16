"""The runtime: an `Agent` made from an `AgentSpec`, conversations with it (`Session`),
and the events its turns stream. The public names are re-exported by `holodeck`.

    >>> import asyncio
    >>> from holodeck import Agent, RunOptions, ToolCallFinished, load_agent
    >>> async def tools_called() -> list[str]:
    ...     agent = Agent(load_agent("examples/weather"), RunOptions(model="test"))
    ...     async with agent, agent.session() as session:
    ...         return [
    ...             event.name
    ...             async for event in session.run("Weather in Oslo? /call *")
    ...             if isinstance(event, ToolCallFinished)
    ...         ]
    >>> asyncio.run(tools_called())
    ['get_weather', 'get_forecast']

Only this package (through `holodeck.llm`) talks to model providers; the CLI, the
test runner and the server consume the same event stream, and take what they need of
the models' side (cassettes, the offline script, provider errors, rate limits) from
here. Its modules are private (`_agent`, `_session`, ...): use the names below, or
`holodeck`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports

if TYPE_CHECKING:
    from holodeck.errors import ApprovalPending as ApprovalPending
    from holodeck.errors import InputRefused as InputRefused
    from holodeck.errors import LifecycleError as LifecycleError
    from holodeck.errors import ModelOutputError as ModelOutputError
    from holodeck.errors import SessionError as SessionError
    from holodeck.llm.cassette import Cassette as Cassette
    from holodeck.llm.cassette import CassetteError as CassetteError
    from holodeck.llm.errors import ProviderError as ProviderError
    from holodeck.llm.model_modalities import modality_diagnostics as modality_diagnostics
    from holodeck.llm.offline_script import USER_TOOL as USER_TOOL
    from holodeck.llm.offline_script import ExpectedCall as ExpectedCall
    from holodeck.llm.offline_script import OfflineScript as OfflineScript
    from holodeck.llm.providers import override_settings as override_settings
    from holodeck.llm.rate_limit import RateLimiter as RateLimiter
    from holodeck.llm.tool_context import ToolContext as ToolContext
    from holodeck.runtime._agent import Agent as Agent
    from holodeck.runtime._approval import DENIED as DENIED
    from holodeck.runtime._approval import Decision as Decision
    from holodeck.runtime._attachments import Attachment as Attachment
    from holodeck.runtime._client_tools import ClientTool as ClientTool
    from holodeck.runtime._entries import Entry as Entry
    from holodeck.runtime._entries import Message as Message
    from holodeck.runtime._entries import entries_of as entries_of
    from holodeck.runtime._entries import messages_from as messages_from
    from holodeck.runtime._entries import messages_of as messages_of
    from holodeck.runtime._events import ApprovalRequired as ApprovalRequired
    from holodeck.runtime._events import Event as Event
    from holodeck.runtime._events import FinalMessage as FinalMessage
    from holodeck.runtime._events import GuardrailTriggered as GuardrailTriggered
    from holodeck.runtime._events import HandedOff as HandedOff
    from holodeck.runtime._events import HistoryCompacted as HistoryCompacted
    from holodeck.runtime._events import TextDelta as TextDelta
    from holodeck.runtime._events import ToolCallFinished as ToolCallFinished
    from holodeck.runtime._events import ToolCallStarted as ToolCallStarted
    from holodeck.runtime._events import Usage as Usage
    from holodeck.runtime._guard_checks import find_patterns as find_patterns
    from holodeck.runtime._guard_checks import find_pii as find_pii
    from holodeck.runtime._guard_checks import redact as redact
    from holodeck.runtime._history import starts_turn as starts_turn
    from holodeck.runtime._history import trim_history as trim_history
    from holodeck.runtime._hosting import Hosting as Hosting
    from holodeck.runtime._hosting import tool_context as tool_context
    from holodeck.runtime._limits import Used as Used
    from holodeck.runtime._limits import cap_reached as cap_reached
    from holodeck.runtime._models import choose_model as choose_model
    from holodeck.runtime._options import RunOptions as RunOptions
    from holodeck.runtime._run import Run as Run
    from holodeck.runtime._saved_session import SavedSession as SavedSession
    from holodeck.runtime._saved_session import read_saved_session as read_saved_session
    from holodeck.runtime._session import Session as Session
    from holodeck.runtime._spend import Spend as Spend
    from holodeck.runtime._spend import price as price
    from holodeck.runtime._stored_session import stored_session as stored_session
    from holodeck.runtime._structured import NoValidAnswer as NoValidAnswer
    from holodeck.runtime._structured import StructuredModel as StructuredModel
    from holodeck.runtime._turn_settings import TurnSettings as TurnSettings

# The modules are private; these are the package's names. Each is imported on first use,
# so taking the events does not load the model SDKs.
_EXPORTS = {
    "Agent": "holodeck.runtime._agent",
    "Attachment": "holodeck.runtime._attachments",
    "ClientTool": "holodeck.runtime._client_tools",
    "Entry": "holodeck.runtime._entries",
    "entries_of": "holodeck.runtime._entries",
    "Message": "holodeck.runtime._entries",
    "messages_from": "holodeck.runtime._entries",
    "messages_of": "holodeck.runtime._entries",
    "InputRefused": "holodeck.errors",
    "LifecycleError": "holodeck.errors",
    "ModelOutputError": "holodeck.errors",
    "Event": "holodeck.runtime._events",
    "ApprovalPending": "holodeck.errors",
    "ApprovalRequired": "holodeck.runtime._events",
    "Decision": "holodeck.runtime._approval",
    "DENIED": "holodeck.runtime._approval",
    "Used": "holodeck.runtime._limits",
    "cap_reached": "holodeck.runtime._limits",
    "FinalMessage": "holodeck.runtime._events",
    "GuardrailTriggered": "holodeck.runtime._events",
    "HandedOff": "holodeck.runtime._events",
    "HistoryCompacted": "holodeck.runtime._events",
    "TextDelta": "holodeck.runtime._events",
    "ToolCallFinished": "holodeck.runtime._events",
    "ToolCallStarted": "holodeck.runtime._events",
    "Usage": "holodeck.runtime._events",
    # the guardrails' personal-data and pattern finders, for redacting captured cases
    "find_pii": "holodeck.runtime._guard_checks",
    "find_patterns": "holodeck.runtime._guard_checks",
    "redact": "holodeck.runtime._guard_checks",
    "starts_turn": "holodeck.runtime._history",
    "Hosting": "holodeck.runtime._hosting",
    "tool_context": "holodeck.runtime._hosting",
    # made here by `tool_context`; defined in llm/ because tools/, search/ and llm/ read it
    "ToolContext": "holodeck.llm.tool_context",
    "RunOptions": "holodeck.runtime._options",
    "trim_history": "holodeck.runtime._history",
    "choose_model": "holodeck.runtime._models",
    "Run": "holodeck.runtime._run",
    "SavedSession": "holodeck.runtime._saved_session",
    "read_saved_session": "holodeck.runtime._saved_session",
    "Session": "holodeck.runtime._session",
    "SessionError": "holodeck.errors",
    "Spend": "holodeck.runtime._spend",
    "price": "holodeck.runtime._spend",
    "stored_session": "holodeck.runtime._stored_session",
    "NoValidAnswer": "holodeck.runtime._structured",
    "StructuredModel": "holodeck.runtime._structured",
    "TurnSettings": "holodeck.runtime._turn_settings",
    # The models' side the surfaces use, defined in llm/ (what the runtime builds models
    # with): the CLI, the test runner and the server take them from here, never from llm/.
    "Cassette": "holodeck.llm.cassette",
    "CassetteError": "holodeck.llm.cassette",
    "ExpectedCall": "holodeck.llm.offline_script",
    "OfflineScript": "holodeck.llm.offline_script",
    "USER_TOOL": "holodeck.llm.offline_script",
    "ProviderError": "holodeck.llm.errors",
    "RateLimiter": "holodeck.llm.rate_limit",
    "modality_diagnostics": "holodeck.llm.model_modalities",
    "override_settings": "holodeck.llm.providers",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
