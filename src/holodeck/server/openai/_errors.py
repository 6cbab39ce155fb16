"""Refusals on the OpenAI-compatible routes, in OpenAI's own error shape
`{"error": {message, type, param, code}}`, so the official SDKs raise their typed
errors (`BadRequestError`, `NotFoundError`, ...) with the message intact."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

OPENAI_PATHS = ("/v1/chat/completions", "/v1/models", "/v1/responses")

# OpenAI's `type` for a status; HoloDeck's own kind goes in `code`
_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    429: "rate_limit_error",
}


def is_openai_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in OPENAI_PATHS)


def openai_error_type(status: int) -> str:
    if status in _TYPES:
        return _TYPES[status]
    return "server_error" if status >= 500 else "invalid_request_error"


def openai_error_body(
    status: int, kind: str, message: str, hint: str | None, param: str | None
) -> dict[str, Any]:
    """The `error` object: OpenAI's four fields, and HoloDeck's `hint` beside them."""
    text = message if not hint else f"{message} ({hint})"
    return {
        "message": text,
        "type": openai_error_type(status),
        "param": param,
        "code": kind,
        "hint": hint,
    }


class OpenAIError(BaseModel):
    message: str = Field(description="What went wrong, ending with how to fix it.")
    type: str = Field(
        description="OpenAI's kind: `invalid_request_error`, `authentication_error`, "
        "`permission_error`, `rate_limit_error` or `server_error`."
    )
    param: str | None = Field(description="The request field at fault, when one is.")
    code: str | None = Field(description="HoloDeck's kind of error, such as `model_not_found`.")
    hint: str | None = None


class OpenAIErrorResponse(BaseModel):
    error: OpenAIError
    request_id: str | None = None


def openai_error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses` entries of the errors an OpenAI route can answer, in OpenAI's
    shape, for /openapi.json."""
    responses: dict[int | str, dict[str, Any]] = {
        status: {"model": OpenAIErrorResponse} for status in statuses
    }
    # a request the route cannot read is a 400 in this shape too; a 4XX entry also keeps
    # FastAPI from listing its own 422, which these routes never answer
    responses["4XX"] = {"model": OpenAIErrorResponse, "description": "Refused request"}
    return responses
