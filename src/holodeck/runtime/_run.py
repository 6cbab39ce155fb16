"""`Run`: what one run of agents owns (a `holodeck test` run, a chat, a server process)
and stops when it ends, on the event loop it ran on.

    >>> import asyncio
    >>> from holodeck import Agent, Run, RunOptions, load_agent
    >>> async def ask() -> list[str]:
    ...     agent = Agent(load_agent("examples/weather"), RunOptions(model="test"))
    ...     async with Run(agent):
    ...         async with agent.session() as session:
    ...             answer = await session.answer("Weather in Oslo? /call *")
    ...             return [call.name for call in answer.tool_calls]
    >>> asyncio.run(ask())
    ['get_weather', 'get_forecast']

On exit, whatever the block ended with (an error, a cancellation): first what the run's
caller registered with `on_close` (conversations, background tasks: the last first), then
each agent with what goes with it (its MCP servers, Node.js, tool threads), then what
`keep` was given (session stores), then the process's shared telemetry its agents use
(held by each Run using it: the last to close flushes and stops its exporters), and last
every agent's cassette, saved to disk. One step that fails is logged and the others run.
A cancellation while closing (a second Ctrl+C) stops waiting for the servers and is
raised; the cassettes are still saved.

A `Run` is the owner of its agents' lives: opening it opens them (each reads its `.env`
and config.yaml, builds its model and imports its tool code), closing it closes them. It
is opened once, on one event loop: opening it while it is open, or using it (and its
agents) on another loop, raises `LifecycleError`. Closed is final, for the Run and its
agents: opening either again raises `LifecycleError` (make new ones).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from holodeck.observability import hold_shared, release_shared
from holodeck.runtime._lifecycle import Lifecycle

if TYPE_CHECKING:
    from holodeck.observability import Telemetry
    from holodeck.runtime._agent import Agent

log = logging.getLogger("holodeck.runtime")

Closer = Callable[[], Awaitable[object] | object]


class Closable(Protocol):
    async def aclose(self) -> None: ...


class Run:
    """The agents of one run, and what it keeps open for them; `async with` owns them."""

    def __init__(self, *agents: Agent) -> None:
        self._agents: dict[Agent, list[Closer]] = {agent: [] for agent in agents}
        self._on_close: list[Closer] = []
        self._kept: list[Closable] = []
        self._telemetry: list[Telemetry] = []  # the shared telemetry this run holds
        self.lifecycle = Lifecycle("this Run")

    @property
    def agents(self) -> list[Agent]:
        return list(self._agents)

    @property
    def is_open(self) -> bool:
        return self.lifecycle.is_open

    async def __aenter__(self) -> Run:
        self.lifecycle.hold(self)
        try:
            for agent in self._agents:
                agent.lifecycle.hold(self, " (in a Run)")
                agent.prepare()
                self._hold_telemetry(agent)
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._close()

    # -- what the run owns

    def add(self, agent: Agent, *, then: Closer | None = None) -> Agent:
        """Own `agent` from now on (a server's uploaded agent); `then` is called after
        the agent has closed (its request log, its modules)."""
        if self.is_open:
            self.lifecycle.claim()
            agent.lifecycle.hold(self, " (in a Run)")
            agent.prepare()
            self._hold_telemetry(agent)
        self._agents[agent] = [then] if then is not None else []
        return agent

    def _hold_telemetry(self, agent: Agent) -> None:
        """Hold the process's shared telemetry `agent` traces to, once per run."""
        telemetry = agent.telemetry
        if telemetry is None or any(t is telemetry for t in self._telemetry):
            return
        if hold_shared(telemetry):
            self._telemetry.append(telemetry)

    async def release(self, agent: Agent) -> None:
        """Close `agent` now (a server's upload replaced) and stop owning it."""
        closers = self._agents.pop(agent, None)
        if closers is not None:
            await self._close_agent(agent, closers)

    def on_close(self, close: Closer) -> None:
        """Call `close()` first when the run ends, before the agents close (what uses
        them: conversations, tasks); the last registered is called first."""
        self._on_close.append(close)

    def keep(self, resource: Closable) -> Closable:
        """`await resource.aclose()` when the run ends, after the agents (a store their
        conversations are saved to)."""
        self._kept.append(resource)
        return resource

    # -- closing

    async def _close(self) -> None:
        if not self.is_open:
            return
        self.lifecycle.claim()
        try:
            for close in reversed(self._on_close):
                await _call(close, "closing")
            await asyncio.gather(
                *(self._close_agent(agent, closers) for agent, closers in self._agents.items())
            )
            kept = [_call(resource.aclose, "closing a store") for resource in self._kept]
            await asyncio.gather(*kept)
            held, self._telemetry = self._telemetry, []
            for telemetry in held:  # the last run holding it flushes and stops it
                await _call(partial(release_shared, telemetry), "stopping telemetry")
        finally:  # cancelled meanwhile (a second Ctrl+C): what is left stops with the loop
            self.lifecycle.closed()
            self.lifecycle.released(self)
            for agent in self._agents:
                agent.lifecycle.released(self)
            self._save_cassettes()

    async def _close_agent(self, agent: Agent, closers: list[Closer]) -> None:
        try:
            await _call(agent.aclose, f"closing agent {agent.spec.name}")
        finally:
            agent.lifecycle.released(self)
            for close in closers:
                await _call(close, f"closing agent {agent.spec.name}")

    def _save_cassettes(self) -> None:
        """Every exchange recorded is on disk, whatever the run ended with."""
        seen: set[int] = set()
        for agent in self._agents:
            cassette = agent.options.cassette
            if cassette is not None and id(cassette) not in seen:
                seen.add(id(cassette))
                cassette.save(durable=True)


async def _call(close: Closer, doing: str) -> None:
    """`close()`, awaited if it is async; a failure is logged, not raised (the other
    steps of closing still run)."""
    try:
        result: Any = close()
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        log.warning("%s failed: %s", doing, exc)
