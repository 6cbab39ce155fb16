"""The task operations: getting, listing and following a task read its record from the
store (whichever process runs it); cancelling stops the turn here, or marks the record
cancelled for the process that runs it, which watches its record. A cancel and the
turn's own end claim the task's end: the first stands. Cancelling a task waiting for
approval denies its calls, so that the conversation takes new messages."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from a2a.types import (
    ListTasksResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, UnsupportedOperationError

from holodeck.runtime import Decision
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._state import request_id_of
from holodeck.server._turns import ServedTurn, open_turn
from holodeck.server.a2a._messages import waiting_calls
from holodeck.server.a2a._rpc_errors import TERMINAL, a2a_error, no_task, state_name
from holodeck.server.a2a._task_records import (
    Running,
    end_task,
    listed_tasks,
    load_task,
    now,
    save_task,
    task_key,
)

if TYPE_CHECKING:
    from a2a.server.events.event_queue import Event
    from fastapi import Request

CANCEL_WAIT_S = 10.0
CANCELLED_REASON = "The task was cancelled: do not make this call."
WITHDRAW_ROUNDS = 5
FOLLOW_POLL_S = 0.25  # how often a followed task's record is read
PAGE_SIZE, PAGE_MOST = 50, 100  # tasks/list's page: by default, at most


async def get_task(served: ServedAgent, owner: str | None, params: Any) -> Task:
    task = await load_task(served, owner, params.id)
    if task is None:
        raise no_task(params.id)
    return trimmed(task, params)


async def cancel_task(
    request: Request, served: ServedAgent, owner: str | None, params: Any, running: Running
) -> Task:
    task = await load_task(served, owner, params.id)
    if task is None:
        raise no_task(params.id)
    if task.status.state in TERMINAL:
        raise _not_cancelable(params.id, task.status.state)
    turn = running.cancel(task_key(served, owner, params.id))
    if turn is not None:
        await asyncio.wait([turn], timeout=CANCEL_WAIT_S)
    # else the turn runs in another process sharing the store (or ran in one that
    # stopped): the record says cancelled, which that process watches for
    cancelled = TaskState.TASK_STATE_CANCELED
    ended = await end_task(served, owner, params.id, cancelled)
    if ended != cancelled:  # the turn ended first
        raise _not_cancelable(params.id, ended or cancelled)
    if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
        await _withdraw(request, served, owner, task)
    task.status.CopyFrom(TaskStatus(state=cancelled, timestamp=now()))
    await save_task(served, owner, task)
    return task


def _not_cancelable(task_id: str, state: int) -> TaskNotCancelableError:
    return TaskNotCancelableError(f"task {task_id} has ended ({state_name(state)})")


async def _withdraw(request: Request, served: ServedAgent, owner: str | None, task: Task) -> None:
    """Deny each call a cancelled task waited for, so that its session takes new
    messages: the session records the denials, and the model is told why, as for any
    denial. A turn that pauses again is denied again, a few times at most."""
    waiting = waiting_calls(task)
    for _ in range(WITHDRAW_ROUNDS):
        final = None
        for call_id in waiting:
            turn = ServedTurn(
                served=served,
                session_id=task.context_id,
                request_id=request_id_of(request),
                message=f"(task {task.id} cancelled)",
                endpoint=request.url.path,
                owner=owner,
                decision=(call_id, Decision(False, CANCELLED_REASON)),
            )
            try:
                async for _event in await open_turn(request, turn, stream_text=False):
                    pass
            except ApiError as exc:
                if exc.status in (404, 409):  # decided already, or not waiting any more
                    continue
                raise a2a_error(exc) from None
            final = turn.final
        if final is None or not final.pending:
            return
        waiting = [c.call_id for c in final.pending]


async def list_tasks(served: ServedAgent, owner: str | None, params: Any) -> ListTasksResponse:
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
        page.append(trimmed(task, params))
    end = start + size
    return ListTasksResponse(
        tasks=page,
        next_page_token=str(end) if end < len(found) else "",
        page_size=size,
        total_size=len(found),
    )


async def follow_task(served: ServedAgent, owner: str | None, params: Any) -> AsyncGenerator[Event]:
    """The task, then each change of its state (read from the store, so whichever
    process runs it), ending with the final one and its answer."""
    task = await load_task(served, owner, params.id)
    if task is None:
        raise no_task(params.id)
    if task.status.state in TERMINAL:
        raise UnsupportedOperationError(
            f"task {params.id} has ended ({state_name(task.status.state)}): tasks/get reads it"
        )
    yield task
    state = task.status.state
    while state not in TERMINAL:
        await asyncio.sleep(FOLLOW_POLL_S)
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


def trimmed(task: Task, options: Any) -> Task:
    """The task with at most `history_length` messages of history, when one is given."""
    if options.HasField("history_length"):
        keep = max(0, options.history_length)
        kept = list(task.history)[-keep:] if keep else []
        del task.history[:]
        task.history.extend(kept)
    return task
