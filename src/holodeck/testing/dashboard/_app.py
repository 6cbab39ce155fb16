"""The dashboard's FastAPI app: the page (three static files) and the JSON API it reads.

    GET /api/runs                    every run's digest (no cases), oldest first
    GET /api/runs/{run_id}           one whole run, its cases included
    GET /api/compare?run=A&run=B...  the runs' cases side by side (comparison.compare_series)

Errors have the server's shape: `{"error": {type, message, hint}, "request_id": null}`.
Only requests addressed to a loopback name are answered (a page elsewhere cannot read the
runs by DNS rebinding), and the page may load nothing but these files and this API (its
Content-Security-Policy)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import TypeAdapter
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send
from typing_extensions import TypedDict  # pydantic needs it before Python 3.12

from holodeck._version import __version__
from holodeck.errors import RequestError
from holodeck.spec.diagnostics import display_path
from holodeck.testing.comparison import compare_series
from holodeck.testing.dashboard._digest import RunDigest
from holodeck.testing.dashboard._index import DamagedRun, RunIndex, Skipped, UnknownRun

_STATIC = files("holodeck.testing.dashboard").joinpath("static")
_PAGES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
}
_HEADERS = {
    # nothing but this server: no inline script or style, no other host, no frames
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
_MAX_COMPARED = 12


class _Listing(TypedDict):
    directory: str
    runs: list[RunDigest]
    skipped: list[Skipped]


_LISTING = TypeAdapter(_Listing)  # 1,000 digests serialised in one call


class DashboardError(RequestError):
    """A dashboard request refused with its HTTP status (the server's error shape)."""

    def __init__(self, status: int, kind: str, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status, self.kind = status, kind


def _error(status: int, kind: str, message: str, hint: str | None) -> JSONResponse:
    body = {"error": {"type": kind, "message": message, "hint": hint}, "request_id": None}
    return JSONResponse(body, status_code=status, headers=_HEADERS)


class _LoopbackOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in _LOOPBACK_NAMES:
                refused = _error(
                    421,
                    "wrong_host",
                    f"the runs dashboard answers only requests addressed to 127.0.0.1, "
                    f"not to {host!r}",
                    "open the URL `holodeck test view` printed",
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_dashboard(index: RunIndex) -> FastAPI:
    """The dashboard over the runs `index` reads."""
    app = FastAPI(
        title="HoloDeck runs dashboard",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )

    @app.exception_handler(DashboardError)
    async def refused(request: Request, exc: DashboardError) -> JSONResponse:
        return _error(exc.status, exc.kind, exc.message, exc.hint)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = "not_found" if exc.status_code == 404 else "http_error"
        return _error(exc.status_code, kind, str(exc.detail), None)

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        response.headers.update(_HEADERS)
        return response

    app.add_middleware(_LoopbackOnly)

    def page(name: str, media_type: str) -> Any:
        async def serve() -> Response:
            return Response(_STATIC.joinpath(name).read_bytes(), media_type=media_type)

        return serve

    for path, (name, media_type) in _PAGES.items():
        app.add_api_route(path, page(name, media_type), methods=["GET", "HEAD"])

    listed: dict[int, bytes] = {}  # the index's version -> its listing, made once

    @app.get("/api/runs")
    def runs() -> Response:
        version, digests, skipped = index.listing()
        body = listed.get(version)
        if body is None:
            body = _LISTING.dump_json(
                {"directory": display_path(index.directory), "runs": digests, "skipped": skipped}
            )
            listed.clear()
            listed[version] = body
        return Response(body, media_type="application/json")

    @app.get("/api/runs/{run_id}")
    def run(run_id: str) -> Response:
        return Response(_load(index, run_id).model_dump_json(), media_type="application/json")

    @app.get("/api/compare")
    def compare(run: list[str] = Query(default=[])) -> Response:  # noqa: B008
        ids = list(dict.fromkeys(run))
        if not 2 <= len(ids) <= _MAX_COMPARED:
            raise DashboardError(
                400,
                "invalid_request",
                f"a comparison takes 2 to {_MAX_COMPARED} different runs; {len(ids)} given",
                "name each run once: /api/compare?run=ID_A&run=ID_B",
            )
        loaded = sorted(
            (_load(index, i) for i in ids), key=lambda r: (r.started_at.timestamp(), r.run_id)
        )
        return Response(compare_series(loaded).model_dump_json(), media_type="application/json")

    return app


def _load(index: RunIndex, run_id: str) -> Any:
    try:
        return index.load(run_id)
    except UnknownRun:
        raise DashboardError(
            404,
            "not_found",
            f"no saved run {run_id!r} in {display_path(index.directory)}",
            "pick a run from /api/runs",
        ) from None
    except DamagedRun as exc:
        raise DashboardError(
            422,
            "damaged_run",
            f"{display_path(index.directory / (run_id + '.json'))} is {exc}",
            None,
        ) from None
