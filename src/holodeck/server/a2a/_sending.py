"""Sending a message: the turn it asks for runs through `open_turn`, as `/v1/chat`'s do
(the same admission, session lock and ownership, request log and trace span), as one
task whose record is saved when it starts and when it ends.

- blocking, the task is answered when the turn ends;
- streamed, the task comes first, then the answer's text as artifact chunks and each
  tool call, handoff and history compaction as a status update (its `metadata.holodeck`,
  whose `event` is `tool_call_started`, `tool_call_finished`, `handoff` or `compacted`),
  then the final status;
- with `returnImmediately`, the task is answered working while the turn goes on here;
- a turn paused on a call to approve ends the task `input-required`.

A client gone (a stream closed, a request dropped) cancels its turn; so does its record
saying cancelled, written by a process sharing the store that answered `tasks/cancel`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from a2a.types import (
    Artifact,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import A2AError, InternalError
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Struct

from holodeck.errors import HoloDeckError
from holodeck.runtime import (
    HandedOff,
    HistoryCompacted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from holodeck.server._errors import ApiError, from_holodeck_error
from holodeck.server._turn_json import call_json, compacted_json, handoff_json, jsonable
from holodeck.server._turns import open_turn
from holodeck.server.a2a._rpc_errors import TERMINAL, a2a_error
from holodeck.server.a2a._task_records import Running, end_task, load_task, now, save_task
from holodeck.server.a2a._turn_task import ANSWER, A2ATurn

if TYPE_CHECKING:
    from a2a.server.events.event_queue import Event

log = logging.getLogger("holodeck.server")

STORE_POLL_S = 0.25  # how often a running task's record is read for a cancel from elsewhere


class _Mark:
    def __init__(self, name: str) -> None:
        self.name = name


_OPENED, _DONE, _CANCELLED = _Mark("opened"), _Mark("done"), _Mark("cancelled")


class Sending:
    """The turns of sent messages, each registered in `running` while it runs."""

    def __init__(self, running: Running) -> None:
        self.running = running
        self.detached: set[asyncio.Task[None]] = set()

    async def blocking(self, a: A2ATurn) -> Task:
        """The task once its turn has ended."""
        final: Task | None = None
        watcher = asyncio.create_task(_watch_client(a), name="a2a client watch")
        try:
            async for event in self.run(a):
                if isinstance(event, Task):
                    final = event
        finally:
            watcher.cancel()
        assert final is not None
        return final

    async def detach(self, a: A2ATurn) -> Task:
        """Start the turn on its own (`returnImmediately`): the task, working, once its
        record is saved; the turn goes on after the answer, and its record says how it
        ends (tasks/get, tasks/resubscribe, tasks/cancel)."""
        started: asyncio.Future[Task] = asyncio.get_running_loop().create_future()

        async def drive() -> None:
            try:
                async for event in self.run(a, stream=True):
                    if isinstance(event, Task) and not started.done():
                        started.set_result(event)
            except A2AError as exc:  # refused before it started
                if not started.done():
                    started.set_exception(exc)
            except Exception as exc:
                log.error("A2A task %s failed", a.task_id, exc_info=exc)
                if not started.done():
                    started.set_exception(InternalError("the server failed to start the task"))

        driver = asyncio.create_task(drive(), name=f"a2a task {a.task_id}")
        self.detached.add(driver)  # a task only the loop refers to may be collected
        driver.add_done_callback(self.detached.discard)
        return await started

    async def run(self, a: A2ATurn, stream: bool = False) -> AsyncIterator[Event]:
        """The turn's A2A events: streamed, its updates, ending with the final status;
        else only the final `Task`. Its record is saved when it starts and ends."""
        a.producer = asyncio.create_task(_produce(a, stream), name=f"a2a turn {a.task_id}")
        self.running.add(a.key, a.producer)
        watcher: asyncio.Task[None] | None = None
        try:
            first = await a.queue.get()
            if isinstance(first, ApiError):
                raise a2a_error(first)
            if first is _CANCELLED:
                raise InternalError("the turn was stopped before it started")
            working = a.task(TaskState.TASK_STATE_WORKING)
            await save_task(a.served, a.owner, working)
            watcher = asyncio.create_task(_watch_store(a), name=f"a2a watch {a.task_id}")
            if stream:
                yield working
            streamed = False
            while True:
                item = await a.queue.get()
                if isinstance(item, TextDelta):
                    if stream and not item.agent and item.text:
                        yield _chunk(a, item.text, append=streamed)
                        streamed = True
                elif isinstance(item, ToolCallStarted | ToolCallFinished):
                    if stream:
                        yield _tool_update(a, item)
                elif isinstance(item, HandedOff):
                    if stream:  # the answer's chunks that follow are `to_agent`'s
                        yield _update(a, {"event": "handoff", **handoff_json(item)})
                elif isinstance(item, HistoryCompacted):
                    if stream:
                        yield _update(a, {"event": "compacted", **compacted_json(item)})
                elif item is _DONE:
                    final = a.turn.final
                    if final is not None and final.pending:  # paused for a person's decision
                        task = a.task(TaskState.TASK_STATE_INPUT_REQUIRED)
                    else:
                        task = a.task(
                            TaskState.TASK_STATE_COMPLETED, answer=final.text if final else ""
                        )
                    break
                elif item is _CANCELLED:
                    task = a.task(TaskState.TASK_STATE_CANCELED)
                    break
                elif isinstance(item, ApiError):
                    task = a.task(TaskState.TASK_STATE_FAILED, error=f"{item.kind}: {item.message}")
                    break
            task = await _settled(a, task)
            await save_task(a.served, a.owner, task)
            if stream:
                if task.artifacts:  # the text not streamed yet (all of it, or none)
                    rest = "" if streamed else task.artifacts[0].parts[0].text
                    yield _chunk(a, rest, append=streamed, last=True)
                yield TaskStatusUpdateEvent(
                    task_id=a.task_id,
                    context_id=a.context_id,
                    status=task.status,
                    metadata=task.metadata,
                )
            else:
                yield task
        finally:
            if watcher is not None:
                watcher.cancel()
            # a client gone (a stream closed, a request dropped) cancels the turn
            if not a.producer.done():
                a.producer.cancel()
                await asyncio.gather(a.producer, return_exceptions=True)
            self.running.remove(a.key)


async def _settled(a: A2ATurn, task: Task) -> Task:
    """The task as its turn ends it, unless it ended otherwise first: a cancel answered
    meanwhile (here or by another process sharing the store) stands."""
    state = task.status.state
    ended = await end_task(a.served, a.owner, a.task_id, state if state in TERMINAL else None)
    return task if ended is None or ended == state else a.task(ended)


async def _produce(a: A2ATurn, stream: bool) -> None:
    """Run the turn, putting its events on the queue between marks."""
    try:
        events = await open_turn(a.request, a.turn, attachments=a.attachments, stream_text=stream)
        a.queue.put_nowait(_OPENED)
        async for event in events:
            a.queue.put_nowait(event)
        a.queue.put_nowait(_DONE)
    except asyncio.CancelledError:
        a.queue.put_nowait(_CANCELLED)
        raise
    except ApiError as exc:
        a.queue.put_nowait(exc)
    except HoloDeckError as exc:
        a.queue.put_nowait(from_holodeck_error(exc))
    except Exception as exc:
        log.error("A2A turn %s failed", a.turn.request_id, exc_info=exc)
        a.queue.put_nowait(ApiError(500, "turn_failed", f"the server failed: {type(exc).__name__}"))


async def _watch_store(a: A2ATurn) -> None:
    """Stop the turn when its record says cancelled: another process sharing the
    store answered the tasks/cancel."""
    while True:
        await asyncio.sleep(STORE_POLL_S)
        found = await load_task(a.served, a.owner, a.task_id)
        if found is not None and found.status.state == TaskState.TASK_STATE_CANCELED:
            if a.producer is not None:
                a.producer.cancel()
            return


async def _watch_client(a: A2ATurn) -> None:
    """A client that goes away before its answer cancels the turn, as on /v1/chat."""
    while (await a.request.receive())["type"] != "http.disconnect":
        pass
    if a.producer is not None:
        a.producer.cancel()


def _chunk(a: A2ATurn, text: str, append: bool, last: bool = False) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=a.task_id,
        context_id=a.context_id,
        artifact=Artifact(artifact_id=ANSWER, name=ANSWER, parts=[Part(text=text)]),
        append=append,
        last_chunk=last,
    )


def _tool_update(a: A2ATurn, event: ToolCallStarted | ToolCallFinished) -> TaskStatusUpdateEvent:
    if isinstance(event, ToolCallStarted):
        call: dict[str, Any] = {
            "event": "tool_call_started",
            "id": event.call_id,
            "name": event.name,
            "args": event.args,
            "agent": event.agent,
            "parent_id": event.parent_call_id,
        }
    else:
        call = {"event": "tool_call_finished", **call_json(event)}
        call["parent_id"] = event.parent_call_id
    return _update(a, call)


def _update(a: A2ATurn, said: dict[str, Any]) -> TaskStatusUpdateEvent:
    """A working status update whose `metadata.holodeck` says what happened."""
    return TaskStatusUpdateEvent(
        task_id=a.task_id,
        context_id=a.context_id,
        status=TaskStatus(state=TaskState.TASK_STATE_WORKING, timestamp=now()),
        metadata=ParseDict(jsonable({"holodeck": said}), Struct()),
    )
