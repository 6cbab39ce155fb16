"""Bearer API keys, checked in the ASGI layer before a request's body is read (a client
without a key cannot make the server receive megabytes), and each key's rate. A key's
name goes in `scope["state"]["key_name"]`: request logs and session ownership use it,
never the key."""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from holodeck.server._errors import ApiError, refuse

# open without a key: probes, and the chat page (which then asks for a key)
OPEN_PATHS = frozenset({"/health", "/ready", "/"})
# A2A cards are public: they say how to authenticate, and hold no secret
CARD = "/.well-known/agent-card.json"


def is_card(scope: Scope) -> bool:
    """Whether the request reads an A2A card (the only agent's, or
    `/a2a/<agent>/.well-known/agent-card.json`): open without a key, within the rate."""
    path: str = scope["path"]
    if scope.get("method") not in ("GET", "HEAD"):
        return False
    if path == CARD:
        return True
    agent = path.removeprefix("/a2a/").removesuffix(CARD)
    return path.startswith("/a2a/") and path.endswith(CARD) and bool(agent) and "/" not in agent


class Keys:
    """The server's keys, by name (none: open), and a token bucket per key, or per client
    address without keys."""

    def __init__(self, keys: Sequence[tuple[str, str]], requests_per_minute: int | None) -> None:
        self.keys = tuple(keys)
        self.rate = requests_per_minute
        self._buckets: dict[str, tuple[float, float]] = {}  # who -> (tokens, at)

    def admit(self, scope: Scope, required: bool = True) -> str | None:
        """The name of the request's key (None when the server has no keys, or when the
        key is not `required` and missing or wrong), within its rate; raises 401 or 429."""
        try:
            name = self._authenticate(scope)
        except ApiError:
            if required:
                raise
            name = None
        if self.rate is not None:
            client = scope.get("client")
            self._spend(f"key:{name}" if name else f"address:{client[0] if client else '?'}")
        return name

    def _authenticate(self, scope: Scope) -> str | None:
        if not self.keys:
            return None
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise ApiError(
                401,
                "unauthorized",
                "this server needs an API key",
                hint="send `Authorization: Bearer <key>` with a key from deployment.auth.api_keys",
                headers={"WWW-Authenticate": "Bearer"},
            )
        found = None
        for name, key in self.keys:  # every key compared: the time taken says nothing
            if hmac.compare_digest(token.encode(), key.encode()):
                found = name
        if found is None:
            raise ApiError(
                401,
                "unauthorized",
                "the API key is not one of this server's keys",
                hint="check the key in `Authorization: Bearer <key>`",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return found

    def _spend(self, who: str) -> None:
        assert self.rate is not None
        per_second = self.rate / 60.0
        now = time.monotonic()
        tokens, at = self._buckets.get(who, (float(self.rate), now))
        tokens = min(float(self.rate), tokens + (now - at) * per_second)
        if tokens < 1.0:
            wait = math.ceil((1.0 - tokens) / per_second)
            self._buckets[who] = (tokens, now)
            raise ApiError(
                429,
                "rate_limited",
                f"more than {self.rate} requests a minute",
                hint=f"retry after {wait} s",
                headers={"Retry-After": str(wait)},
            )
        self._buckets[who] = (tokens - 1.0, now)


class Authenticate:
    """Every path but `OPEN_PATHS` and the A2A cards (`is_card`) needs a key (the API,
    /docs, /openapi.json, unknown paths alike); refused before the body is received."""

    def __init__(self, app: ASGIApp, keys: Keys) -> None:
        self.app, self.keys = app, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        try:
            name = self.keys.admit(scope, required=not is_card(scope))
        except ApiError as error:
            await refuse(scope, receive, send, error)
            return
        scope.setdefault("state", {})["key_name"] = name
        await self.app(scope, receive, send)
