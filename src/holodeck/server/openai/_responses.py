"""The OpenAI Responses API: `POST /v1/responses` answers as the agent named by `model`
(streamed as `response.*` events or not), `previous_response_id` continues the stored
session the earlier response ran in, and `GET /v1/responses/{id}` reads a response back.
The OpenAI Agents SDK and newer clients speak this API by default.

Each response runs a turn in a stored session of the request's key (the same auth,
limits, guardrails and request log as /v1/chat); the response itself is kept beside it
in the agent's store, under the key's name, so another key reads none (404). With
`store: false` nothing is kept: the turn runs on a copy of the conversation it goes on
from, and the response cannot be read back or continued. As on
/v1/chat/completions, every request field is honoured or refused with 400 in OpenAI's
error shape (`_checks`), never dropped."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from holodeck.runtime import Event, Session, TextDelta, TurnSettings, messages_from
from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._turns import (
    ServedTurn,
    open_turn,
    refuse_anothers_session,
    run_through,
    session_key,
)
from holodeck.server._wire import sse_schema
from holodeck.server.openai._chat_completions import served_model
from holodeck.server.openai._checks import (
    refuse_client_tools,
    refuse_unknown,
    turn_settings,
)
from holodeck.server.openai._errors import openai_error_body, openai_error_responses

responses_router = APIRouter()
_ERRORS = openai_error_responses(400, 401, 404, 409, 413, 429, 502, 503)

_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
    "response.incomplete",
    "error",
]

# fields with nothing to honour here, accepted only with a value that asks for nothing
_NO_EFFECT: dict[str, tuple[Any, ...]] = {
    "include": (None, []),
    "reasoning": (None, {}),
    "truncation": (None, "disabled"),
    "stream_options": (None, {}),
    "background": (None, False),
    "conversation": (None,),
    "prompt": (None,),
    "service_tier": (None, "auto", "default"),
    "tools": (None, []),
    "functions": (None, []),
    "top_logprobs": (None, 0),
    "max_tool_calls": (None,),
}


class InputPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class InputItem(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "message"
    role: Literal["system", "developer", "user", "assistant"] | None = None
    content: str | list[InputPart] | None = None


class ResponseRequest(BaseModel):
    # other fields are read by `_check`: accepted when the agent does as asked
    model_config = ConfigDict(extra="allow")
    model: Annotated[str, Field(min_length=1)]
    input: str | Annotated[list[InputItem], Field(min_length=1)]
    instructions: str | None = None
    previous_response_id: str | None = None
    stream: bool = False
    store: bool = True
    metadata: dict[str, str] | None = None
    user: str | None = None
    max_output_tokens: Annotated[int, Field(ge=1)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    parallel_tool_calls: bool | None = None
    tool_choice: str | dict[str, Any] | None = None
    text: dict[str, Any] | None = None


@responses_router.post(
    "/v1/responses",
    responses={
        **_ERRORS,
        200: {
            "description": "The response object, or its `response.*` events when streamed.",
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "text/event-stream": {"schema": sse_schema(_EVENTS, json_data=True)},
            },
        },
    },
)
async def create_response(body: ResponseRequest, request: Request) -> Any:
    state = state_of(request)
    served = await served_model(request, body.model)
    settings = _settings(body, served)
    owner = key_name_of(request)
    prompt, history = _conversation(body.input)
    unsaved: Session | None = None  # `store: false`: the turn's conversation, kept nowhere
    if body.previous_response_id is not None:
        if body.instructions:
            raise ApiError(
                400,
                "unsupported",
                "`instructions` with `previous_response_id`: a stored conversation keeps "
                "the instructions it started with",
                hint="send `instructions` only with the first response of a conversation",
                param="instructions",
            )
        if history:
            raise ApiError(
                400,
                "unsupported",
                "input: with `previous_response_id`, only the next user message is sent; "
                "the conversation so far is stored",
                hint="send the new user message alone",
                param="input",
            )
        record = await _load(served, owner, body.previous_response_id)
        if record is None:
            raise _no_response(body.previous_response_id, "previous_response_id")
        session_id = str(record["session_id"])
        await refuse_anothers_session(request, served, session_id)
        if not body.store:
            unsaved = await _unsaved_copy(served, owner, body.previous_response_id, session_id)
    else:
        # a new conversation: what the client sent before the last message is stored as
        # the session's start, so a later response can continue it
        turns = [("system", body.instructions)] if body.instructions else []
        session = Session(served.agent, messages=messages_from(turns + history))
        session_id = session.id
        if not body.store:
            unsaved = session
        elif turns or history:
            await served.store.save(session_key(served, owner, session_id), session.to_json())
    turn = ServedTurn(
        served=served,
        session_id=session_id,
        request_id=request_id_of(request),
        message=prompt,
        endpoint="/v1/responses",
        owner=owner,
        can_pause=False,  # no way to ask: a turn that pauses is a 409 naming /v1/chat
        settings=settings,
        client_fields=_client_fields(body),
        # OpenAI's end-user id: whose long-term memories, under the key, as /v1/chat's user_id
        user_id=body.user if served.spec.memory.long_term is not None else None,
    )
    events = await open_turn(request, turn, session=unsaved, stream_text=body.stream)
    response = _response(body, turn, f"resp_{uuid.uuid4().hex}", "in_progress", "")
    if body.stream:
        return EventSourceResponse(
            _stream(body, turn, events, response),
            ping=15,
            shutdown_grace_period=state.options.shutdown_grace_seconds,
        )
    await run_through(request, events)
    done = _finished(body, turn, response)
    await _keep(body, turn, done)
    return done


@responses_router.get("/v1/responses/{response_id}", responses=_ERRORS)
async def get_response(response_id: str, request: Request) -> Any:
    owner = key_name_of(request)
    for name in sorted(state_of(request).registry.agents):
        served = state_of(request).registry.agents[name]
        record = await _load(served, owner, response_id)
        if record is not None:
            return record["response"]
    raise _no_response(response_id, None)


def _settings(body: ResponseRequest, served: ServedAgent) -> TurnSettings | None:
    """The turn's own settings from the request; a field that cannot be honoured is
    refused by name."""
    extra = body.model_extra or {}
    refuse_client_tools(extra)
    if extra.get("max_tool_calls") is not None:
        raise ApiError(
            400,
            "unsupported",
            "`max_tool_calls`: an agent's tool calls are bounded by its agent.yaml",
            hint="remove `max_tool_calls`",
            param="max_tool_calls",
        )
    refuse_unknown(extra, _NO_EFFECT, "/v1/responses")
    text_format = (body.text or {}).get("format")
    if isinstance(text_format, dict) and text_format.get("type") == "json_schema":
        # the Responses API puts the schema beside `type`, chat completions inside it
        text_format = {"type": "json_schema", "json_schema": text_format}
    return turn_settings(
        served,
        {
            "temperature": ("temperature", body.temperature),
            "top_p": ("top_p", body.top_p),
            "max_tokens": ("max_output_tokens", body.max_output_tokens),
            "parallel_tool_calls": ("parallel_tool_calls", body.parallel_tool_calls),
            "tool_choice": ("tool_choice", body.tool_choice),
            "output": ("text.format", text_format),
        },
    )


def _client_fields(body: ResponseRequest) -> dict[str, Any]:
    """What the client says of itself, for the request log (it tunes nothing)."""
    fields: dict[str, Any] = {}
    if body.user:
        fields["user"] = body.user
    if body.metadata:
        fields["metadata"] = body.metadata
    return fields


def _conversation(items: str | list[InputItem]) -> tuple[str, list[tuple[str, str]]]:
    """The prompt (the last item, the user's) and the (role, text) turns before it."""
    if isinstance(items, str):
        if not items.strip():
            raise ApiError(400, "invalid_request", "input: empty", param="input")
        return items, []
    turns = [(_role(item, index), _text(item, index)) for index, item in enumerate(items)]
    role, prompt = turns[-1]
    if role != "user" or not prompt.strip():
        raise ApiError(
            400,
            "invalid_request",
            "input: the last item must be the user's message, with text",
            hint="end `input` with the user's question",
            param="input",
        )
    return prompt, turns[:-1]


def _role(item: InputItem, index: int) -> str:
    if item.type != "message" or item.role is None:
        raise ApiError(
            400,
            "unsupported",
            f"input.{index}: items of type `{item.type}` are not supported; an agent's tool "
            "calls are its own and run on the server",
            hint="send messages (role and text) only, or continue with previous_response_id",
            param=f"input.{index}",
        )
    return item.role


def _text(item: InputItem, index: int) -> str:
    if item.content is None or isinstance(item.content, str):
        return item.content or ""
    texts = []
    for part in item.content:
        if part.type not in ("input_text", "output_text", "text") or part.text is None:
            raise ApiError(
                400,
                "unsupported",
                f"input.{index}: content of type `{part.type}` is not supported",
                hint="send text parts (`input_text`)",
                param=f"input.{index}",
            )
        texts.append(part.text)
    return "\n".join(texts)


def _response(
    body: ResponseRequest, turn: ServedTurn, response_id: str, status: str, text: str
) -> dict[str, Any]:
    usage = turn.usage
    message = {
        "type": "message",
        "id": f"msg_{response_id[len('resp_') :]}",
        "status": "completed" if status != "in_progress" else "in_progress",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": turn.served.name,
        "output": [message] if status != "in_progress" else [],
        "output_text": text,
        "instructions": body.instructions,
        "previous_response_id": body.previous_response_id,
        "metadata": body.metadata or {},
        "error": None,
        "incomplete_details": {"reason": "content_filter"} if status == "incomplete" else None,
        "parallel_tool_calls": body.parallel_tool_calls is not False,
        "tool_choice": body.tool_choice or "auto",
        "tools": [],
        "temperature": body.temperature,
        "top_p": body.top_p,
        "max_output_tokens": body.max_output_tokens,
        "store": body.store,
        "text": body.text or {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.total_tokens,
            "cost_usd": None if turn.cost is None else float(turn.cost),  # an extra field
        },
        # a response not stored has no session to go on with
        "holodeck": {"session_id": turn.session_id} if body.store else {},
    }


def _finished(body: ResponseRequest, turn: ServedTurn, started: dict[str, Any]) -> dict[str, Any]:
    # `incomplete` (content_filter) when a guardrail blocked: the text is its message
    status = "incomplete" if turn.blocked else "completed"
    text = turn.final.text if turn.final else ""
    done = _response(body, turn, started["id"], status, text)
    done["created_at"] = started["created_at"]
    return done


async def _stream(
    body: ResponseRequest, turn: ServedTurn, events: AsyncIterator[Event], response: dict[str, Any]
) -> AsyncIterator[ServerSentEvent]:
    sequence = 0

    def event(kind: str, **fields: Any) -> ServerSentEvent:
        nonlocal sequence
        data = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        return ServerSentEvent(event=kind, data=json.dumps(data, ensure_ascii=False))

    item_id = f"msg_{response['id'][len('resp_') :]}"
    place = {"item_id": item_id, "output_index": 0, "content_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": []}
    yield event("response.created", response=response)
    yield event("response.in_progress", response=response)
    item = {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant"}
    yield event("response.output_item.added", output_index=0, item={**item, "content": []})
    yield event("response.content_part.added", **place, part=empty)
    try:
        async for update in events:
            if isinstance(update, TextDelta) and not update.agent:
                yield event("response.output_text.delta", **place, delta=update.text, logprobs=[])
    except ApiError as exc:
        error = openai_error_body(exc.status, exc.kind, exc.message, exc.hint, exc.param)
        yield event("error", code=error["code"], message=error["message"], param=error["param"])
        return
    done = _finished(body, turn, response)
    (message,) = done["output"]
    text = done["output_text"]
    yield event("response.output_text.done", **place, text=text, logprobs=[])
    yield event("response.content_part.done", **place, part={**empty, "text": text})
    yield event("response.output_item.done", output_index=0, item=message)
    await _keep(body, turn, done)
    yield event(f"response.{done['status']}", response=done)


async def _unsaved_copy(
    served: ServedAgent, owner: str | None, response_id: str, session_id: str
) -> Session:
    """The stored conversation a `store: false` response goes on from, as a copy: its
    turn is added to neither the stored session nor any other."""
    data = await served.store.load(session_key(served, owner, session_id))
    if data is None:
        raise _no_response(response_id, "previous_response_id")
    return Session.from_json(served.agent, data)


def _record_key(served: ServedAgent, owner: str | None, response_id: str) -> str:
    # `#` is in no session id: a response's record never meets a session
    return served.key(f"#response/{owner or ''}/{response_id}")


async def _keep(body: ResponseRequest, turn: ServedTurn, response: dict[str, Any]) -> None:
    if not body.store:  # `store: false`: nothing to read back or continue from
        return
    record = {"session_id": turn.session_id, "response": response}
    key = _record_key(turn.served, turn.owner, response["id"])
    await turn.served.store.save(key, json.dumps(record).encode())


async def _load(served: ServedAgent, owner: str | None, response_id: str) -> dict[str, Any] | None:
    data = await served.store.load(_record_key(served, owner, response_id))
    if data is None:
        return None
    record: dict[str, Any] = json.loads(data)
    return record


def _no_response(response_id: str, param: str | None) -> ApiError:
    return ApiError(
        404,
        "unknown_response",
        f"no response {response_id!r} (never created by this key, stored with "
        "`store: false`, or expired)",
        hint="use the `id` of a response this key created",
        param=param,
    )
