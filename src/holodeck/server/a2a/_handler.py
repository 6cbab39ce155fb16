"""The A2A methods on HoloDeck turns, as an a2a-sdk `RequestHandler`: the SDK's JSON-RPC
dispatcher parses and answers the protocol (both its 1.0 method names, `SendMessage`...,
and 0.3's `message/send`...), this class runs them: sending a message (`_sending`, the
turn `_messages` makes of it), the task operations (`_task_operations`), and the
operations HoloDeck does not offer, answering that they are unsupported.

A refusal before the turn holds its session (overloaded, another key's context, a bad
message) is a JSON-RPC error whose data carries the HTTP status and type `/v1/chat` would
give; a turn that fails once started is a task in state failed."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.types import ListTasksResponse, Task
from a2a.utils.errors import UnsupportedOperationError

from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of
from holodeck.server.a2a import _task_operations as tasks
from holodeck.server.a2a._messages import begin
from holodeck.server.a2a._rpc_errors import no_push
from holodeck.server.a2a._sending import Sending
from holodeck.server.a2a._task_records import Running

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.server.events.event_queue import Event
    from fastapi import Request


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
        self.sending = Sending(self.running)

    # -- messages

    async def on_message_send(self, params: Any, context: ServerCallContext) -> Task:
        turn = await begin(params, context)
        if params.configuration.return_immediately:
            return tasks.trimmed(await self.sending.detach(turn), params.configuration)
        return tasks.trimmed(await self.sending.blocking(turn), params.configuration)

    async def on_message_send_stream(
        self, params: Any, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        turn = await begin(params, context)
        async for event in self.sending.run(turn, stream=True):
            yield event

    # -- tasks

    async def on_get_task(self, params: Any, context: ServerCallContext) -> Task | None:
        return await tasks.get_task(*_target(context), params)

    async def on_cancel_task(self, params: Any, context: ServerCallContext) -> Task | None:
        request: Request = context.state["request"]
        return await tasks.cancel_task(request, *_target(context), params, self.running)

    async def on_list_tasks(self, params: Any, context: ServerCallContext) -> ListTasksResponse:
        return await tasks.list_tasks(*_target(context), params)

    async def on_subscribe_to_task(
        self, params: Any, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        async for event in tasks.follow_task(*_target(context), params):
            yield event

    # -- what this server does not offer

    async def on_get_extended_agent_card(self, params: Any, context: ServerCallContext) -> Any:
        raise UnsupportedOperationError("the card at /.well-known/agent-card.json is all there is")

    async def on_create_task_push_notification_config(
        self, params: Any, context: ServerCallContext
    ) -> Any:
        raise no_push()

    async def on_get_task_push_notification_config(
        self, params: Any, context: ServerCallContext
    ) -> Any:
        raise no_push()

    async def on_list_task_push_notification_configs(
        self, params: Any, context: ServerCallContext
    ) -> Any:
        raise no_push()

    async def on_delete_task_push_notification_config(
        self, params: Any, context: ServerCallContext
    ) -> None:
        raise no_push()


def _target(context: ServerCallContext) -> tuple[ServedAgent, str | None]:
    request: Request = context.state["request"]
    return request.state.a2a_agent, key_name_of(request)
