"""The JSON-RPC errors of A2A requests HoloDeck refuses, as the specification numbers
them: an unknown task, push notifications, and a refusal `/v1/chat` would give (its HTTP
status and type in the error's data)."""

from __future__ import annotations

from a2a.types import TaskState
from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
)

from holodeck.server._errors import ApiError

TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)


def a2a_error(error: ApiError) -> A2AError:
    """The JSON-RPC error for a refusal: its data says what `/v1/chat` would answer."""
    data = {"status": str(error.status), "type": error.kind, "hint": error.hint or ""}
    if error.status == 404:
        return TaskNotFoundError(error.message, data=data)
    if error.status in (400, 422):
        return InvalidParamsError(error.message, data=data)
    return InternalError(error.message, data=data)


def state_name(state: int) -> str:
    name: str = TaskState.Name(state)
    return name.removeprefix("TASK_STATE_").lower()


def no_task(task_id: str) -> TaskNotFoundError:
    return TaskNotFoundError(
        f"no task {task_id!r} (never started with this key, or expired with its session)",
        data={"status": "404", "type": "unknown_task"},
    )


def no_push() -> PushNotificationNotSupportedError:
    return PushNotificationNotSupportedError(
        "push notifications are not offered (the card says pushNotifications: false): "
        "use SendStreamingMessage (message/stream) to follow a task"
    )
