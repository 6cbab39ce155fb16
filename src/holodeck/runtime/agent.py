"""`Agent`: an AgentSpec made runnable. `run(turn)` streams typed events.

The loop itself is pydantic-ai's; this class adapts it: it builds the model and
tools from the spec, routes tool and sub-agent activity into one event stream,
keeps the conversation, and turns provider failures into messages a user can act on.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pydantic_ai
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import UsageLimits
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    UserContent,
)
from pydantic_ai.run import AgentRunResult, AgentRunResultEvent

from holodeck.errors import ConfigurationError
from holodeck.llm.errors import ProviderError, explain
from holodeck.llm.test_model import ExpectedCall, expecting
from holodeck.runtime.events import Event, FinalMessage, TextDelta, Usage
from holodeck.runtime.models import choose_model
from holodeck.runtime.options import DEFAULT_MAX_TOOL_ITERATIONS, RunOptions
from holodeck.runtime.toolsets import agent_toolsets
from holodeck.runtime.turn import CURRENT_TURN, Turn
from holodeck.spec.agent_spec import AgentSpec

if TYPE_CHECKING:
    from pydantic_ai.settings import ModelSettings

# pydantic-ai greets terminals with a banner; in chat or a test report it is noise
pydantic_ai.BANNER_ENABLED = False

OUTPUT_RETRIES = 2
SUPPORTED_OUTPUT = {"text"}


class TurnError(ConfigurationError):
    """A turn could not finish; the message says why and what to do."""


class InputRefused(TurnError):
    """The input has a modality the agent does not declare."""


@dataclass(frozen=True)
class Attachment:
    """A file given with a turn: an image or a document."""

    data: bytes
    media_type: str
    name: str = ""

    @classmethod
    def from_path(cls, path: Path) -> Attachment:
        import mimetypes

        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return cls(path.read_bytes(), media_type, path.name)

    @property
    def modality(self) -> str:
        kind = self.media_type.split("/", 1)[0]
        return kind if kind in ("image", "audio", "video") else "file"


class Agent:
    """A runnable agent. Keeps its conversation unless `interaction.conversational` is off."""

    def __init__(self, spec: AgentSpec, options: RunOptions | None = None) -> None:
        self.spec = spec
        self.options = with_cassette((options or RunOptions()).for_agent(spec), spec)
        unsupported = set(spec.interaction.output_modalities) - SUPPORTED_OUTPUT
        if unsupported:
            raise TurnError(
                f"{spec.name}: output modalities {', '.join(sorted(unsupported))} cannot be "
                "produced by this runtime; declare `output: [text]`"
            )
        execution = spec.execution
        native: list[Any] = []
        if spec.builtins:
            from holodeck.tools.builtins import builtin_capabilities

            native = list(builtin_capabilities(spec, self.options))
        self.model = choose_model(spec.model, self.options, execution, responses_api=bool(native))
        toolsets, extra_instructions = agent_toolsets(spec, self.options)
        self._toolsets = toolsets
        instructions = "\n\n".join(part for part in (spec.instructions, extra_instructions) if part)
        output_type: Any = str
        if spec.response_format is not None:
            from pydantic_ai import StructuredDict

            output_type = StructuredDict(spec.response_format, name="answer")
        self._agent: PydanticAgent[None, Any] = PydanticAgent(
            self.model.model,
            output_type=output_type,
            instructions=instructions or None,
            toolsets=toolsets,
            model_settings=cast("ModelSettings", self.model.settings) or None,
            retries={"output": OUTPUT_RETRIES} if spec.response_format else None,
            name=spec.name,
            capabilities=native or None,
        )
        iterations = self.options.max_tool_iterations or execution.max_tool_iterations
        self.max_tool_iterations = iterations or DEFAULT_MAX_TOOL_ITERATIONS
        if spec.response_format is not None:
            self._agent.output_validator(_schema_check(spec.response_format))
        self.history: list[ModelMessage] = []

    def reset(self) -> None:
        self.history = []

    def fork(self) -> Agent:
        """A new conversation with this agent, sharing its model and tools (and so its
        running servers); conversations may run concurrently."""
        twin = copy.copy(self)
        twin.history = []
        return twin

    async def aclose(self) -> None:
        """Stop what the agent keeps running between turns (its MCP servers).

        Idempotent; `async with Agent(spec) as agent:` calls it on exit. A server that is
        still needed afterwards starts again on the next turn.
        """
        closers: list[Any] = []
        for toolset in self._toolsets:
            toolset.apply(lambda t: closers.append(t) if hasattr(t, "aclose") else None)
        for toolset in closers:
            await toolset.aclose()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run(
        self,
        prompt: str,
        *,
        attachments: Sequence[Attachment] = (),
        expected_tools: Sequence[ExpectedCall] | None = None,
    ) -> AsyncIterator[Event]:
        """Stream one turn's events; the last is a `FinalMessage`.

        Closing the iterator early cancels the turn: the model call and pending tools
        stop, and the conversation stays as it was before the turn.
        """
        content = self._content(prompt, attachments)
        queue: asyncio.Queue[Event | _End] = asyncio.Queue()
        turn = Turn(queue)  # type: ignore[arg-type]

        async def produce() -> None:
            CURRENT_TURN.set(turn)
            try:
                with expecting(expected_tools):
                    result = await self._drive(content, turn, self.history)
                final = self._final(result, turn)
                if self.spec.interaction.conversational:
                    self.history = list(result.all_messages())
                if self.options.cassette is not None:
                    self.options.cassette.save()  # each turn: an interrupted run keeps its turns
                queue.put_nowait(final.usage)
                queue.put_nowait(final)
                queue.put_nowait(_End(None))
            except BaseException as exc:  # handed to the consumer, raised there
                queue.put_nowait(_End(exc))
                if isinstance(exc, asyncio.CancelledError):
                    raise

        task = asyncio.create_task(produce())
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise self._user_error(item.error) from None
                    return
                yield item
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def answer(self, prompt: str, **kwargs: Any) -> FinalMessage:
        """Run a turn and return only its final message."""
        final: FinalMessage | None = None
        async for event in self.run(prompt, **kwargs):
            if isinstance(event, FinalMessage):
                final = event
        assert final is not None
        return final

    async def run_nested(self, prompt: str, turn: Turn, usage: Any) -> FinalMessage:
        """Run as a sub-agent inside a parent's tool call: events go to the parent's stream."""
        token = CURRENT_TURN.set(turn)
        try:
            with expecting(None):  # a test case's expected tools are the parent's, not ours
                result = await self._drive(prompt, turn, [], usage=usage)
        except Exception as exc:
            raise self._user_error(exc) from None
        finally:
            CURRENT_TURN.reset(token)
        return self._final(result, turn)

    async def _drive(
        self,
        content: str | Sequence[UserContent],
        turn: Turn,
        history: list[ModelMessage],
        usage: Any = None,
    ) -> AgentRunResult[Any]:
        # each tool iteration is one model request; then one for the answer (plus its retries)
        retries = OUTPUT_RETRIES if self.spec.response_format is not None else 0
        limits = UsageLimits(request_limit=self.max_tool_iterations + 1 + retries)
        result: AgentRunResult[Any] | None = None
        async with self._agent.run_stream_events(
            content, message_history=history, usage_limits=limits, usage=usage
        ) as stream:
            async for event in stream:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    if event.part.content:
                        turn.emit(TextDelta(event.part.content, turn.agent))
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    if event.delta.content_delta:
                        turn.emit(TextDelta(event.delta.content_delta, turn.agent))
                elif isinstance(event, AgentRunResultEvent):
                    result = event.result
        assert result is not None
        return result

    def _final(self, result: AgentRunResult[Any], turn: Turn) -> FinalMessage:
        run_usage = result.usage
        usage = Usage(run_usage.input_tokens, run_usage.output_tokens, run_usage.requests)
        output = result.output
        if isinstance(output, str):
            return FinalMessage(output, None, usage, tuple(turn.calls))
        return FinalMessage(
            json.dumps(output, ensure_ascii=False), output, usage, tuple(turn.calls)
        )

    def _content(self, prompt: str, attachments: Sequence[Attachment]) -> str | list[UserContent]:
        if not attachments:
            return prompt
        allowed = set(self.spec.interaction.input_modalities)
        for attachment in attachments:
            if attachment.modality not in allowed:
                raise InputRefused(
                    f"{self.spec.name} does not accept {attachment.modality} input "
                    f"({attachment.name or attachment.media_type}); it declares "
                    f"{', '.join(sorted(allowed))}. Add `{attachment.modality}` to "
                    "interaction.modalities.input to allow it"
                )
        parts: list[UserContent] = [prompt]
        parts.extend(BinaryContent(a.data, media_type=a.media_type) for a in attachments)
        return parts

    def _user_error(self, exc: BaseException) -> BaseException:
        from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded

        if isinstance(exc, ProviderError | TurnError | asyncio.CancelledError):
            return exc
        explained = explain(exc, self.model.provider, self.model.name)
        if explained is not None:
            return explained
        if isinstance(exc, UsageLimitExceeded):
            return TurnError(
                f"{self.spec.name}: stopped after {self.max_tool_iterations} tool iterations "
                "without an answer; raise execution.max_tool_iterations if the task needs more"
            )
        if isinstance(exc, UnexpectedModelBehavior):
            return TurnError(f"{self.spec.name}: the model's output was unusable: {exc}")
        return exc


def with_cassette(options: RunOptions, spec: AgentSpec) -> RunOptions:
    """The options' cassette, or the one HOLODECK_RECORD / HOLODECK_REPLAY or agent.yaml's
    `execution.record` / `execution.replay` ask for."""
    if options.cassette is not None:
        return options
    from dataclasses import replace

    from holodeck.llm.cassette import Cassette

    cassette = Cassette.from_settings(spec.execution, spec.root, options.env)
    return options if cassette is None else replace(options, cassette=cassette)


def _schema_check(schema: dict[str, Any]) -> Any:
    """An output validator: an answer that does not fit `schema` goes back to the model."""
    import jsonschema
    from pydantic_ai import ModelRetry

    validator = jsonschema.validators.validator_for(schema)(schema)

    def check(output: Any) -> Any:
        problems = sorted(validator.iter_errors(output), key=lambda e: list(e.absolute_path))
        if problems:
            listed = "; ".join(
                f"{'/'.join(map(str, p.absolute_path)) or 'answer'}: {p.message}"
                for p in problems[:5]
            )
            raise ModelRetry(f"The answer does not fit the required JSON Schema: {listed}")
        return output

    return check


@dataclass(frozen=True)
class _End:
    error: BaseException | None
