"""`TurnRunner`: the turns of one conversation, one at a time. A `Session` owns one: the
session's history, spend and pending approvals go in, events come out, and what the turn
did is written back when it ends (its messages, what it used, the calls it paused on).

One turn's order lives here: the history compacted when it nears the model's context
window, the caps (the session's and the key's day), input
guardrails, the model run (or the resumed, approved run), pending approvals, output
guardrails (the answer withheld until they pass), the cassette, the final events. The
model run is a task whose events (tool calls, sub-agents' text, guardrail hits) reach
this generator through one queue; the generator is the only one between the queue and
whoever reads the turn, so closing it cancels the run at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pydantic_ai.usage import RunUsage

from holodeck.errors import ApprovalPending, LimitReached, SessionError
from holodeck.runtime._agent_loop import OUTPUT_RETRIES, content_of, final_of, user_error
from holodeck.runtime._approval import Pending
from holodeck.runtime._compaction import bounded_history, compact_history
from holodeck.runtime._events import Event, FinalMessage, TextDelta, Usage
from holodeck.runtime._guardrails import released, rewrite_answer
from holodeck.runtime._handoffs import MAX_HANDOFFS, Answered, answer, checks_output
from holodeck.runtime._input_guard import InputBlocked
from holodeck.runtime._limits import Used, turn_limits
from holodeck.runtime._turn import CURRENT_TURN, RunningTurn
from holodeck.tools.threads import TOOL_THREADS

if TYPE_CHECKING:
    from holodeck.runtime._agent import Agent
    from holodeck.runtime._attachments import Attachment
    from holodeck.runtime._client_tools import ClientTool
    from holodeck.runtime._scope import SessionScope
    from holodeck.runtime._session import Session
    from holodeck.runtime._turn_settings import TurnSettings


@dataclass(frozen=True)
class _End:
    error: BaseException | None


class TurnRunner:
    """Runs `agent`'s turns in `scope`; with a `session`, after its history and into it
    (without one, a turn that stands alone: nothing remembers it)."""

    __slots__ = ("_lock", "agent", "scope", "session")

    def __init__(self, agent: Agent, scope: SessionScope, session: Session | None = None) -> None:
        self.agent = agent
        self.scope = scope
        self.session = session
        self._lock: asyncio.Lock | None = None

    async def turn(
        self,
        prompt: str | None,
        *,
        attachments: Sequence[Attachment] = (),
        stream_text: bool = True,
        key_used: Used | None = None,
        client_tools: Sequence[ClientTool] = (),
        settings: TurnSettings | None = None,
        resuming: bool = False,
    ) -> AsyncGenerator[Event, None]:
        """One turn's events, the last a `FinalMessage` (see `Session.run`); `resuming`
        runs the rest of the session's paused turn instead (see `Session.resume`)."""
        session = self.session
        resume = self._paused(session, resuming)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            agent = self.agent
            agent._in_use()
            if settings is not None:
                settings.check(agent)
            if session is not None and resume is None:  # before the caps: it spends too
                compacted = await compact_history(session, prompt)
                if compacted is not None:
                    yield compacted
            content = None if prompt is None else content_of(agent, prompt, attachments)
            requests = agent.most_turn_requests
            asked_shape = settings is not None and settings.schema is not None
            if asked_shape and not agent.spec.response_format:
                requests += OUTPUT_RETRIES  # answers that do not fit go back to the model
            if agent.spec.handoffs:  # each transfer is a model request of its own
                requests += MAX_HANDOFFS
            limits = turn_limits(agent.spec.limits, requests, self._used(key_used))
            queue: asyncio.Queue[Event | _End] = asyncio.Queue()
            turn = RunningTurn(
                queue,  # type: ignore[arg-type]
                scope=self.scope,
                stream_text=stream_text,
                telemetry=agent.telemetry,
                client_tools=tuple(client_tools),
                settings=settings,
                spend=session.spend if session is not None else None,
            )
            if session is not None:
                session.interrupted_calls = ()
            guards = agent.guardrails
            # the answer is shown once its checks pass (an agent handed to checks it too)
            withholds = guards.has("output") or checks_output(agent.spec)
            finished = False

            async def produce() -> None:
                nonlocal finished
                CURRENT_TURN.set(turn)
                TOOL_THREADS.set(agent.threads)
                try:
                    await agent._enter_tools()  # first use: its servers stay up until it closes
                    before, deferred = list(session.messages if session else ()), None
                    if resume is not None:
                        resume.report_denied(turn)
                        before, deferred = list(resume.messages), resume.results()
                    stack = session.handoffs if session is not None else ()
                    try:
                        answered = await answer(
                            agent.handoff_targets, stack, content, turn, before, limits, deferred
                        )
                    except InputBlocked as blocked:  # no model request; nothing is kept
                        if stream_text:
                            queue.put_nowait(TextDelta(blocked.message))
                        refused = FinalMessage(blocked.message, agent=agent.spec.name)
                        queue.put_nowait(refused.usage)
                        queue.put_nowait(refused)
                        queue.put_nowait(_End(None))
                        return
                    result = answered.result
                    final = replace(final_of(result, turn), agent=answered.agent.spec.name)
                    for call in final.pending:  # the turn pauses on them
                        queue.put_nowait(call)
                    # the session's front door checks the answer whoever wrote it; an
                    # agent handed to checks it too
                    runners = [guards]
                    if answered.agent is not agent:
                        runners.append(answered.agent.guardrails)
                    checking = withholds and not final.pending
                    for runner in (r for r in runners if checking and r.has("output")):
                        checked = await runner.check("output", final.text, queue.put_nowait)
                        if checked.text != final.text:
                            rewrite_answer(result, checked.text)
                            final = replace(final, text=checked.text, output=None)
                    finished = True
                    if session is not None:
                        _keep(session, answered, final)
                    if agent.options.cassette is not None:  # an interrupted run keeps its turns
                        await agent.options.cassette.asave()
                    queue.put_nowait(final.usage)
                    queue.put_nowait(final)
                    queue.put_nowait(_End(None))
                except BaseException as exc:  # handed to the reader, raised there
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
                            raise user_error(agent, item.error) from None
                        return
                    if withholds and isinstance(item, TextDelta) and not item.agent:
                        withheld.append(item)
                        continue
                    if withholds and isinstance(item, FinalMessage):
                        for delta in released(withheld, item.text, stream_text):
                            yield delta
                    yield item
            except BaseException as exc:
                await _stop(task)
                if session is not None:
                    _count_stopped(session, exc, finished, turn)
                raise
            finally:
                await _stop(task)
                if resume is not None and not finished:  # it waits for decisions again
                    resume.decisions.clear()

    def _paused(self, session: Session | None, resuming: bool) -> Pending | None:
        """The paused turn to resume; refuses a new message while a turn waits."""
        if session is None:
            return None
        pending = session.pending
        if resuming:
            if pending is None or pending.undecided:
                raise SessionError("no paused turn with every call decided to resume")
            return pending
        if pending is not None:
            names = ", ".join(c.name for c in pending.calls)
            raise ApprovalPending(
                f"the last turn waits for approval of {names}",
                hint="approve or deny each call first (decide(), then resume())",
            )
        return None

    def _used(self, key_used: Used | None) -> dict[str, Used] | None:
        """What the session and the key's day used so far, for the caps that count them."""
        limits = self.agent.spec.limits
        if self.session is None or limits is None:
            return None
        if limits.session is None and limits.key_daily is None:
            return None  # pricing the session is not free: only when a cap needs it
        used = {"session": self.session.spend.used()}
        if key_used is not None:
            used["key_daily"] = key_used
        return used


def _keep(session: Session, answered: Answered, final: FinalMessage) -> None:
    """The finished turn into the session: what it used, who answers it now, its
    messages or its pause (which resumes with the agent that paused)."""
    result = answered.result
    session.spend.add(final.usage, answered.responses, result.usage.tool_calls)
    session.handoffs = answered.stack
    session.pending = None
    if final.pending:  # kept whole, whatever the memory: the turn goes on
        session.pending = Pending(result.all_messages(), final.pending)
    elif session.agent.spec.interaction.conversational:
        session.messages = bounded_history(
            session.agent.spec, result.all_messages(), session.max_messages
        )
    session.updated_at = time.time()


def _count_stopped(session: Session, exc: BaseException, finished: bool, turn: RunningTurn) -> None:
    """A turn a cap stopped still spent; a cancelled one leaves the calls it started."""
    if isinstance(exc, LimitReached):
        spent = exc.spent
        if isinstance(spent, RunUsage):
            usage = Usage(spent.input_tokens, spent.output_tokens, spent.requests)
            session.spend.add_stopped(usage, spent.cost, spent.tool_calls)
    elif isinstance(exc, asyncio.CancelledError | GeneratorExit) and not finished:
        session.spend.cancelled += 1
        session.interrupted_calls = tuple(turn.running.values())


async def _stop(task: asyncio.Task[None]) -> None:
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
