"""The A2A methods on HoloDeck turns, as an a2a-sdk `RequestHandler`: the SDK's JSON-RPC
dispatcher parses and answers the protocol (both its 1.0 method names, `SendMessage`...,
and 0.3's `message/send`...), this class runs them:

- sending a message runs one turn of the session its `contextId` names (a new one when it
  has none) through `open_turn`, as `/v1/chat` does: the same admission, session lock and
  ownership, request log and trace span; the turn is a task, answered when it ends;
- streaming sends the task, then the answer's text as artifact chunks and each tool call
  as a status update (its `metadata.holodeck`), then the final status;
- a turn paused on a call to approve is a task `input-required`; a message to that task
  carries the decision (a data part) and resumes the same task;
- a message sent with `returnImmediately` is answered with its task, working, while the
  turn goes on in this process;
- getting, listing and following a task read its record from the store; cancelling
  stops the turn here, or marks the record cancelled for the process that runs it,
  which watches its record.

A refusal before the turn holds its session (overloaded, another key's context, a bad
message) is a JSON-RPC error whose data carries the HTTP status and type `/v1/chat` would
give; a turn that fails once started is a task in state failed.

Its length is the SDK's `RequestHandler` interface: one method per protocol operation,
each small, with the ones HoloDeck does not offer answering that they are unsupported; the
task records are in `_a2a_tasks`, the card in `_a2a_card`."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.types import (
    Artifact,
    ListTasksResponse,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Struct

from holodeck.errors import HoloDeckError
from holodeck.runtime import (
    Attachment,
    Decision,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from holodeck.server._a2a_tasks import (
    Running,
    agent_message,
    listed_tasks,
    load_task,
    new_id,
    now,
    save_task,
    task_key,
)
from holodeck.server._errors import ApiError, from_holodeck_error
from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of, request_id_of
from holodeck.server._turn_json import (
    call_json,
    call_tree,
    jsonable,
    pending_json,
    usage_json,
)
from holodeck.server._turns import (
    Turn,
    open_turn,
    refuse_anothers_session,
)

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.server.events.event_queue import Event
    from fastapi import Request

log = logging.getLogger("holodeck.server")

TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
ANSWER = "answer"  # the artifact holding the answer's text
CANCEL_WAIT_S = 10.0
STORE_POLL_S = 0.25  # how often a running task's record is read for a cancel from elsewhere
PAGE_SIZE, PAGE_MOST = 50, 100  # tasks/list's page: by default, at most
SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # as /v1/chat's session_id


class _Mark:
    def __init__(self, name: str) -> None:
        self.name = name


_OPENED, _DONE, _CANCELLED = _Mark("opened"), _Mark("done"), _Mark("cancelled")


def a2a_error(error: ApiError) -> A2AError:
    """The JSON-RPC error for a refusal: its data says what `/v1/chat` would answer."""
    data = {"status": str(error.status), "type": error.kind, "hint": error.hint or ""}
    if error.status == 404:
        return TaskNotFoundError(error.message, data=data)
    if error.status in (400, 422):
        return InvalidParamsError(error.message, data=data)
    return InternalError(error.message, data=data)


def _struct(value: dict[str, Any]) -> Struct:
    return ParseDict(jsonable(value), Struct())


@dataclass
class _A2ATurn:
    request: Request
    served: ServedAgent
    owner: str | None
    turn: Turn
    user: Message
    attachments: list[Attachment]
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    producer: asyncio.Task[None] | None = None
    earlier: list[Message] = field(default_factory=list)  # a resumed task's history

    @property
    def key(self) -> str:
        return task_key(self.served, self.owner, self.task_id)

    @property
    def task_id(self) -> str:
        return self.user.task_id

    @property
    def context_id(self) -> str:
        return self.user.context_id

    def task(self, state: int, answer: str | None = None, error: str | None = None) -> Task:
        status = TaskStatus(state=state, timestamp=now())  # type: ignore[arg-type]
        history = [*self.earlier, self.user]
        task = Task(id=self.task_id, context_id=self.context_id, status=status)
        if answer is not None:
            reply = agent_message(answer, self.context_id, self.task_id)
            status.message.CopyFrom(reply)
            history.append(reply)
            task.artifacts.append(
                Artifact(artifact_id=ANSWER, name=ANSWER, parts=[Part(text=answer)])
            )
        elif error is not None:
            status.message.CopyFrom(agent_message(error, self.context_id, self.task_id))
        pending = self.turn.final.pending if self.turn.final else ()
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            names = ", ".join(f"{c.name} ({c.call_id})" for c in pending)
            ask = agent_message(
                f"waits for approval of {names}: reply to this task with a data part "
                '{"approve": true} or {"approve": false, "reason": "..."} '
                '(and "callId" when several wait)',
                self.context_id,
                self.task_id,
            )
            status.message.CopyFrom(ask)
            history.append(ask)
        task.history.extend(history)
        task.status.CopyFrom(status)
        turn = self.turn
        task.metadata.update(
            {
                "holodeck": {
                    "agent": self.served.name,
                    "request_id": turn.request_id,
                    "tool_calls": jsonable(call_tree(turn.calls)),
                    "usage": usage_json(turn.usage),
                    "model": turn.final.model if turn.final else None,
                    "pending": [pending_json(c) for c in pending],
                }
            }
        )
        return task


class RequestContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, with the request: its key, its agent, its id."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state["request"] = request
        return context


class TurnHandler(RequestHandler):
    """The served agents' A2A methods; the agent is the one the route found
    (`request.state.a2a_agent`)."""

    def __init__(self) -> None:
        self.running = Running()
        self.detached: set[asyncio.Task[None]] = set()

    # -- messages

    async def on_message_send(self, params: Any, context: ServerCallContext) -> Task:
        turn = await self._begin(params, context)
        if params.configuration.return_immediately:
            return _trimmed(await self._detach(turn), params.configuration)
        final: Task | None = None
        watcher = asyncio.create_task(self._watch_client(turn), name="a2a client watch")
        try:
            async for event in self._run(turn):
                if isinstance(event, Task):
                    final = event
        finally:
            watcher.cancel()
        assert final is not None
        return _trimmed(final, params.configuration)

    async def on_message_send_stream(
        self, params: Any, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        turn = await self._begin(params, context)
        async for event in self._run(turn, stream=True):
            yield event

    async def _begin(self, params: Any, context: ServerCallContext) -> _A2ATurn:
        request: Request = context.state["request"]
        served: ServedAgent = request.state.a2a_agent
        owner = key_name_of(request)
        message = params.message
        text, attachments = _content(message)
        paused: Task | None = None
        if message.task_id:
            paused = await _paused(served, owner, message)
        context_id = paused.context_id if paused else message.context_id or new_id()
        if not SESSION_ID.fullmatch(context_id):
            raise InvalidParamsError(
                "message.contextId: letters, digits and `._:-`, at most 128 characters",
                data={"hint": "send the contextId an earlier task of this server returned"},
            )
        try:
            await refuse_anothers_session(request, served, context_id)
        except ApiError as exc:
            raise a2a_error(exc) from None
        user = Message()
        user.CopyFrom(message)
        user.context_id, user.task_id = context_id, paused.id if paused else new_id()
        if not user.message_id:
            user.message_id = new_id()
        turn = Turn(
            served=served,
            session_id=context_id,
            request_id=request_id_of(request),
            message=text,
            endpoint=request.url.path,
            owner=owner,
            decision=_decision(message, paused) if paused else None,
        )
        earlier = list(paused.history) if paused else []
        return _A2ATurn(request, served, owner, turn, user, attachments, earlier=earlier)

    async def _detach(self, a: _A2ATurn) -> Task:
        """Start the turn on its own (`returnImmediately`): the task, working, once its
        record is saved; the turn goes on after the answer, and its record says how it
        ends (tasks/get, tasks/resubscribe, tasks/cancel)."""
        started: asyncio.Future[Task] = asyncio.get_running_loop().create_future()

        async def drive() -> None:
            try:
                async for event in self._run(a, stream=True):
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

    async def _run(self, a: _A2ATurn, stream: bool = False) -> AsyncIterator[Event]:
        """The turn's A2A events: streamed, its updates, ending with the final status;
        else only the final `Task`. Its record is saved when it starts and ends."""
        a.producer = asyncio.create_task(self._produce(a, stream), name=f"a2a turn {a.task_id}")
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
            watcher = asyncio.create_task(self._watch_store(a), name=f"a2a watch {a.task_id}")
            if stream:
                yield working
            streamed = False
            while True:
                item = await a.queue.get()
                if isinstance(item, TextDelta):
                    if stream and not item.agent and item.text:
                        yield self._chunk(a, item.text, append=streamed)
                        streamed = True
                elif isinstance(item, ToolCallStarted | ToolCallFinished):
                    if stream:
                        yield self._tool_update(a, item)
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
            await save_task(a.served, a.owner, task)
            if stream:
                if task.artifacts:  # the text not streamed yet (all of it, or none)
                    rest = "" if streamed else task.artifacts[0].parts[0].text
                    yield self._chunk(a, rest, append=streamed, last=True)
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

    async def _produce(self, a: _A2ATurn, stream: bool) -> None:
        """Run the turn, putting its events on the queue between marks."""
        try:
            events = await open_turn(
                a.request, a.turn, attachments=a.attachments, stream_text=stream
            )
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
            a.queue.put_nowait(
                ApiError(500, "turn_failed", f"the server failed: {type(exc).__name__}")
            )

    async def _watch_store(self, a: _A2ATurn) -> None:
        """Stop the turn when its record says cancelled: another process sharing the
        store answered the tasks/cancel."""
        while True:
            await asyncio.sleep(STORE_POLL_S)
            found = await load_task(a.served, a.owner, a.task_id)
            if found is not None and found.status.state == TaskState.TASK_STATE_CANCELED:
                if a.producer is not None:
                    a.producer.cancel()
                return

    async def _watch_client(self, a: _A2ATurn) -> None:
        """A client that goes away before its answer cancels the turn, as on /v1/chat."""
        while (await a.request.receive())["type"] != "http.disconnect":
            pass
        if a.producer is not None:
            a.producer.cancel()

    def _chunk(
        self, a: _A2ATurn, text: str, append: bool, last: bool = False
    ) -> TaskArtifactUpdateEvent:
        return TaskArtifactUpdateEvent(
            task_id=a.task_id,
            context_id=a.context_id,
            artifact=Artifact(artifact_id=ANSWER, name=ANSWER, parts=[Part(text=text)]),
            append=append,
            last_chunk=last,
        )

    def _tool_update(
        self, a: _A2ATurn, event: ToolCallStarted | ToolCallFinished
    ) -> TaskStatusUpdateEvent:
        if isinstance(event, ToolCallStarted):
            call = {
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
        return TaskStatusUpdateEvent(
            task_id=a.task_id,
            context_id=a.context_id,
            status=TaskStatus(state=TaskState.TASK_STATE_WORKING, timestamp=now()),
            metadata=_struct({"holodeck": call}),
        )

    # -- tasks

    async def on_get_task(self, params: Any, context: ServerCallContext) -> Task | None:
        served, owner = _target(context)
        task = await load_task(served, owner, params.id)
        if task is None:
            raise _no_task(params.id)
        return _trimmed(task, params)

    async def on_cancel_task(self, params: Any, context: ServerCallContext) -> Task | None:
        served, owner = _target(context)
        task = await load_task(served, owner, params.id)
        if task is None:
            raise _no_task(params.id)
        if task.status.state in TERMINAL:
            state = TaskState.Name(task.status.state).removeprefix("TASK_STATE_").lower()
            raise TaskNotCancelableError(f"task {params.id} has ended ({state})")
        turn = self.running.cancel(task_key(served, owner, params.id))
        if turn is not None:
            await asyncio.wait([turn], timeout=CANCEL_WAIT_S)
        # else the turn runs in another process sharing the store (or ran in one that
        # stopped): the record says cancelled, which that process watches for
        task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_CANCELED, timestamp=now()))
        await save_task(served, owner, task)
        return task

    async def on_list_tasks(self, params: Any, context: ServerCallContext) -> ListTasksResponse:
        served, owner = _target(context)
        size = params.page_size if params.HasField("page_size") else PAGE_SIZE
        if not 1 <= size <= PAGE_MOST:
            raise InvalidParamsError(
                f"params.pageSize: {size} is not between 1 and {PAGE_MOST}",
                data={"hint": f"send 1 to {PAGE_MOST}, or leave it out for {PAGE_SIZE}"},
            )
        start = _page_start(params.page_token)
        after = (
            params.status_timestamp_after.ToMicroseconds()
            if params.HasField("status_timestamp_after")
            else None
        )
        found = [
            t
            for t in await listed_tasks(served, owner)
            if (not params.context_id or t.context_id == params.context_id)
            and (not params.status or t.state == params.status)
            and (after is None or t.updated > after)
        ]
        page: list[Task] = []
        for listed in found[start : start + size]:
            task = await load_task(served, owner, listed.id)
            if task is None:  # expired between the index and now
                continue
            if not params.include_artifacts:
                task.ClearField("artifacts")
            page.append(_trimmed(task, params))
        end = start + size
        return ListTasksResponse(
            tasks=page,
            next_page_token=str(end) if end < len(found) else "",
            page_size=size,
            total_size=len(found),
        )

    async def on_subscribe_to_task(
        self, params: Any, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        """The task, then each change of its state (read from the store, so whichever
        process runs it), ending with the final one and its answer."""
        served, owner = _target(context)
        task = await load_task(served, owner, params.id)
        if task is None:
            raise _no_task(params.id)
        if task.status.state in TERMINAL:
            raise UnsupportedOperationError(
                f"task {params.id} has ended ({_state_name(task.status.state)}): tasks/get reads it"
            )
        yield task
        state = task.status.state
        while state not in TERMINAL:
            await asyncio.sleep(STORE_POLL_S)
            found = await load_task(served, owner, params.id)
            if found is None:  # expired with its session
                return
            if found.status.state == state:
                continue
            state = found.status.state
            for artifact in found.artifacts:
                yield TaskArtifactUpdateEvent(
                    task_id=found.id,
                    context_id=found.context_id,
                    artifact=artifact,
                    last_chunk=True,
                )
            yield TaskStatusUpdateEvent(
                task_id=found.id,
                context_id=found.context_id,
                status=found.status,
                metadata=found.metadata,
            )

    # -- what this server does not offer

    async def on_get_extended_agent_card(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError("the card at /.well-known/agent-card.json is all there is")

    async def on_create_task_push_notification_config(
        self, params: Any, context: ServerCallContext
    ) -> Any:
        raise _no_push()

    async def on_get_task_push_notification_config(
        self, params: Any, context: ServerCallContext
    ) -> Any:
        raise _no_push()

    async def on_list_task_push_notification_configs(
        self, params: Any, context: ServerCallContext
    ) -> Any:
        raise _no_push()

    async def on_delete_task_push_notification_config(
        self, params: Any, context: ServerCallContext
    ) -> None:
        raise _no_push()


def _target(context: ServerCallContext) -> tuple[ServedAgent, str | None]:
    request: Request = context.state["request"]
    return request.state.a2a_agent, key_name_of(request)


def _page_start(token: str) -> int:
    """Where the page `token` (a `nextPageToken` given before) starts; 0 without one."""
    if not token:
        return 0
    if not token.isdigit():
        raise InvalidParamsError(
            f"params.pageToken: {token[:40]!r} is not a token this server gave",
            data={"hint": "send the nextPageToken of the previous page, or none for the first"},
        )
    return int(token)


def _state_name(state: int) -> str:
    name: str = TaskState.Name(state)
    return name.removeprefix("TASK_STATE_").lower()


def _no_task(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(
        f"no task {task_id!r} (never started with this key, or expired with its session)",
        data={"status": "404", "type": "unknown_task"},
    )


def _no_push() -> PushNotificationNotSupportedError:
    return PushNotificationNotSupportedError(
        "push notifications are not offered (the card says pushNotifications: false): "
        "use SendStreamingMessage (message/stream) to follow a task"
    )


async def _paused(served: ServedAgent, owner: str | None, message: Message) -> Task:
    """The task a message with a `taskId` resumes: one waiting for input (a decision);
    a message to any other task is refused (each message starts a new task)."""
    task_id = message.task_id
    task = await load_task(served, owner, task_id)
    if task is None:
        raise _no_task(task_id)
    if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
        raise UnsupportedOperationError(
            f"task {task_id} is {_state_name(task.status.state)}: only a task waiting for "
            f"input takes a further message; to go on with the conversation send contextId "
            f"{task.context_id!r} and no taskId, which starts a new task",
            data={"hint": f"send contextId {task.context_id!r}, without taskId"},
        )
    if message.context_id and message.context_id != task.context_id:
        raise InvalidParamsError(
            f"message.contextId: task {task_id} belongs to context {task.context_id!r}",
            data={"hint": f"send contextId {task.context_id!r}, or leave it out"},
        )
    return task


_DECISION_HINT = (
    'send a data part {"approve": true} or {"approve": false, "reason": "why"}, with '
    '"callId" naming the call when several wait'
)


def _decision(message: Message, task: Task) -> tuple[str, Decision]:
    """The decision a message to a task waiting for approval carries (its data part)."""
    from google.protobuf.json_format import MessageToDict

    waiting = [
        str(c["id"]) for c in MessageToDict(task.metadata).get("holodeck", {}).get("pending", [])
    ]
    for part in message.parts:
        if part.WhichOneof("content") != "data":
            continue
        data = MessageToDict(part.data)
        approve, reason, call_id = data.get("approve"), data.get("reason"), data.get("callId")
        if not isinstance(approve, bool) or not isinstance(reason, str | None):
            break
        if call_id is None and len(waiting) == 1:
            call_id = waiting[0]
        if not isinstance(call_id, str) or not call_id:
            raise InvalidParamsError(
                f"message.parts: task {task.id} waits for {', '.join(waiting)}: name one "
                'with "callId"',
                data={"hint": _DECISION_HINT},
            )
        return call_id, Decision(approve, reason)
    raise InvalidParamsError(
        f"message.parts: task {task.id} waits for approval, and this message decides nothing",
        data={"hint": _DECISION_HINT},
    )


def _content(message: Message) -> tuple[str, list[Attachment]]:
    """The message's text (its text and data parts), and its files as attachments."""
    texts: list[str] = []
    files: list[Attachment] = []
    for index, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            from google.protobuf.json_format import MessageToDict

            texts.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
        elif kind == "raw":
            media = part.media_type or "application/octet-stream"
            files.append(Attachment(part.raw, media, part.filename))
        else:
            raise ContentTypeNotSupportedError(
                f"message.parts[{index}]: a {kind or 'empty'} part is not taken",
                data={"hint": "send text, data, or a file's bytes (raw) with its mediaType"},
            )
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        raise ContentTypeNotSupportedError(
            "message: no text", data={"hint": "send at least one text part with the question"}
        )
    return text, files


def _trimmed(task: Task, options: Any) -> Task:
    """The task with at most `history_length` messages of history, when one is given."""
    if options.HasField("history_length"):
        keep = max(0, options.history_length)
        kept = list(task.history)[-keep:] if keep else []
        del task.history[:]
        task.history.extend(kept)
    return task
