"""What HoloDeck's HTTP services share: the agent server (`holodeck serve`) and the runs
dashboard (`holodeck test view`) answer errors in one shape, give every request an id,
refuse DNS rebinding on a loopback address the same way and send the same security
headers. It sits under both (they do not import each other) and uses Starlette alone.

    app.add_middleware(LoopbackOnly)          # a loopback listener answers only its names
    app.add_middleware(RequestIds)            # outermost: every answer has an id
    install_error_handlers(app, log=log)      # {"error": {type, message, hint}, "request_id"}
    raise ApiError(404, "not_found", "no run 'x'", hint="pick one from /api/runs")
"""

from __future__ import annotations

from holodeck.http._errors import (
    ApiError,
    Respond,
    error_body,
    error_response,
    install_error_handlers,
    refuse,
    request_id_of,
)
from holodeck.http._headers import SECURITY_HEADERS, SecurityHeaders
from holodeck.http._hosts import LoopbackOnly, loopback_host
from holodeck.http._request_ids import RequestIds

__all__ = [
    "SECURITY_HEADERS",
    "ApiError",
    "LoopbackOnly",
    "RequestIds",
    "Respond",
    "SecurityHeaders",
    "error_body",
    "error_response",
    "install_error_handlers",
    "loopback_host",
    "refuse",
    "request_id_of",
]
