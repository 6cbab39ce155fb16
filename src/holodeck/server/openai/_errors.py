"""Refusals on the OpenAI-compatible routes, in OpenAI's own error shape
`{"error": {message, type, param, code}}`, so the official SDKs raise their typed
errors (`BadRequestError`, `NotFoundError`, ...) with the message intact."""

from __future__ import annotations

from typing import Any

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
