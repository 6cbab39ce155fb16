"""`Agent`: an AgentSpec made runnable, shared by all its conversations.

The loop itself is pydantic-ai's; this class builds it from the spec (the model, the
tools, guardrails, approval) and owns what the tools keep running (MCP servers, Node.js,
tool threads) from its opening to its closing. A conversation (history, usage) is a
`Session` made from an Agent; the session's `TurnRunner` runs its turns
(`_turn_runner.py`) through the model loop (`_agent_loop.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.tools import DeferredToolRequests
from pydantic_ai.toolsets import AbstractToolset

from holodeck.errors import DefinitionError
from holodeck.llm.cassette import Cassette
from holodeck.llm.first_request import SignallingModel
from holodeck.llm.model_modalities import PRODUCED_OUTPUT
from holodeck.net import check_named_endpoints
from holodeck.observability import telemetry_for
from holodeck.runtime._agent_loop import OUTPUT_RETRIES, run_nested
from holodeck.runtime._approval import needs_approval, with_approval
from holodeck.runtime._attachments import Attachment
from holodeck.runtime._compaction import compaction_capabilities
from holodeck.runtime._events import Event, FinalMessage, final_message
from holodeck.runtime._guardrails import GuardrailRunner
from holodeck.runtime._handoffs import HandoffTargets
from holodeck.runtime._handoffs import check_harnesses as check_handoff_harnesses
from holodeck.runtime._hosting import Hosting, tool_context
from holodeck.runtime._input_guard import InputGuard
from holodeck.runtime._instrumented import instrumentation
from holodeck.runtime._lifecycle import Lifecycle
from holodeck.runtime._models import choose_model
from holodeck.runtime._options import DEFAULT_MAX_TOOL_ITERATIONS, RunOptions
from holodeck.runtime._output_check import schema_output
from holodeck.runtime._scope import SessionScope
from holodeck.runtime._session import Session
from holodeck.runtime._turn import RunningTurn
from holodeck.runtime._turn_runner import TurnRunner
from holodeck.runtime.harness import check_harnesses, choose_harness, harness_model
from holodeck.runtime.toolsets import agent_toolsets, builtin_capabilities
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.tools.python_modules import claim
from holodeck.tools.threads import ToolThreads

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic_ai.settings import ModelSettings

    from holodeck.observability import Telemetry

log = logging.getLogger("holodeck.runtime")


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
    handoff_targets: HandoffTargets
    input_guard: InputGuard | None  # its input checks, which hold for agents it hands to

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
        check_handoff_harnesses(spec, self.options.model, own_loop=own_loop)
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
        self.input_guard = None
        if self.guardrails.has("input"):  # every text the model is sent passes them first
            self.input_guard = InputGuard(self.guardrails)
            native.append(self.input_guard.capability())
        if tools.memory is not None:  # facts extracted after each turn, stored as checked
            native.extend(
                tools.memory.capabilities(spec, self.options, self.hosting, self.guardrails)
            )
        native.extend(compaction_capabilities(self))  # tool definitions, for the estimate
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
        # the agents its sessions hand over to (`handoffs:`), built on first use
        self.handoff_targets = HandoffTargets(self, type(self))

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
            await self.handoff_targets.aclose()
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
        turn = TurnRunner(self, scope).turn(prompt, attachments=attachments)
        try:
            async with contextlib.aclosing(turn) as events:  # closing ends the turn now
                async for event in events:
                    yield event
        finally:
            await scope.aclose()

    async def answer(self, prompt: str, **kwargs: Any) -> FinalMessage:
        """Run a turn that stands alone and return only its final message."""
        return await final_message(self.run(prompt, **kwargs))

    async def run_nested(self, prompt: str, turn: RunningTurn, usage: Any) -> FinalMessage:
        """Run as a sub-agent inside a parent's tool call: events go to the parent's stream."""
        self._in_use()
        return await run_nested(self, prompt, turn, usage)

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
        "handoff_targets",
        "input_guard",
        "_toolsets",
        "_per_session",
        "_needs_approval",
        "_output_type",
        "_agent",
        "_flushes",
    }
)
