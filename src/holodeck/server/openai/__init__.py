"""The OpenAI APIs: `GET /v1/models`, `POST /v1/chat/completions` (`_chat_completions`)
and the Responses API, `/v1/responses` (`_responses`), with what a request may ask of
an agent (`_checks`) and refusals in OpenAI's error shape (`_errors`).

The names are imported when first used: the server's error handlers need only the error
shape, and the routes need those handlers' `ApiError`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports

if TYPE_CHECKING:
    from holodeck.server.openai._chat_completions import chat_router as chat_router
    from holodeck.server.openai._errors import is_openai_path as is_openai_path
    from holodeck.server.openai._errors import openai_error_body as openai_error_body
    from holodeck.server.openai._responses import responses_router as responses_router

_EXPORTS = {
    "chat_router": "holodeck.server.openai._chat_completions",
    "responses_router": "holodeck.server.openai._responses",
    "is_openai_path": "holodeck.server.openai._errors",
    "openai_error_body": "holodeck.server.openai._errors",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
