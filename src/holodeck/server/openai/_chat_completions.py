"""The OpenAI-compatible face: `GET /v1/models` lists the served agents as models and
`POST /v1/chat/completions` answers as one (streamed or not), so the official openai
SDK and tools built on it talk to an agent unchanged.

The conversation is the request's `messages`, as OpenAI's API has it, tool calls and
their results included (`_chat_history`); the agent's own
instructions, tools, model settings and output shape apply, and a request asking for
others is refused with 400 in OpenAI's error shape (`_checks`). Extensions, in
a `holodeck` object:
`{"tool_calls": true}` adds the turn's tool activity to the answer (and a chunk per
call to a stream); `{"session_id": "..."}` continues a stored session instead, taking
only the last user message from `messages`."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from holodeck.runtime import Event, Session, TextDelta, ToolCallFinished
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._turn_json import (
    call_json,
)
from holodeck.server._turns import (
    ServedTurn,
    open_turn,
    refuse_anothers_session,
    run_through,
)
from holodeck.server._wire import SessionId, sse_schema
from holodeck.server.openai._chat_history import ChatMessage, conversation
from holodeck.server.openai._checks import refuse_client_tools, refuse_unknown, turn_settings
from holodeck.server.openai._errors import openai_error_body, openai_error_responses

chat_router = APIRouter()
_ERRORS = openai_error_responses(400, 401, 404, 409, 413, 429, 502, 503)


class HoloDeckExtension(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool_calls: bool = Field(default=False, description="Include the turn's tool activity.")
    session_id: SessionId | None = Field(
        default=None, description="Continue this stored session (only the last message is sent)."
    )


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class CompletionRequest(BaseModel):
    # other fields are refused by name (`_checks`), unless they ask for nothing
    model_config = ConfigDict(extra="allow")
    model: Annotated[str, Field(min_length=1)]
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: Annotated[int, Field(ge=1, le=1)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1)] | None = None
    stop: str | Annotated[list[str], Field(max_length=4)] | None = None
    seed: int | None = None
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    frequency_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    parallel_tool_calls: bool | None = None
    tool_choice: str | dict[str, Any] | None = Field(
        default=None, description="`auto`, or `none` (no tools this turn); a forced call is 400."
    )
    response_format: dict[str, Any] | None = None
    user: str | None = Field(
        default=None,
        description="Recorded in the request log; for an agent with long-term memory, the "
        "user whose memories the turn reaches (as /v1/chat's `user_id`).",
    )
    metadata: dict[str, str] | None = Field(
        default=None, description="Recorded in the request log."
    )
    store: bool | None = Field(
        default=None, description="Nothing of a completion is kept (a session_id keeps a session)."
    )
    holodeck: HoloDeckExtension = Field(default_factory=HoloDeckExtension)

    def asked(self) -> dict[str, tuple[str, Any]]:
        """The turn's settings this request asks for, each with its field's name."""
        tokens = "max_completion_tokens" if self.max_completion_tokens else "max_tokens"
        return {
            "temperature": ("temperature", self.temperature),
            "top_p": ("top_p", self.top_p),
            "max_tokens": (tokens, self.max_completion_tokens or self.max_tokens),
            "stop": ("stop", self.stop or None),
            "seed": ("seed", self.seed),
            "presence_penalty": ("presence_penalty", self.presence_penalty),
            "frequency_penalty": ("frequency_penalty", self.frequency_penalty),
            "parallel_tool_calls": ("parallel_tool_calls", self.parallel_tool_calls),
            "tool_choice": ("tool_choice", self.tool_choice),
            "output": ("response_format", self.response_format),
        }


# fields read nowhere here, accepted with a value that asks for nothing (clients such
# as LangChain's and the OpenAI Agents SDK send some of them by default)
_NO_EFFECT: dict[str, tuple[Any, ...]] = {
    "tools": (None, []),
    "functions": (None, []),
    "function_call": (None, "auto", "none"),
    "logit_bias": (None, {}),
    "logprobs": (None, False),
    "top_logprobs": (None, 0),
    "service_tier": (None, "auto", "default"),
    "modalities": (None, ["text"]),
    "audio": (None,),
    "prediction": (None,),
    "web_search_options": (None,),
    "reasoning_effort": (None,),
    "verbosity": (None,),
}


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "holodeck"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class CompletionMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: CompletionMessage
    finish_reason: Literal["stop", "content_filter"] = Field(
        default="stop", description="`content_filter` when a guardrail blocked the turn."
    )


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float | None = Field(
        default=None,
        description="A HoloDeck extension: what the turn cost in US dollars; null when the "
        "model has no price.",
    )


class Completion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: CompletionUsage
    holodeck: dict[str, Any] | None = None


@chat_router.get("/v1/models", response_model=ModelList, responses=_ERRORS)
async def models(request: Request) -> dict[str, Any]:
    started = int(request.app.state.started)
    agents = state_of(request).registry.agents
    return {"object": "list", "data": [{"id": name, "created": started} for name in sorted(agents)]}


@chat_router.get("/v1/models/{model_id}", response_model=ModelCard, responses=_ERRORS)
async def model(model_id: str, request: Request) -> dict[str, Any]:
    if model_id not in state_of(request).registry.agents:
        raise _no_model(model_id)
    return {"id": model_id, "created": int(request.app.state.started)}


async def served_model(request: Request, name: str) -> ServedAgent:
    try:
        return await state_of(request).registry.get(name)
    except ApiError as exc:
        if exc.status == 404:
            raise _no_model(name) from None
        raise


def _no_model(name: str) -> ApiError:
    return ApiError(
        404,
        "model_not_found",
        f"no agent named {name!r} is served here: the model does not exist",
        hint="GET /v1/models lists the agents",
        param="model",
    )


@chat_router.post(
    "/v1/chat/completions",
    response_model=Completion,
    response_model_exclude_none=True,
    responses={
        **_ERRORS,
        # chunks are JSON, and the last is `[DONE]`
        200: {"content": {"text/event-stream": {"schema": sse_schema(None, json_data=False)}}},
    },
)
async def completions(body: CompletionRequest, request: Request) -> Any:
    state = state_of(request)
    served = await served_model(request, body.model)
    extra = body.model_extra or {}
    refuse_client_tools(extra)
    refuse_unknown(extra, _NO_EFFECT, "/v1/chat/completions")
    settings = turn_settings(served, body.asked())
    sent = conversation(body.messages, served.spec.interaction.input_modalities)
    extension = body.holodeck
    session = None
    if extension.session_id is None:
        session = Session(served.agent, messages=sent.history)
    elif sent.prompt is None:
        raise ApiError(
            400,
            "unsupported",
            "messages: with holodeck.session_id the stored session is the history; "
            "a conversation ending with `tool` messages continues the history sent",
            hint="end `messages` with the user's message, or leave out holodeck.session_id",
            param="messages",
        )
    else:
        await refuse_anothers_session(request, served, extension.session_id)
    turn = ServedTurn(
        served=served,
        session_id=extension.session_id or (session.id if session else ""),
        request_id=request_id_of(request),
        message=sent.prompt or "",
        endpoint="/v1/chat/completions",
        owner=key_name_of(request),
        can_pause=False,  # no way to ask: a turn that pauses is a 409 naming /v1/chat
        settings=settings,
        client_fields=_client_fields(body.user, body.metadata),
        continues=sent.prompt is None,
        # OpenAI's end-user id: whose long-term memories, under the key, as /v1/chat's user_id
        user_id=body.user if served.spec.memory.long_term is not None else None,
    )
    events = await open_turn(
        request,
        turn,
        attachments=sent.attachments,
        session=session,
        stream_text=body.stream,
    )
    completion_id = f"chatcmpl-{turn.request_id}"
    if body.stream:
        include_usage = body.stream_options is not None and body.stream_options.include_usage
        return EventSourceResponse(
            _chunks(turn, events, completion_id, extension.tool_calls, include_usage),
            ping=15,
            shutdown_grace_period=state.options.shutdown_grace_seconds,
        )
    await run_through(request, events)
    answer = turn.answer_json()
    return {
        "id": completion_id,
        "created": int(time.time()),
        "model": served.name,
        "choices": [{"message": {"content": answer["response"]}, "finish_reason": _finish(turn)}],
        "usage": _openai_usage(turn),
        "holodeck": _extension(turn, answer) if extension.tool_calls else None,
    }


def _client_fields(user: str | None, metadata: dict[str, str] | None) -> dict[str, Any]:
    """What the client says of itself, for the request log (it tunes nothing)."""
    fields: dict[str, Any] = {}
    if user:
        fields["user"] = user
    if metadata:
        fields["metadata"] = metadata
    return fields


def _openai_usage(turn: ServedTurn) -> dict[str, Any]:
    usage = turn.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        # an extra field: OpenAI's clients keep it (as `model_extra`) and ignore it
        "cost_usd": None if turn.cost is None else float(turn.cost),
    }


def _finish(turn: ServedTurn) -> str:
    """OpenAI's reason: `content_filter` when a guardrail blocked (the answer is then
    the guardrail's message), else `stop`."""
    return "content_filter" if turn.blocked else "stop"


def _extension(turn: ServedTurn, answer: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": turn.session_id, "tool_calls": answer["tool_calls"]}


async def _chunks(
    turn: ServedTurn,
    events: AsyncIterator[Event],
    completion_id: str,
    tool_calls: bool,
    include_usage: bool,
) -> AsyncIterator[ServerSentEvent]:
    created = int(time.time())
    model = turn.served.name

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> ServerSentEvent:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return ServerSentEvent(data=json.dumps(data, ensure_ascii=False))

    yield chunk({"role": "assistant", "content": ""})
    try:
        async for event in events:
            if isinstance(event, TextDelta) and not event.agent:
                yield chunk({"content": event.text})
            elif isinstance(event, ToolCallFinished) and tool_calls:
                call = {**call_json(event), "parent_id": event.parent_call_id}
                yield chunk({}, holodeck={"tool_call": call})
    except ApiError as exc:
        error = openai_error_body(exc.status, exc.kind, exc.message, exc.hint, exc.param)
        yield ServerSentEvent(data=json.dumps({"error": error}))
        return
    yield chunk({}, _finish(turn))
    if include_usage:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _openai_usage(turn),
        }
        yield ServerSentEvent(data=json.dumps(data))
    yield ServerSentEvent(data="[DONE]")
