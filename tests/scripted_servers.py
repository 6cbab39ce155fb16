"""Scripted model servers on 127.0.0.1 that speak the OpenAI Chat Completions, the
Anthropic Messages and the Gemini generateContent wire formats, so the real SDKs can be
exercised over real HTTP.

A test queues the replies it wants (`server.script(...)`), runs an agent against
`server.url`, then reads `server.requests` to see exactly what the SDK sent. Each
reply step is one HTTP response: text, tool calls, an error status, or a delay first.
When the script runs out the server answers HTTP 500 "script exhausted".
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar, Protocol, TypeVar
from urllib.parse import parse_qsl, urlsplit

import pytest

from local_http import LocalHTTPServer

# --- reply steps ------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call the model asks for."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)  # a str is sent verbatim
    id: str | None = None

    @property
    def arguments(self) -> str:
        return self.args if isinstance(self.args, str) else json.dumps(self.args)


@dataclass(frozen=True)
class Reply:
    """A successful response: text (streamed in `chunks`), tool calls, or both."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    input_tokens: int = 11
    output_tokens: int = 7
    chunks: tuple[str, ...] | None = None  # how the text is split when streamed

    @property
    def pieces(self) -> tuple[str, ...]:
        if self.chunks is not None:
            return self.chunks
        if not self.text:
            return ()
        words = self.text.split(" ")
        return (*(w + " " for w in words[:-1]), words[-1])


@dataclass(frozen=True)
class Fail:
    """An error status with the provider's error JSON."""

    status: int
    message: str = ""
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` (cut short when the server stops) before sending `then`."""

    seconds: float
    then: Reply | Fail | None = None


Step = Reply | Fail | Delay


def text(content: str, **kwargs: Any) -> Reply:
    return Reply(text=content, **kwargs)


def tool_calls(*calls: Call, text: str = "", **kwargs: Any) -> Reply:
    return Reply(text=text, calls=calls, **kwargs)


def unauthorized() -> Fail:
    return Fail(401, "Incorrect API key provided.", "invalid_api_key")


def not_found(model: str) -> Fail:
    return Fail(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        "model_not_found",
    )


def rate_limited() -> Fail:
    # retry-after-ms makes the SDK's retry immediate instead of backing off
    return Fail(
        429, "Rate limit reached for requests.", "rate_limit_exceeded", (("retry-after-ms", "1"),)
    )


def server_error() -> Fail:
    return Fail(500, "The server had an error while processing your request.", "server_error")


def delay(seconds: float, then: Reply | Fail | None = None) -> Delay:
    return Delay(seconds, then)


EXHAUSTED = Fail(500, "script exhausted: the test scripted fewer replies than were requested")


# --- recording and serving ---------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """One request as received: path without query, query, lower-cased headers, JSON body."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """Base: a thread serving one wire format; subclasses render the steps."""

    url_suffix = ""

    def __init__(self) -> None:
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Recorded] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                owner._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = LocalHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = self.root + self.url_suffix
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._ids = itertools.count(1)

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def script(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def pending(self) -> int:
        """Steps not yet served."""
        with self._lock:
            return len(self._steps)

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def _next(self) -> Step:
        with self._lock:
            return self._steps.popleft() if self._steps else EXHAUSTED

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        record = Recorded(
            handler.command,
            parts.path,
            dict(parse_qsl(parts.query)),
            {k.lower(): v for k, v in handler.headers.items()},
            body,
        )
        with self._lock:
            self.requests.append(record)
        step = self._next()
        try:
            if isinstance(step, Delay):
                self._stopping.wait(step.seconds)
                if step.then is None or self._stopping.is_set():
                    return  # closing without an answer
                step = step.then
            if not self.accepts(record.path):
                self._send_json(handler, 404, self.error_body(404, f"no route {record.path}", None))
            elif isinstance(step, Fail):
                headers = dict(step.headers)
                self._send_json(
                    handler,
                    step.status,
                    self.error_body(step.status, step.message, step.code),
                    headers,
                )
            elif self.streams(record):
                self._send_stream(handler, self.stream_events(step, record.body or {}))
            else:
                self._send_json(handler, 200, self.complete(step, body or {}))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout, cancellation): nothing to answer

    def _send_json(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _send_stream(self, handler: BaseHTTPRequestHandler, events: Iterator[bytes]) -> None:
        # HTTP/1.0 response: the body ends when the connection closes
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.end_headers()
        for event in events:
            handler.wfile.write(event)
            handler.wfile.flush()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    # subclasses
    def accepts(self, path: str) -> bool:
        raise NotImplementedError

    def streams(self, request: Recorded) -> bool:
        """Whether `request` asks for a streamed answer."""
        return isinstance(request.body, dict) and bool(request.body.get("stream"))

    def error_body(self, status: int, message: str, code: str | None) -> Any:
        raise NotImplementedError

    def stream_events(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        raise NotImplementedError

    def complete(self, reply: Reply, body: dict[str, Any]) -> Any:
        raise NotImplementedError


class OpenAIServer(ScriptedServer):
    """`POST /v1/chat/completions` and Azure's `/openai/deployments/<d>/chat/completions`."""

    url_suffix = "/v1"

    def accepts(self, path: str) -> bool:
        return path == "/v1/chat/completions" or (
            path.startswith("/openai/deployments/") and path.endswith("/chat/completions")
        )

    def error_body(self, status: int, message: str, code: str | None) -> Any:
        kind = {
            401: "invalid_request_error",
            404: "invalid_request_error",
            429: "requests",
        }.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
        return [
            {
                "id": call.id or self.new_id("call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.calls
        ]

    @staticmethod
    def _usage(reply: Reply) -> dict[str, int]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }

    def complete(self, reply: Reply, body: dict[str, Any]) -> Any:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = self._tool_calls(reply)
        return {
            "id": self.new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                }
            ],
            "usage": self._usage(reply),
        }

    def stream_events(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        base = {
            "id": self.new_id("chatcmpl-"),
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": body.get("model", ""),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse({**base, "choices": [choice]})

        yield chunk({"role": "assistant", "content": ""})
        for piece in reply.pieces:
            yield chunk({"content": piece})
        for index, call in enumerate(self._tool_calls(reply)):
            arguments = call["function"]["arguments"]
            head = {"name": call["function"]["name"], "arguments": ""}
            yield chunk({"tool_calls": [{**call, "index": index, "function": head}]})
            middle = len(arguments) // 2
            for part in (arguments[:middle], arguments[middle:]):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
        yield chunk({}, "tool_calls" if reply.calls else "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            yield _sse({**base, "choices": [], "usage": self._usage(reply)})
        yield b"data: [DONE]\n\n"


class AnthropicServer(ScriptedServer):
    """`POST /v1/messages` with Anthropic's SSE events."""

    ERROR_TYPES: ClassVar[dict[int, str]] = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }

    def accepts(self, path: str) -> bool:
        return path == "/v1/messages"

    def error_body(self, status: int, message: str, code: str | None) -> Any:
        kind = self.ERROR_TYPES.get(status, "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": self.new_id("req_"),
        }

    def _content(self, reply: Reply) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": call.id or self.new_id("toolu_"),
                    "name": call.name,
                    "input": json.loads(call.arguments),
                }
            )
        return content

    def complete(self, reply: Reply, body: dict[str, Any]) -> Any:
        return {
            "id": self.new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": self._content(reply),
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def stream_events(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        def event(kind: str, data: dict[str, Any]) -> bytes:
            return f"event: {kind}\n".encode() + _sse({"type": kind, **data})

        yield event(
            "message_start",
            {
                "message": {
                    "id": self.new_id("msg_"),
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", ""),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
                }
            },
        )
        index = 0
        if reply.text:
            block: dict[str, Any] = {"type": "text", "text": ""}
            yield event("content_block_start", {"index": index, "content_block": block})
            for piece in reply.pieces:
                delta = {"type": "text_delta", "text": piece}
                yield event("content_block_delta", {"index": index, "delta": delta})
            yield event("content_block_stop", {"index": index})
            index += 1
        for call in reply.calls:
            block = {
                "type": "tool_use",
                "id": call.id or self.new_id("toolu_"),
                "name": call.name,
                "input": {},
            }
            yield event("content_block_start", {"index": index, "content_block": block})
            arguments = call.arguments
            middle = len(arguments) // 2
            for part in (arguments[:middle], arguments[middle:]):
                delta = {"type": "input_json_delta", "partial_json": part}
                yield event("content_block_delta", {"index": index, "delta": delta})
            yield event("content_block_stop", {"index": index})
            index += 1
        yield event(
            "message_delta",
            {
                "delta": {
                    "stop_reason": "tool_use" if reply.calls else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": reply.output_tokens},
            },
        )
        yield event("message_stop", {})


class GeminiServer(ScriptedServer):
    """The Gemini API: `POST /v1beta/models/{model}:generateContent` and
    `:streamGenerateContent?alt=sse` (Vertex AI's `.../publishers/google/models/{model}:...`
    too). The model is in the path, the key in `x-goog-api-key`; a `Fail`'s `code` is sent
    as the error's `reason` (e.g. API_KEY_INVALID, which Gemini sends with status 400)."""

    STATUSES: ClassVar[dict[int, str]] = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }

    def accepts(self, path: str) -> bool:
        return "/models/" in path and path.endswith((":generateContent", ":streamGenerateContent"))

    def streams(self, request: Recorded) -> bool:
        return request.path.endswith(":streamGenerateContent")

    @staticmethod
    def model_of(request: Recorded) -> str:
        return request.path.rsplit("/models/", 1)[-1].split(":", 1)[0]

    def error_body(self, status: int, message: str, code: str | None) -> Any:
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": self.STATUSES.get(status, "UNKNOWN"),
        }
        if code is not None:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": code,
                    "domain": "googleapis.com",
                }
            ]
        return {"error": error}

    @staticmethod
    def _usage(reply: Reply) -> dict[str, int]:
        return {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        }

    @staticmethod
    def _call_parts(reply: Reply) -> list[dict[str, Any]]:
        parts = []
        for call in reply.calls:
            function: dict[str, Any] = {"name": call.name, "args": json.loads(call.arguments)}
            if call.id is not None:
                function["id"] = call.id
            parts.append({"functionCall": function})
        return parts

    def _response(
        self, parts: list[dict[str, Any]], reply: Reply, *, last: bool, response_id: str
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if last:
            candidate["finishReason"] = "STOP"
        out: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": "scripted",
            "responseId": response_id,
        }
        if last:
            out["usageMetadata"] = self._usage(reply)
        return out

    def complete(self, reply: Reply, body: dict[str, Any]) -> Any:
        parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
        parts += self._call_parts(reply)
        return self._response(parts, reply, last=True, response_id=self.new_id("resp-"))

    def stream_events(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        response_id = self.new_id("resp-")
        pieces = [[{"text": piece}] for piece in reply.pieces]
        # Gemini sends each function call whole, in the chunk after the text
        chunks = [*pieces, self._call_parts(reply)] if reply.calls else pieces
        chunks = chunks or [[]]
        for index, parts in enumerate(chunks):
            last = index == len(chunks) - 1
            yield _sse(self._response(parts, reply, last=last, response_id=response_id))


class EmbeddingsServer(ScriptedServer):
    """`POST /v1/embeddings` and Azure's `/openai/deployments/<d>/embeddings`.

    With nothing scripted it answers every request: one vector per input, hashed from the
    text (the same text always gets the same vector), of `dimensions` length when the
    request asks for one, else `dim`; as float lists or base64 float32 (the SDK's default).
    Scripted `Fail`s and `Delay`s are served first; `fail_always` fails every request.
    `max_in_flight` is the most requests it was answering at once."""

    url_suffix = "/v1"

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.dim = dim
        self.fail_always: Fail | None = None
        self._in_flight = 0
        self.max_in_flight = 0

    def accepts(self, path: str) -> bool:
        return path == "/v1/embeddings" or (
            path.startswith("/openai/deployments/") and path.endswith("/embeddings")
        )

    def _next(self) -> Step:
        if self.fail_always is not None:
            return self.fail_always
        with self._lock:
            return self._steps.popleft() if self._steps else Reply()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            super()._handle(handler)
        finally:
            with self._lock:
                self._in_flight -= 1

    def error_body(self, status: int, message: str, code: str | None) -> Any:
        kind = {401: "invalid_request_error", 429: "requests"}.get(status, "server_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def inputs(self) -> list[list[str]]:
        """The texts of each request received, in order."""
        out = []
        for request in self.requests:
            given = request.body["input"]
            out.append([given] if isinstance(given, str) else list(given))
        return out

    @staticmethod
    def vector(text: str, dim: int) -> list[float]:
        """The vector this server gives `text` (before any normalisation by the client)."""
        seed = hashlib.sha256(text.encode()).digest()
        raw = (seed * (dim // len(seed) + 1))[:dim]
        return [(b - 127.5) / 127.5 for b in raw]

    def complete(self, reply: Reply, body: dict[str, Any]) -> Any:
        given = body.get("input", [])
        texts = [given] if isinstance(given, str) else list(given)
        dim = int(body.get("dimensions") or self.dim)
        data = []
        for index, item in enumerate(texts):
            values = self.vector(str(item), dim)
            embedding: Any = values
            if body.get("encoding_format") == "base64":
                packed = struct.pack(f"<{dim}f", *values)
                embedding = base64.b64encode(packed).decode()
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(str(t).split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


class GeminiEmbeddingsServer(EmbeddingsServer):
    """The Gemini API's `POST /v1beta/models/{model}:batchEmbedContents`, answered as
    `EmbeddingsServer` answers (hashed vectors, `outputDimensionality` long)."""

    url_suffix = ""
    STATUSES = GeminiServer.STATUSES

    def accepts(self, path: str) -> bool:
        return "/models/" in path and path.endswith(":batchEmbedContents")

    def error_body(self, status: int, message: str, code: str | None) -> Any:
        status_name = self.STATUSES.get(status, "UNKNOWN")
        return {"error": {"code": status, "message": message, "status": status_name}}

    def inputs(self) -> list[list[str]]:
        return [
            [part["text"] for item in r.body["requests"] for part in item["content"]["parts"]]
            for r in self.requests
        ]

    def complete(self, reply: Reply, body: dict[str, Any]) -> Any:
        embeddings = []
        for item in body.get("requests", []):
            text = "".join(part.get("text", "") for part in item["content"]["parts"])
            dim = int(item.get("outputDimensionality") or self.dim)
            embeddings.append({"values": self.vector(text, dim)})
        return {"embeddings": embeddings}


def _sse(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def closed_port_url(suffix: str = "/v1") -> str:
    """A URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{suffix}"


# --- fixtures ------------------------------------------------------------------------

_Server = TypeVar("_Server", bound="_Startable")


class _Startable(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...


def _running(server: _Server) -> Iterator[_Server]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    yield from _running(OpenAIServer())


@pytest.fixture
def gemini_server() -> Iterator[GeminiServer]:
    yield from _running(GeminiServer())


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicServer]:
    yield from _running(AnthropicServer())


@pytest.fixture
def embeddings_server() -> Iterator[EmbeddingsServer]:
    yield from _running(EmbeddingsServer())


@pytest.fixture
def gemini_embeddings_server() -> Iterator[GeminiEmbeddingsServer]:
    yield from _running(GeminiEmbeddingsServer())
