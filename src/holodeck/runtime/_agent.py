"""`Agent`: an AgentSpec made runnable, shared by all its conversations.

The loop itself is pydantic-ai's; this class adapts it: it builds the model and
tools from the spec, owns what they keep running (MCP servers, Node.js), routes tool and
sub-agent activity into one event stream, and turns provider failures into messages a
user can act on. A conversation (history, usage) is a `Session` made from an Agent.

It is long because one turn's order lives here in one place: input guardrails, the model
run (or the resumed, approved run), pending approvals, output guardrails, the cassette and
the final events. Each of those is its own module (`_guardrails`, `_approval`, `_limits`,
`harness/`); what stays here is the sequence, which split across files would be harder to
follow than to read whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import AgentRetries, UsageLimits
from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    UserContent,
)
from pydantic_ai.run import AgentRunResult, AgentRunResultEvent
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage

from holodeck.errors import (
    DefinitionError,
    InputRefused,
    LimitReached,
    ModelOutputError,
    ToolError,
)
from holodeck.llm.cassette import Cassette
from holodeck.llm.errors import ProviderError, explain
from holodeck.llm.first_request import SignallingModel
from holodeck.llm.model_modalities import PRODUCED_OUTPUT
from holodeck.net import check_named_endpoints
from holodeck.observability import telemetry_for
from holodeck.runtime._approval import Pending, needs_approval, with_approval
from holodeck.runtime._attachments import Attachment
from holodeck.runtime._client_tools import ClientTool, client_toolset
from holodeck.runtime._events import Event, FinalMessage, TextDelta, Usage, final_message
from holodeck.runtime._guardrails import GuardrailRunner, released, rewrite_answer
from holodeck.runtime._hosting import Hosting, tool_context
from holodeck.runtime._input_guard import InputBlocked, InputGuard
from holodeck.runtime._instrumented import instrumentation
from holodeck.runtime._lifecycle import Lifecycle
from holodeck.runtime._limits import TurnLimits, Used, turn_limits
from holodeck.runtime._models import choose_model
from holodeck.runtime._options import DEFAULT_MAX_TOOL_ITERATIONS, RunOptions
from holodeck.runtime._output_check import schema_output
from holodeck.runtime._scope import SessionScope
from holodeck.runtime._session import Session
from holodeck.runtime._turn import CURRENT_TURN, RunningTurn
from holodeck.runtime.harness import check_harnesses, choose_harness, harness_model
from holodeck.runtime.toolsets import agent_toolsets, builtin_capabilities
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.tools.python_modules import claim
from holodeck.tools.threads import TOOL_THREADS, ToolThreads

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic_ai.settings import ModelSettings

    from holodeck.observability import Telemetry
    from holodeck.runtime._events import ToolCallStarted
    from holodeck.runtime._session import Session
    from holodeck.runtime._turn_settings import TurnSettings

log = logging.getLogger("holodeck.runtime")

OUTPUT_RETRIES = 2


class Agent:
    """A runnable agent: its model, its tools, and the servers they keep running.

    An agent is unopened, open, then closed, as an httpx client is. Making one does no
    I/O; opening it reads its `.env` and config.yaml, builds its model and imports its
    tool code (`prepare()`), then its tools start (on `start()` or first use).
    `async with Agent(spec) as agent:` opens it on the caller's event loop and closes it on
    exit; so does a `Run` holding it, its usual owner. Used without either, it opens on
    first use and closes with `aclose()`. From its opening until it is closed, an agent
    belongs to one event loop: using it on another, or opening it while it is open, raises
    `LifecycleError`. Closed is final: using or opening it again raises `LifecycleError`
    (make a new one)."""

    # built when it opens (`prepare()`); reading one before that opens it
    options: RunOptions
    hosting: Hosting
    telemetry: Telemetry | None
    model: Any
    guardrails: GuardrailRunner
    threads: ToolThreads
    modules: Any
    max_tool_iterations: int

    def __init__(
        self,
        spec: AgentSpec,
        options: RunOptions | None = None,
        *,
        telemetry: Telemetry | None = None,
        hosting: Hosting | None = None,
    ) -> None:
        """`telemetry` traces the agent's turns; by default the agent's `observability:`
        block decides (off: None, and no OpenTelemetry SDK is loaded). `hosting` is what
        the surface running the agent wires in (HoloDeck's CLI and server set it)."""
        self.spec = spec
        self._given = (options, telemetry, hosting)
        self.lifecycle = Lifecycle(f"agent {spec.name}")  # its event loop, who opened it
        self._prepared = False
        self._holds_modules = False
        self._entered: list[AbstractToolset[Any]] | None = None  # toolsets it holds open

    def __getattr__(self, name: str) -> Any:
        # only for attributes not set yet: those `prepare()` builds open the agent
        if name in _PREPARED and not self.__dict__.get("_preparing"):
            self.prepare()
            return object.__getattribute__(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- lifecycle

    def prepare(self) -> None:
        """Build the agent now (reading `.env` and config.yaml, the model, its tools,
        importing their code), so that a definition's problems surface before any turn.
        Done once; the first use does it otherwise. Starts nothing."""
        self.lifecycle.refuse_if_ended()
        if self._prepared:
            return
        options, telemetry, hosting = self._given
        self._preparing = True
        # its Python files import into a space it holds until it closes
        self.modules = claim(self.spec.root)
        self._holds_modules = True
        try:
            self._build(self.spec, options, telemetry, hosting)
        except BaseException:
            self._release_modules()
            raise
        finally:
            self._preparing = False
        self._prepared = True

    def _build(
        self,
        spec: AgentSpec,
        options: RunOptions | None,
        telemetry: Telemetry | None,
        hosting: Hosting | None,
    ) -> None:
        self.spec = spec
        self.hosting = (hosting or Hosting()).for_agent(spec)
        completed = (options or RunOptions()).for_agent(spec, uploaded=self.hosting.uploaded)
        self.options = with_cassette(completed, spec)
        self.telemetry = telemetry or telemetry_for(spec, self.options.env)
        self._flushes = telemetry is None  # a caller's telemetry is the caller's to flush
        unsupported = set(spec.interaction.output_modalities) - PRODUCED_OUTPUT
        if unsupported:
            raise DefinitionError(
                f"{spec.name}: output modalities {', '.join(sorted(unsupported))} cannot be "
                "produced by this runtime; declare `output: [text]`"
            )
        execution = spec.execution
        native: list[Any] = []
        policy = spec.tools_policy
        if policy is not None and spec.builtins:  # a denied builtin is never offered
            kept = tuple(b for b in spec.builtins if policy.allows(b.name))
            spec = self.spec = spec.model_copy(update={"builtins": kept})
        if spec.builtins:
            native = list(
                builtin_capabilities(spec, tool_context(spec, self.options, self.hosting))
            )
        self.model = choose_model(
            spec.model, self.options, execution, responses_api=bool(native), hosting=self.hosting
        )
        tools = agent_toolsets(spec, self.options, self.hosting, type(self))
        self._needs_approval = needs_approval(spec)
        self._toolsets = [with_approval(t, self._needs_approval) for t in tools.toolsets]
        self._per_session = tools.per_session
        instructions = "\n\n".join(part for part in (spec.instructions, tools.instructions) if part)
        output_type: Any = str
        if spec.response_format is not None:
            output_type = schema_output(spec.response_format)
        self._output_type = output_type  # without DeferredToolRequests
        if self._needs_approval is not None:  # a run may end paused on calls to approve
            output_type = [output_type, DeferredToolRequests]
        model = self.model.model
        own_loop = self.options.own_loop
        check_harnesses(spec, self.options.model, own_loop=own_loop)
        if choose_harness(spec, self.options.model, own_loop=own_loop):
            model = harness_model(
                spec,
                self.options.model,
                self.options.env or {},
                instructions or None,
                lambda: list(self._toolsets),
                served=self.hosting.served,
            )
        if self.hosting.signals_first_request:
            model = SignallingModel(model, self.options.offline)
        self.guardrails = GuardrailRunner(
            spec.guardrails, spec.model, self.options, execution, self.hosting, self.telemetry
        )
        if self.guardrails.has("input"):  # every text the model is sent passes them first
            native.append(InputGuard(self.guardrails).capability())
        if tools.memory is not None:  # facts extracted after each turn, stored as checked
            native.extend(
                tools.memory.capabilities(spec, self.options, self.hosting, self.guardrails)
            )
        self._agent: PydanticAgent[None, Any] = PydanticAgent(
            model,
            output_type=output_type,
            instructions=instructions or None,
            toolsets=self._toolsets,
            model_settings=cast("ModelSettings", self.model.settings) or None,
            retries={"output": OUTPUT_RETRIES} if spec.response_format else None,
            name=spec.name,
            capabilities=native or None,
        )
        if self.telemetry is not None:  # pydantic-ai's GenAI spans and metrics
            self._agent.instrument = instrumentation(self.telemetry)
        iterations = self.options.max_tool_iterations or execution.max_tool_iterations
        self.max_tool_iterations = iterations or DEFAULT_MAX_TOOL_ITERATIONS
        self.threads = ToolThreads()  # its synchronous tools' calls

    async def start(self) -> None:
        """Start the servers shared by every conversation now, rather than on first use
        (a server that cannot start is reported once, and the agent keeps its other tools):
        the agent enters its toolsets, and leaves them when it closes. An uploaded
        definition's own endpoints must pass the outbound policy first."""
        self._in_use()
        await self._enter_tools()

    async def _enter_tools(self) -> None:
        if self._entered is not None:
            return
        if self.hosting.uploaded and self.hosting.outbound is not None:
            await check_named_endpoints(self.spec, self.hosting.outbound)
        entered: list[AbstractToolset[Any]] = []
        self._entered = entered
        try:
            await asyncio.gather(*(self._enter(t, entered) for t in self._toolsets))
        except BaseException:
            self._entered = None
            await _leave(entered, self.spec.name)
            raise

    @staticmethod
    async def _enter(toolset: AbstractToolset[Any], entered: list[AbstractToolset[Any]]) -> None:
        await toolset.__aenter__()
        entered.append(toolset)

    async def aclose(self) -> None:
        """Close the agent: stop what it keeps running between turns (MCP servers, Node.js,
        the sub-agents, tool threads) and let go of its modules. Idempotent; closed is
        final."""
        if self.lifecycle.ended:
            return
        if not self._prepared:  # nothing was built: nothing to stop
            self.lifecycle.closed()
            return
        self.lifecycle.closing()  # its servers can only be stopped on their own loop
        entered, self._entered = self._entered, None
        try:
            await _leave(entered or [], self.spec.name)
        finally:
            self.threads.close(self.spec.name)
            self._release_modules()
            self.lifecycle.closed()
        if self.telemetry is not None and self._flushes:  # bounded: a dead collector
            await self.telemetry.aflush()  # costs at most the flush limit

    def _in_use(self) -> None:
        """Opened (on first use, when nothing opened it) and on its event loop."""
        if not self._prepared:
            self.prepare()
        self.lifecycle.refuse_if_ended()
        self.lifecycle.claim()

    def _release_modules(self) -> None:
        """Let go of its Python modules (the last holder drops them); once."""
        if self._holds_modules:
            self._holds_modules = False
            self.modules.close()

    @property
    def tool_failures(self) -> dict[str, str]:
        """Each tool that could not start and is unavailable now (a search tool whose
        source or store failed) -> why. The agent answers without it."""
        found: dict[str, str] = {}
        for toolset in self._toolsets:
            toolset.apply(lambda t: found.update(t.failures()) if hasattr(t, "failures") else None)
        return found

    async def __aenter__(self) -> Agent:
        self.lifecycle.hold(self)
        try:
            await self.start()
        except BaseException:  # what started before the failure stops
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.aclose()
        finally:
            self.lifecycle.released(self)

    # -- conversations

    def session(self, session_id: str | None = None, *, max_messages: int | None = None) -> Session:
        """A new conversation with this agent; `max_messages` defaults to the agent's
        `memory.max_messages`."""

        return Session(self, session_id, max_messages=max_messages)

    @property
    def has_session_tools(self) -> bool:
        """Whether each conversation gets servers of its own (`scope: session`)."""
        return self._per_session is not None

    def session_toolsets(
        self, session_id: str | None = None, workspace: Path | None = None
    ) -> list[AbstractToolset[Any]]:
        """New per-session toolsets, for one conversation (`SessionScope` owns them)."""
        if self._per_session is None:
            return []
        made = self._per_session(session_id, workspace)
        return [with_approval(t, self._needs_approval) for t in made]

    async def run(
        self,
        prompt: str,
        *,
        attachments: Sequence[Attachment] = (),
    ) -> AsyncGenerator[Event, None]:
        """Stream the events of one turn that stands alone (nothing remembers it); the
        last is a `FinalMessage`. A conversation is a `Session`: `agent.session()`."""
        scope = SessionScope()
        turn = self.stream_turn(prompt, attachments=attachments, scope=scope)
        try:
            async with contextlib.aclosing(turn) as events:  # closing ends the turn now
                async for event in events:
                    yield event
        finally:
            await scope.aclose()

    async def stream_turn(
        self,
        prompt: str | None,
        *,
        history: Sequence[ModelMessage] = (),
        attachments: Sequence[Attachment] = (),
        scope: SessionScope,
        on_result: Callable[[AgentRunResult[Any], FinalMessage], None] | None = None,
        stream_text: bool = True,
        running: dict[str, ToolCallStarted] | None = None,
        used: Mapping[str, Used] | None = None,
        resume: Pending | None = None,
        client_tools: Sequence[ClientTool] = (),
        settings: TurnSettings | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Stream one turn after `history`, or (`resume`, with `prompt` None) the rest of
        a paused turn once its calls are decided; `on_result` sees the outcome before the
        final events are yielded (the turn's messages are `result.all_messages()`).
        `stream_text=False` asks the model for whole responses (no `TextDelta` events,
        less work per request): for callers that only read the final message.
        `running` is kept up to date with the calls started and not finished yet (its
        reader may not have taken their `ToolCallStarted` when the turn is cancelled).
        `used` is what the session ("session") and the API key's day ("key_daily") have
        used so far: their caps bind the turn too (`LimitReached` before it starts when
        one is reached already). `settings` are the turn's own model settings and answer
        shape (`InputRefused` when the model cannot take one).

        Closing the iterator early cancels the turn: the model call and pending tools
        stop, and `on_result` is not called.
        """
        self._in_use()
        if settings is not None:
            settings.check(self)
        content = None if prompt is None else self._content(prompt, attachments)
        requests = self._iteration_requests
        if settings is not None and settings.schema is not None and not self.spec.response_format:
            requests += OUTPUT_RETRIES  # answers that do not fit go back to the model
        limits = turn_limits(self.spec.limits, requests, used)
        queue: asyncio.Queue[Event | _End] = asyncio.Queue()
        turn = RunningTurn(
            queue,  # type: ignore[arg-type]
            scope=scope,
            stream_text=stream_text,
            telemetry=self.telemetry,
            running=running if running is not None else {},
            client_tools=tuple(client_tools),
            settings=settings,
        )

        guards = self.guardrails
        withholds = guards.has("output")  # the answer is shown once its checks pass

        async def produce() -> None:
            CURRENT_TURN.set(turn)
            TOOL_THREADS.set(self.threads)
            try:
                await self._enter_tools()  # first use: its servers stay up until it closes
                before, deferred = list(history), None
                if resume is not None:
                    resume.report_denied(turn)
                    before, deferred = list(resume.messages), resume.results()
                try:
                    result = await self._drive(
                        content, turn, before, limits=limits, deferred=deferred
                    )
                except InputBlocked as blocked:  # no model request; the session keeps nothing
                    if stream_text:
                        queue.put_nowait(TextDelta(blocked.message))
                    refused = FinalMessage(blocked.message)
                    queue.put_nowait(refused.usage)
                    queue.put_nowait(refused)
                    queue.put_nowait(_End(None))
                    return
                final = self._final(result, turn)
                for call in final.pending:  # the turn pauses on them
                    queue.put_nowait(call)
                if withholds and not final.pending:
                    checked = await guards.check("output", final.text, queue.put_nowait)
                    if checked.text != final.text:
                        rewrite_answer(result, checked.text)
                        final = replace(final, text=checked.text, output=None)
                if on_result is not None:
                    on_result(result, final)
                if self.options.cassette is not None:  # an interrupted run keeps its turns
                    await self.options.cassette.asave()
                queue.put_nowait(final.usage)
                queue.put_nowait(final)
                queue.put_nowait(_End(None))
            except BaseException as exc:  # handed to the consumer, raised there
                queue.put_nowait(_End(exc))
                if isinstance(exc, asyncio.CancelledError):
                    raise

        task = asyncio.create_task(produce())
        withheld: list[TextDelta] = []
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise self._user_error(item.error) from None
                    return
                if withholds and isinstance(item, TextDelta) and not item.agent:
                    withheld.append(item)
                    continue
                if withholds and isinstance(item, FinalMessage):
                    for delta in released(withheld, item.text, stream_text):
                        yield delta
                yield item
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def answer(self, prompt: str, **kwargs: Any) -> FinalMessage:
        """Run a turn that stands alone and return only its final message."""
        return await final_message(self.run(prompt, **kwargs))

    async def run_nested(self, prompt: str, turn: RunningTurn, usage: Any) -> FinalMessage:
        """Run as a sub-agent inside a parent's tool call: events go to the parent's stream."""
        self._in_use()
        guards = self.guardrails
        if guards.has("output"):  # its text is not streamed before its checks pass
            turn = replace(turn, stream_text=False)
        await self._enter_tools()
        token = CURRENT_TURN.set(turn)
        try:
            try:  # a sub-agent's own guardrails hold when it is a tool
                result = await self._drive(prompt, turn, [], usage=usage)
            except InputBlocked as blocked:
                return FinalMessage(blocked.message)
            if isinstance(result.output, DeferredToolRequests):
                raise ToolError(
                    f"{self.spec.name}: a sub-agent's tool asked for approval, which only the "
                    "top agent's tools can; require approval of the sub-agent itself"
                )
            final = self._final(result, turn)
            if guards.has("output"):
                checked = await guards.check("output", final.text, turn.emit, agent=turn.agent)
                if checked.text != final.text:
                    final = replace(final, text=checked.text, output=None)
        except Exception as exc:
            raise self._user_error(exc) from None
        finally:
            CURRENT_TURN.reset(token)
        return final

    @property
    def loop_model(self) -> Any:
        """The pydantic-ai model the agent's loop calls (wrappers included)."""
        return self._agent.model

    @property
    def most_turn_requests(self) -> int:
        """The most model requests one turn may make (its tool-iteration limit)."""
        return self._iteration_requests

    @property
    def _iteration_requests(self) -> int:
        # each tool iteration is one model request; then one for the answer (plus its retries)
        retries = OUTPUT_RETRIES if self.spec.response_format is not None else 0
        return self.max_tool_iterations + 1 + retries

    async def _drive(
        self,
        content: str | Sequence[UserContent] | None,
        turn: RunningTurn,
        history: list[ModelMessage],
        usage: Any = None,
        limits: TurnLimits | None = None,
        deferred: DeferredToolResults | None = None,
    ) -> AgentRunResult[Any]:
        """Run the turn under `limits` (default: the agent's own caps); a cap that stops
        it is raised as `LimitReached`, carrying what the turn used (`spent`)."""
        limits = limits or turn_limits(self.spec.limits, self._iteration_requests)
        counted = usage if usage is not None else RunUsage()
        try:
            return await self._run(content, turn, history, counted, limits.usage_limits, deferred)
        except UsageLimitExceeded as exc:
            reached = limits.reached(exc)
            if reached is None:
                raise
            reached.spent = counted
            raise reached from None

    async def _run(
        self,
        content: str | Sequence[UserContent] | None,
        turn: RunningTurn,
        history: list[ModelMessage],
        usage: RunUsage,
        limits: UsageLimits,
        deferred: DeferredToolResults | None = None,
    ) -> AgentRunResult[Any]:
        result: AgentRunResult[Any] | None = None
        own = await turn.scope.toolsets_for(self) if turn.scope is not None else []
        asked = turn.settings if not turn.agent else None  # sub-agents keep their own
        output_type: Any = asked.output_type() if asked is not None else None  # None: the agent's
        pauses = self._needs_approval is not None
        if turn.client_tools and not turn.agent:  # a call to one ends the run, deferred
            own = [*own, client_toolset(turn.client_tools)]
            pauses = True
        if pauses and (output_type is not None or turn.client_tools):
            output_type = [output_type or self._output_type, DeferredToolRequests]
        run_settings = asked.model_settings() if asked is not None else None
        retries: AgentRetries | None = None
        if asked is not None and asked.schema is not None:
            retries = {"output": OUTPUT_RETRIES}
        if not turn.stream_text:  # nobody shows the answer as it comes: one response each
            return await self._agent.run(
                content,
                message_history=history,
                usage_limits=limits,
                usage=usage,
                toolsets=own or None,
                deferred_tool_results=deferred,
                output_type=output_type,
                model_settings=run_settings,
                retries=retries,
            )
        async with self._agent.run_stream_events(
            content,
            message_history=history,
            usage_limits=limits,
            usage=usage,
            toolsets=own or None,
            deferred_tool_results=deferred,
            output_type=output_type,
            model_settings=run_settings,
            retries=retries,
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

    def _final(self, result: AgentRunResult[Any], turn: RunningTurn) -> FinalMessage:
        run_usage = result.usage
        usage = Usage(run_usage.input_tokens, run_usage.output_tokens, run_usage.requests)
        output = result.output
        if isinstance(output, DeferredToolRequests):  # paused: no answer yet
            pending = Pending.of(result.all_messages(), output).calls
            return FinalMessage("", None, usage, tuple(turn.calls), "", pending)
        responses = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
        answered = (responses[-1].model_name or "") if responses else ""  # a fallback's, too
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        structured = None if isinstance(output, str) else output
        return FinalMessage(text, structured, usage, tuple(turn.calls), answered)

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
        if isinstance(
            exc, ProviderError | ModelOutputError | LimitReached | asyncio.CancelledError
        ):
            return exc
        explained = explain(exc, self.model.provider, self.model.name)
        if explained is not None:
            return explained
        if isinstance(exc, UsageLimitExceeded):
            return ModelOutputError(
                f"{self.spec.name}: stopped after {self.max_tool_iterations} tool iterations "
                "without an answer; raise execution.max_tool_iterations if the task needs more"
            )
        if isinstance(exc, UnexpectedModelBehavior):
            return ModelOutputError(f"{self.spec.name}: the model's output was unusable: {exc}")
        return exc


def with_cassette(options: RunOptions, spec: AgentSpec) -> RunOptions:
    """The options' cassette, or the one HOLODECK_RECORD / HOLODECK_REPLAY or agent.yaml's
    `execution.record` / `execution.replay` ask for."""
    if options.cassette is not None:
        return options

    cassette = Cassette.from_settings(spec.execution, spec.root, options.env)
    return options if cassette is None else replace(options, cassette=cassette)


async def _leave(toolsets: list[AbstractToolset[Any]], name: str) -> None:
    """Leave each toolset; one that fails to stop must not keep the others running."""
    results = await asyncio.gather(
        *(t.__aexit__(None, None, None) for t in toolsets), return_exceptions=True
    )
    for result in results:
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, Exception):
            log.warning("%s: a tool server did not stop cleanly: %s", name, result)


# what `prepare()` builds (see `Agent.__getattr__`)
_PREPARED = frozenset(
    {
        "options",
        "hosting",
        "telemetry",
        "model",
        "guardrails",
        "threads",
        "modules",
        "max_tool_iterations",
        "_toolsets",
        "_per_session",
        "_needs_approval",
        "_output_type",
        "_agent",
        "_flushes",
    }
)


@dataclass(frozen=True)
class _End:
    error: BaseException | None
