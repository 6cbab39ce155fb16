"""How deep a JSON request body may nest, checked before any route parses it: Python's
JSON parsers recurse per level, and a body nested a thousand levels deep would end in a
`RecursionError` (a 500) on one route and a vague 400 on another. Every route that
reads a body (/v1/chat, OpenAI, AG-UI, A2A, MCP, uploads) sits behind `NestingLimit`,
which answers 400 naming the limit, as a definition file nested too deeply is refused.

    >>> too_deep(b'{"a": [[1]], "b": "[[[[["}', 3)
    False
    >>> too_deep(b"[" * 4 + b"]" * 4, 3)
    True
"""

from __future__ import annotations

import operator
import re
from itertools import accumulate, repeat

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from holodeck.server._errors import ApiError, refuse
from holodeck.spec.yaml.limits import MAX_DEPTH

# a JSON string, escapes included: brackets inside one do not nest anything
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_JSON_NESTS = re.compile(rb"\s*[\[{]")  # a body that begins as an array or an object
# an opening bracket counts +1, a closing one -1 (after the 1 subtracted from each)
_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `body` nests more than `limit` arrays and objects deep.
    Linear and in C, whatever the body: strings out, then the running depth."""
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if len(brackets) <= limit:
        return False
    steps: map[int] = map(operator.sub, brackets.translate(_STEPS), repeat(1))
    deepest: int = max(accumulate(steps))
    return deepest > limit


class NestingLimit:
    """Refuses, with 400, a JSON body that nests more than `MAX_DEPTH` levels deep. Only
    bodies that begin as JSON arrays or objects are looked at (an upload's .tar.gz is not);
    the body is handed on whole, then what the client sends next (its disconnect)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = bytearray()
        while True:  # the size was bounded already (BodyLimit, or the server's length)
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        if _JSON_NESTS.match(body) and too_deep(bytes(body)):
            error = ApiError(
                400,
                "too_deep",
                f"the JSON body nests more than {MAX_DEPTH} arrays and objects deep",
                hint="flatten the structure: no request this server takes nests that deep",
            )
            await refuse(scope, _replay(messages, receive), send, error)
            return
        await self.app(scope, _replay(messages, receive), send)


def _replay(messages: list[Message], then: Receive) -> Receive:
    """A `receive` giving the messages read already, then what `then` gives."""
    queue = list(messages)

    async def receive() -> Message:
        return queue.pop(0) if queue else await then()

    return receive
