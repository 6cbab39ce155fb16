"""The HTTP API's request and response bodies. FastAPI builds /openapi.json from them,
so the schema a client reads is the one the server checks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from holodeck.server._protocols import PROTOCOLS

# Session ids travel in URLs and store keys: keep them to a safe alphabet.
SessionId = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9._:-]{1,128}$"),
    Field(description="Letters, digits and `._:-`, at most 128 characters."),
]
AgentName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
UserId = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9._@:-]{1,128}$"),
    Field(description="A user of the API key's: letters, digits and `._@:-`, at most 128."),
]
BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttachmentIn(Body):
    """A file sent with the message: an image or a document, base64-encoded."""

    media_type: Annotated[str, StringConstraints(pattern=r"^[\w.+-]+/[\w.+-]+$")] = Field(
        examples=["image/png"]
    )
    data: Annotated[str, StringConstraints(min_length=4, pattern=BASE64)] = Field(
        description="The file's bytes, base64-encoded."
    )
    name: Annotated[str, StringConstraints(max_length=255)] = ""


class ChatRequest(Body):
    message: Annotated[str, StringConstraints(min_length=1)]
    session_id: SessionId | None = Field(
        default=None, description="Continue this conversation; a new one when absent."
    )
    agent: AgentName | None = Field(
        default=None, description="Which agent answers; needed when several are served."
    )
    user_id: UserId | None = Field(
        default=None,
        description="Whose long-term memories the turn reaches: a user of the API key's "
        "(by default the key's own).",
    )
    attachments: list[AttachmentIn] = Field(default_factory=list)
    stream: bool = Field(
        default=False, description="Answer with Server-Sent Events as the turn runs."
    )


class ToolCallOut(BaseModel):
    id: str
    name: str
    args: dict[str, Any]
    result: Any = None
    error: str | None = None
    duration_ms: float
    agent: str = Field(default="", description="The sub-agent that made the call; '' = top.")
    calls: list[ToolCallOut] = Field(
        default_factory=list, description="Calls a sub-agent made while answering this one."
    )


class GuardrailOut(BaseModel):
    """A guardrail that matched: it blocked the message or the answer (the answer is
    then its message), or redacted what matched."""

    guardrail: str = Field(description="The check's name, else `input.0`, `output.1`, ...")
    side: Literal["input", "output"]
    action: Literal["block", "redact"]
    kind: str = Field(description="block_patterns, block_keywords, pii, max_length or judge.")
    message: str | None = None
    reason: str | None = Field(default=None, description="A judge's reason.")
    agent: str = Field(default="", description="The sub-agent whose guardrail it was.")


class UsageOut(BaseModel):
    input_tokens: int
    output_tokens: int
    total_tokens: int
    requests: int
    cost_usd: float | None = Field(
        default=None,
        description="What the turn (a session's: the conversation so far) cost in US "
        "dollars, by the model's `cost:` block or the bundled price list; null when the "
        "model has no price.",
    )


class PendingCallOut(BaseModel):
    """A tool call that waits for approval: decide it with
    `POST /v1/sessions/{session_id}/approvals/{id}`."""

    id: str
    name: str
    args: dict[str, Any]
    agent: str = ""


class ApprovalIn(Body):
    """A decision on a tool call that waits for approval."""

    approve: bool
    reason: Annotated[str, StringConstraints(max_length=2000)] | None = Field(
        default=None, description="Why; a denial's reason is what the model is told."
    )
    agent: AgentName | None = Field(
        default=None, description="The session's agent; needed when several are served."
    )
    stream: bool = Field(
        default=False,
        description="Once every call is decided, stream the rest of the turn as Server-Sent "
        "Events (as /v1/chat does).",
    )


class HandoffOut(BaseModel):
    """The conversation passed from one agent to another during the turn (`handoffs:`)."""

    from_agent: str
    to_agent: str
    reason: str | None = Field(default=None, description="The handing agent's reason, if any.")
    back: bool = Field(
        default=False, description="It returned to the agent that had handed it over."
    )
    tool: str = Field(default="", description="The transfer tool the model called.")


class ChatResponse(BaseModel):
    response: str
    output: Any = Field(default=None, description="The parsed answer of a response_format.")
    session_id: str
    agent: str = Field(description="The served agent the request named.")
    answered_by: str = Field(
        default="",
        description="The agent that wrote the answer: the served one, or the agent a handoff "
        "passed the conversation to; it answers the session's next message too.",
    )
    handoffs: list[HandoffOut] = Field(
        default_factory=list, description="Handoffs made in this turn, in order."
    )
    tool_calls: list[ToolCallOut]
    usage: UsageOut
    model: str | None = Field(
        default=None, description="The model that answered (a fallback, when one took over)."
    )
    guardrails: list[GuardrailOut] = Field(
        default_factory=list, description="Guardrails that blocked or redacted in this turn."
    )
    request_id: str
    pending: list[PendingCallOut] = Field(
        default_factory=list,
        description="Tool calls waiting for approval: the turn is paused (`response` is "
        "empty) until each is decided.",
    )


class ErrorDetail(BaseModel):
    type: str
    message: str
    hint: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail
    request_id: str | None = None


class HealthResponse(BaseModel):
    status: Literal["ok"] = "ok"


class ModalitiesOut(BaseModel):
    """What an agent takes and gives: its `interaction.modalities`."""

    input: list[Literal["text", "image", "audio", "video", "file"]] = ["text"]
    output: list[Literal["text", "image", "audio"]] = ["text"]


class AgentStatus(BaseModel):
    name: str
    description: str | None = None
    status: Literal["loading", "ready", "failed"]
    error: str | None = None
    uploaded: bool = False
    tool_failures: dict[str, str] = Field(
        default_factory=dict,
        description="Tools that could not start (a search tool whose source or store failed), "
        "each with the reason: the agent answers without them.",
    )
    protocols: list[str] = Field(
        default_factory=list,
        description="The protocols it answers over: `chat` (/v1/chat), `openai` "
        "(/v1/chat/completions), `ag-ui` (/awp, /awp/{agent}), `mcp` (/mcp), `a2a` "
        "(/a2a/{agent}, when the a2a-sdk package is installed).",
        json_schema_extra={"items": {"type": "string", "enum": list(PROTOCOLS)}},
    )
    modalities: ModalitiesOut | None = Field(
        default=None,
        description="What it accepts (attachments of these kinds) and answers with; "
        "null for a stored upload that does not load.",
    )


class ReadyResponse(BaseModel):
    ready: bool
    agents: list[AgentStatus]


class AgentList(BaseModel):
    agents: list[AgentStatus]


class SessionMessage(BaseModel):
    role: Literal["user", "assistant", "tool_call", "tool_result", "system"]
    content: Any
    name: str | None = Field(default=None, description="The tool, for tool messages.")


class SessionOut(BaseModel):
    session_id: str
    agent: str
    answering_agent: str = Field(
        default="",
        description="The agent that answers the next message: the served one, or the "
        "agent a handoff passed the conversation to.",
    )
    created_at: float
    updated_at: float
    messages: list[SessionMessage]
    usage: UsageOut
    pending: list[PendingCallOut] = Field(
        default_factory=list, description="Tool calls the paused last turn waits for."
    )


class Deleted(BaseModel):
    deleted: bool


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses` entries of the errors a route can answer, for /openapi.json."""
    return {status: {"model": ErrorResponse} for status in statuses}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    """The `openapi_extra` of a route that reads its JSON body itself."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def event_stream(description: str, events: list[str] | None = None) -> dict[str, Any]:
    """The 200 entry of a route whose answer may stream as JSON Server-Sent Events."""
    return {
        "description": description,
        "content": {"text/event-stream": {"schema": sse_schema(events, json_data=True)}},
    }


def sse_schema(events: list[str] | None, json_data: bool) -> dict[str, Any]:
    """How /openapi.json describes one Server-Sent Event of a streamed answer."""
    data: dict[str, Any] = {"type": "string"}
    if json_data:
        data |= {"contentMediaType": "application/json", "contentSchema": {"type": "object"}}
    event: dict[str, Any] = {"type": "string"}
    if events:
        event["enum"] = events
    return {
        "type": "object",
        "required": ["data"],
        "properties": {"event": event, "data": data},
    }
