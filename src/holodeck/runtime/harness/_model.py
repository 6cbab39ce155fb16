"""The Claude Agent SDK harness as a pydantic-ai model: one request is one CLI turn.

The CLI's text streams as the response's text; its own tool calls (shell, files, Task
sub-agents) are reported into the HoloDeck turn as they start and finish; HoloDeck's
tools run here through the in-process MCP server. The CLI's session id is kept in the
response (`provider_details`), so the next turn of the conversation resumes it, from
the same or another process (the CLI keeps its transcripts under .holodeck/claude/)."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RequestUsage, RunUsage

from holodeck.errors import ModelOutputError
from holodeck.runtime._turn import CURRENT_TURN, TURN_OBSERVER, RunningTurn
from holodeck.runtime.harness._bridge import tools_server
from holodeck.runtime.harness._sdk_options import SERVER_NAME, HarnessPlan

SESSION_KEY = "claude_session_id"
LENGTH_KEY = "claude_history_length"  # the conversation's messages when it was kept
_OURS = f"mcp__{SERVER_NAME}__"
_SUBAGENT_TOOLS = frozenset({"Task", "Agent"})


class ClaudeHarnessModel(Model):
    def __init__(self, plan: HarnessPlan, toolsets: Callable[[], list[AbstractToolset[Any]]]):
        super().__init__()
        self.plan = plan
        self._toolsets = toolsets

    @property
    def model_name(self) -> str:
        return self.plan.model

    @property
    def system(self) -> str:
        return "anthropic"

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        async with self.request_stream(messages, model_settings, model_request_parameters) as s:
            async for _ in s:
                pass
        return s.get()

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        prompt, session, resume = conversation(messages)
        if resume and not self.plan.has_transcript(session):  # kept by another machine
            prompt, session, resume = conversation(messages, whole=False)
        ctx = run_context or RunContext(deps=None, model=self, usage=RunUsage(), prompt=prompt)
        server, names = await tools_server(self._toolsets(), ctx)
        options = self.plan.options(session, resume, server, names)
        stream = HarnessStream(
            model_request_parameters=model_request_parameters,
            _model_name=self.plan.model,
            _messages=_cli_turn(options, prompt),
        )
        stream.provider_details = {SESSION_KEY: session, LENGTH_KEY: len(messages) + 1}
        yield stream


def conversation(messages: Sequence[ModelMessage], *, whole: bool = True) -> tuple[str, str, bool]:
    """The prompt for the CLI, its session id, and whether to resume that session. The
    CLI's own session resumes when HoloDeck's history is whole (nothing trimmed by
    `memory.max_messages`); otherwise (or with `whole=False`: the CLI's transcript is not
    here) a new session starts with the kept messages."""
    *prior, last = messages
    prompt = _user_text(last)
    for message in reversed(prior):
        details = message.provider_details if isinstance(message, ModelResponse) else None
        if details and SESSION_KEY in details:
            if whole and details.get(LENGTH_KEY) == len(prior):
                return prompt, str(details[SESSION_KEY]), True
            break
    if prior:
        prompt = f"The conversation so far:\n{_transcript(prior)}\n\nNow: {prompt}"
    return prompt, str(uuid.uuid4()), False


def _user_text(message: ModelMessage) -> str:
    if not isinstance(message, ModelRequest):
        return ""
    texts = [
        p.content
        if isinstance(p.content, str)
        else " ".join(str(c) for c in p.content if isinstance(c, str))
        for p in message.parts
        if isinstance(p, UserPromptPart)
    ]
    return "\n".join(texts)


def _transcript(messages: Sequence[ModelMessage]) -> str:
    lines = []
    for message in messages:
        if isinstance(message, ModelRequest):
            text = _user_text(message)
            lines += [f"User: {text}"] if text else []
        else:
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            lines += [f"Assistant: {text}"] if text else []
    return "\n".join(lines)


async def _cli_turn(options: Any, prompt: str) -> AsyncIterator[Any]:
    from claude_agent_sdk import ClaudeSDKClient, CLIConnectionError, ProcessError

    try:
        async with ClaudeSDKClient(options) as client:
            await client.query(prompt)
            async for message in client.receive_response():
                yield message
    except (CLIConnectionError, ProcessError) as exc:
        raise ModelOutputError(f"the Claude Code CLI failed: {exc}") from None


@dataclass
class HarnessStream(StreamedResponse):
    _model_name: str = ""
    _messages: AsyncIterator[Any] | None = None
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    _calls: dict[str, tuple[str, dict[str, Any], float, RunningTurn | None]] = field(
        default_factory=dict
    )
    _subagents: dict[str, RunningTurn] = field(default_factory=dict)  # Task call id -> its turn
    _message_id: str = ""
    _streamed: bool = False

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        from claude_agent_sdk import AssistantMessage, ResultMessage, StreamEvent, UserMessage

        assert self._messages is not None
        async for message in self._messages:
            if isinstance(message, StreamEvent) and message.parent_tool_use_id is None:
                for event in self._stream_event(message.event):
                    yield event
            elif isinstance(message, AssistantMessage):
                self._tool_uses(message)
            elif isinstance(message, UserMessage):
                self._tool_results(message)
            elif isinstance(message, ResultMessage):
                for event in self._result(message):
                    yield event

    def _stream_event(self, event: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        if event.get("type") == "message_start":
            self._message_id = str(event.get("message", {}).get("id", ""))
        delta = event.get("delta") or {}
        if event.get("type") != "content_block_delta" or delta.get("type") != "text_delta":
            return []
        self._streamed = True
        part = f"{self._message_id}:{event.get('index', 0)}"  # each text block its own part
        return list(
            self._parts_manager.handle_text_delta(vendor_part_id=part, content=delta["text"])
        )

    def _tool_uses(self, message: Any) -> None:
        from claude_agent_sdk import ToolUseBlock

        for block in message.content:
            if not isinstance(block, ToolUseBlock) or block.name.startswith(_OURS):
                continue  # HoloDeck's own tools report themselves when they run
            turn = self._turn_of(message.parent_tool_use_id)
            self._calls[block.id] = (block.name, dict(block.input), time.perf_counter(), turn)
            _observe(turn, TURN_OBSERVER.started, block.id, block.name, dict(block.input))
            if block.name in _SUBAGENT_TOOLS and turn is not None:
                agent = str(block.input.get("subagent_type") or "agent")
                self._subagents[block.id] = turn.nested(agent, block.id)

    def _tool_results(self, message: Any) -> None:
        from claude_agent_sdk import ToolResultBlock

        if isinstance(message.content, str):
            return
        for block in message.content:
            if not isinstance(block, ToolResultBlock) or block.tool_use_id not in self._calls:
                continue
            name, args, started, turn = self._calls.pop(block.tool_use_id)
            result = _text(block.content)
            error = result or "refused" if block.is_error else None
            ms = (time.perf_counter() - started) * 1000
            output = None if error else result
            _observe(turn, TURN_OBSERVER.finished, block.tool_use_id, name, args, output, error, ms)

    def _turn_of(self, parent: str | None) -> RunningTurn | None:
        if parent is None:
            return CURRENT_TURN.get()
        return self._subagents.get(parent) or CURRENT_TURN.get()

    def _result(self, message: Any) -> list[ModelResponseStreamEvent]:
        usage = message.usage or {}
        self._usage = RequestUsage(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
        )
        if self.provider_details is not None:
            self.provider_details = {
                **self.provider_details,
                "claude_cost_usd": message.total_cost_usd,
                "claude_turns": message.num_turns,
            }
        if message.is_error:
            status = getattr(message, "api_error_status", None)
            problem = "; ".join(message.errors or []) or message.result or message.subtype
            if status:
                raise ModelHTTPError(int(status), self._model_name, problem)
            raise ModelOutputError(f"the Claude harness stopped: {problem} ({message.subtype})")
        if self._streamed or not message.result:
            return []
        return list(
            self._parts_manager.handle_text_delta(vendor_part_id="result", content=message.result)
        )

    async def close_stream(self) -> None:
        if self._messages is not None and hasattr(self._messages, "aclose"):
            await self._messages.aclose()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return "anthropic"

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


def _observe(turn: RunningTurn | None, report: Callable[..., None], *args: Any) -> None:
    """Report into `turn` (a sub-agent's nested turn, or the top one)."""
    if turn is None:
        return
    token = CURRENT_TURN.set(turn)
    try:
        report(*args)
    finally:
        CURRENT_TURN.reset(token)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
