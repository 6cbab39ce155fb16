"""AG-UI: `POST /awp` (the only agent) and `POST /awp/{agent}` take an AG-UI
`RunAgentInput` and answer with the AG-UI event stream (Server-Sent Events, encoded by
the `ag-ui-protocol` encoder). A thin adapter over a served turn, as /v1/chat is: the
same keys, session ownership, limits, request log line and trace span.

The thread is the HoloDeck session (`threadId` is the session id) and the server keeps
its history: each run takes the input's last message, a user message, as the turn's
message, as /v1/chat takes `message`. (pydantic-ai's AG-UI adapter runs a bare
pydantic-ai agent on the history the client sends; HoloDeck's turns run in its own
`Session`: stored history, trimming, caps, fallbacks, sub-agents.) The input's `context`
entries (what the page knows: a description and a value each) follow the user's text in
the turn's message, so the model reads them with it.

The input's `tools` are the page's own tools (CopilotKit's frontend actions): the model
is offered them with the agent's own, and a call to one ends the run with its
TOOL_CALL_START/ARGS/END for the page to run (the session keeps the turn paused on it).
The next run ends its messages with the `tool` message(s) carrying the results, and the
turn goes on from there. The input's `state` is kept per thread (`_state`) and
returned, with the server's own keys, in the run's STATE_SNAPSHOT.

A turn paused on calls that wait for a person's approval ends its run with an interrupt
outcome (`_interrupts`); the next run's `resume` carries the decisions and the same turn
goes on: an approved call runs, a denied one tells the model why.

The `ag-ui-protocol` types take most of a second to import: they are imported on the
first AG-UI request, not when the server starts."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import StreamingResponse

from holodeck.runtime import Attachment, Event
from holodeck.server._errors import ApiError
from holodeck.server._state import key_name_of, request_id_of, state_of
from holodeck.server._turns import ServedTurn, open_turn, refuse_anothers_session
from holodeck.server._wire import AgentName, error_responses, event_stream, json_body
from holodeck.server.agui._events import AguiRun, state_of_turn
from holodeck.server.agui._interrupts import approvals_of
from holodeck.server.agui._page_tools import page_tools_of, tool_results_of
from holodeck.server.agui._state import thread_state

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput

router = APIRouter()

_SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_HINT = "send an AG-UI RunAgentInput: {threadId, runId, messages: [..., {role: 'user', ...}]}"
_ERRORS = error_responses(401, 404, 409, 413, 422, 429, 502, 503)
_EVENTS = [
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "RUN_FINISHED",
    "RUN_ERROR",
]
_STREAM_DOC = event_stream(
    "The AG-UI event stream: each event's `data` is one AG-UI event "
    f"(its `type` one of {', '.join(_EVENTS)})."
)
_INPUT_DOC = json_body(
    {
        "type": "object",
        "description": "An AG-UI RunAgentInput. `threadId` is the session id; "
        "the last message, from the user, is the turn's message.",
        "required": ["threadId", "runId", "messages"],
        "properties": {
            "threadId": {"type": "string", "pattern": r"^[A-Za-z0-9._:-]{1,128}$"},
            "runId": {"type": "string"},
            "messages": {"type": "array", "items": {"type": "object"}},
            "state": {},
            "tools": {"type": "array", "items": {"type": "object"}},
            "context": {"type": "array", "items": {"type": "object"}},
            "forwardedProps": {},
            "resume": {"type": "array", "items": {"type": "object"}},
        },
    }
)
_DOC: dict[str, Any] = {
    "responses": {**_ERRORS, 200: _STREAM_DOC},
    "openapi_extra": _INPUT_DOC,
    "response_class": StreamingResponse,
}


@router.post("/awp", summary="Run the agent over AG-UI", **_DOC)
async def awp(request: Request) -> StreamingResponse:
    return await _run(request, None, "/awp")


@router.post("/awp/{agent}", summary="Run an agent over AG-UI", **_DOC)
async def awp_agent(
    request: Request, agent: Annotated[AgentName, Path(description="The agent's name.")]
) -> StreamingResponse:
    return await _run(request, agent, "/awp/{agent}")


async def _run(request: Request, agent: str | None, endpoint: str) -> StreamingResponse:
    run_input = await _input(request)
    outputs = tool_results_of(run_input)
    approvals = approvals_of(run_input)
    if outputs is None and approvals is None:
        message, attachments = _message_of(run_input)
        message += _context_of(run_input)
    else:  # the paused turn goes on: the log line says with what
        answered = [*(outputs or {}), *(approvals or {})]
        message, attachments = f"(answers to {', '.join(answered)})", []
    served = await state_of(request).registry.get(agent)
    await refuse_anothers_session(request, served, run_input.thread_id)
    page_state = await thread_state(
        served, key_name_of(request), run_input.thread_id, run_input.state
    )
    turn = ServedTurn(
        served=served,
        session_id=run_input.thread_id,
        request_id=request_id_of(request),
        message=message,
        endpoint=endpoint,
        owner=key_name_of(request),
        client_tools=page_tools_of(run_input, served.spec),
        outputs=outputs,
        approvals=approvals,
    )
    events = await open_turn(request, turn, attachments=attachments)
    from ag_ui.encoder import EventEncoder

    encoder = EventEncoder(accept=request.headers.get("accept", ""))
    run = AguiRun(
        run_input.thread_id,
        run_input.run_id,
        shown=frozenset(approvals or ()),
        # messages name their author when another agent may answer the thread
        answering=turn.answering if served.spec.handoffs else None,
    )
    return StreamingResponse(
        _stream(encoder, run, turn, events, page_state),
        media_type=encoder.get_content_type(),
        headers={"X-Request-ID": turn.request_id, "Cache-Control": "no-cache"},
    )


async def _stream(
    encoder: Any,
    run: AguiRun,
    turn: ServedTurn,
    events: AsyncIterator[Event],
    page_state: dict[str, Any],
) -> AsyncIterator[str]:
    yield encoder.encode(run.started())
    try:
        async for event in events:
            for sent in run.events_of(event):
                yield encoder.encode(sent)
    except ApiError as exc:  # after the stream began: the run ends with RUN_ERROR
        for sent in run.failed(exc.kind, exc.message):
            yield encoder.encode(sent)
        return
    answer = turn.answer_json()
    state = {**page_state, **state_of_turn(answer)}
    pending = turn.final.pending if turn.final is not None else ()
    for sent in run.finished(state, answer["output"], pending):
        yield encoder.encode(sent)


async def _input(request: Request) -> RunAgentInput:
    """The body as a RunAgentInput, or a 422 saying what is wrong where."""
    body = await request.body()
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(422, "invalid_request", "the body is not JSON", hint=_HINT) from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_request", "the body is not a JSON object", hint=_HINT)
    from ag_ui.core import RunAgentInput
    from pydantic import ValidationError

    try:
        run_input = RunAgentInput.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]
        ]
        raise ApiError(422, "invalid_request", "; ".join(problems), hint=_HINT) from None
    if not _SESSION_ID.fullmatch(run_input.thread_id):
        raise ApiError(
            422,
            "invalid_request",
            "threadId: letters, digits and `._:-`, at most 128 characters",
            hint="the thread is the HoloDeck session: use an id such as a UUID",
        )
    return run_input


def _message_of(run_input: RunAgentInput) -> tuple[str, list[Attachment]]:
    """The turn's message: the text and files of the input's last message, a user's."""
    if not run_input.messages or run_input.messages[-1].role != "user":
        raise ApiError(
            422,
            "invalid_request",
            "messages: the last message is neither the user's nor a tool's result",
            hint="end `messages` with the user's message, or with the `tool` messages "
            "answering the page's tool calls; the server keeps the thread's history",
        )
    content = run_input.messages[-1].content
    texts: list[str] = []
    attachments: list[Attachment] = []
    if isinstance(content, str):
        texts.append(content)
    else:
        for index, part in enumerate(content):
            if part.type == "text":
                texts.append(part.text)
            else:
                attachments.append(_attachment(index, part))
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        raise ApiError(
            422,
            "invalid_request",
            "messages: the user's last message has no text",
            hint="say something in the message's `content`",
        )
    return text, attachments


def _context_of(run_input: RunAgentInput) -> str:
    """The input's context entries as text to follow the user's message ("" for none):
    the model has no other way to read them, and they are kept with the message, so a
    later turn still knows what the page said then."""
    lines = [f"- {c.description}: {c.value}" for c in run_input.context or ()]
    return "\n\nContext from the application:\n" + "\n".join(lines) if lines else ""


def _attachment(index: int, part: Any) -> Attachment:
    where = f"messages[-1].content.{index}"
    source = part.source
    if source.type != "data":
        raise ApiError(
            422,
            "invalid_request",
            f"{where}: a file is sent by value (source type `data`), not `{source.type}`",
            hint="send the file's bytes base64-encoded in `source.value`",
        )
    try:
        data = base64.b64decode(source.value, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(422, "invalid_request", f"{where}.source.value: not base64") from None
    return Attachment(data, source.mime_type, "")
