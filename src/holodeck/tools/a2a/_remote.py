"""The A2A client of a `type: a2a` tool: `RemoteAgent` reads the card and sends each
message in the caller's `Conversation` with the remote: the remote's `contextId` once it
gave one (so one conversation here is one there), and the task that waits for input."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from holodeck.errors import ToolError
from holodeck.net import OutboundBlocked, OutboundPolicy
from holodeck.spec.models.tools import A2ATool

if TYPE_CHECKING:
    import httpx
    from a2a.types import AgentCard, Task

CARD_TIMEOUT_S = 10.0  # reading the card for the tool's description
CARD_RETRY_S = 60.0  # a card that could not be read is tried again after this long
_WAITING = "TASK_STATE_INPUT_REQUIRED"
_FAILED = frozenset({"TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"})


class A2ACallError(ToolError):
    """A call to a remote A2A agent failed; the message says which and why."""


@dataclass
class Conversation:
    """One conversation of the caller with the remote agent: the remote's `contextId`,
    and the id of a remote task that asked for more input (the next message answers it)."""

    context_id: str = ""
    waiting_task: str = ""


@dataclass
class RemoteAgent:
    """The remote agent of `tool`, reached through `policy`; its card is read once."""

    tool: A2ATool
    policy: OutboundPolicy
    card: AgentCard | None = None
    card_failed_at: float | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.headers = {k: v.get_secret_value() for k, v in self.tool.headers.items()}

    def _client(self, timeout: float) -> httpx.AsyncClient:
        import httpx

        from holodeck.tools.a2a._transport import PolicyTransport

        unexpanded = [k for k, v in self.headers.items() if "${" in v]
        if unexpanded:
            raise A2ACallError(
                f"{self.tool.name}: header {unexpanded[0]} has an unexpanded ${{VAR}}: set "
                "the variable where the agent runs"
            )
        return httpx.AsyncClient(
            transport=PolicyTransport(self.policy),
            headers=self.headers,
            timeout=timeout,
            trust_env=False,
        )

    async def read_card(self, http: httpx.AsyncClient) -> AgentCard:
        if self.card is not None:
            return self.card
        from a2a.client import A2ACardResolver

        url = self.tool.url
        if url.split("?")[0].endswith(".json"):  # the card's own URL
            resolver = A2ACardResolver(http, url, agent_card_path="")
        else:
            resolver = A2ACardResolver(http, url)
        try:
            self.card = await resolver.get_agent_card()
        except Exception as exc:
            raise self._failed("its agent card could not be read", exc) from None
        return self.card

    async def describe(self) -> str | None:
        """The card's description, read once (None while it cannot be read)."""
        if self.card is None:
            if self.card_failed_at and time.monotonic() - self.card_failed_at < CARD_RETRY_S:
                return None
            try:
                async with self._client(CARD_TIMEOUT_S) as http:
                    await self.read_card(http)
            except (A2ACallError, ImportError):
                self.card_failed_at = time.monotonic()
                return None
        assert self.card is not None
        return self.card.description or None

    async def ask(self, message: str, conversation: Conversation | None = None) -> str:
        """The remote agent's answer to `message`, sent in `conversation` (a new one when
        None); `conversation` learns the remote's contextId and a task waiting for input."""
        from a2a.client import ClientConfig, ClientFactory
        from a2a.types import Message, Part, Role, SendMessageRequest

        conversation = conversation if conversation is not None else Conversation()
        async with self._client(self.tool.timeout) as http:
            card = await self.read_card(http)
            client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
            sent = Message(
                message_id=uuid.uuid4().hex,
                role=Role.ROLE_USER,
                context_id=conversation.context_id,
                task_id=conversation.waiting_task,
            )
            sent.parts.append(Part(text=message))
            try:
                responses = [r async for r in client.send_message(SendMessageRequest(message=sent))]
            except Exception as exc:
                raise self._failed("the call failed", exc) from None
        for response in responses:
            if response.HasField("task"):
                conversation.context_id = response.task.context_id or conversation.context_id
                return self._answer(response.task, conversation)
            if response.HasField("message"):
                reply = response.message
                conversation.context_id = reply.context_id or conversation.context_id
                conversation.waiting_task = ""
                return _text(reply.parts)
        raise A2ACallError(f"{self.tool.name}: the remote agent sent no answer")

    def _answer(self, task: Task, conversation: Conversation) -> str:
        from a2a.types import TaskState

        state = TaskState.Name(task.status.state)
        said = _text(task.status.message.parts)
        conversation.waiting_task = task.id if state == _WAITING else ""
        if state == _WAITING:  # the model answers with its next call, in this same task
            return f"The remote agent needs more before it can answer, and asks: {said}"
        if state in _FAILED:
            ended = state.removeprefix("TASK_STATE_").lower()
            raise A2ACallError(f"{self.tool.name}: the remote task {ended}: {said}".rstrip(": "))
        answer = "\n".join(_text(a.parts) for a in task.artifacts)
        return answer or said

    def _failed(self, what: str, exc: BaseException) -> A2ACallError:
        reason = _reason(exc)
        return A2ACallError(f"{self.tool.name} ({self.tool.url}): {what}: {reason}")


def _reason(exc: BaseException) -> str:
    seen: BaseException | None = exc
    while seen is not None:  # the policy's refusal says how to allow the address
        if isinstance(seen, OutboundBlocked):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


def _text(parts: Any) -> str:
    return "".join(p.text for p in parts if p.WhichOneof("content") == "text")
