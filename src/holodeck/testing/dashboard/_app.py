"""The dashboard's FastAPI app: the page (three static files) and the JSON API it reads.

    GET /api/runs                    every run's digest (no cases), oldest first
    GET /api/runs/{run_id}           one whole run, its cases included
    GET /api/compare?run=A&run=B...  the runs' cases side by side (comparison.compare_series)
    GET /api/scans/{scan_id}         one whole red-team scan, its attacks included

The listing also holds the red-team scans saved beside the runs (`.holodeck/scans`), each
with its pass rate per plugin.

It stands on the server's HTTP foundation (`holodeck.http`): errors in the server's shape
with a request id, only requests addressed to a loopback name answered (a page elsewhere
cannot read the runs by DNS rebinding), the same security headers, and a
Content-Security-Policy by which the page loads nothing but these files and this API."""

from __future__ import annotations

import logging
from importlib.resources import files
from typing import Any

from fastapi import FastAPI, Query
from fastapi.responses import Response
from pydantic import TypeAdapter
from typing_extensions import TypedDict  # pydantic needs it before Python 3.12

from holodeck._version import __version__
from holodeck.http import (
    ApiError,
    LoopbackOnly,
    RequestIds,
    SecurityHeaders,
    install_error_handlers,
)
from holodeck.spec.diagnostics import display_path
from holodeck.testing.comparison import compare_series
from holodeck.testing.dashboard._digest import RunDigest
from holodeck.testing.dashboard._index import DamagedRun, RunIndex, Skipped, UnknownRun
from holodeck.testing.redteam.scan_reports import scan_json
from holodeck.testing.redteam.scan_store import (
    DamagedScan,
    ScanDigest,
    ScanShelf,
    Shelved,
    UnknownScan,
    scans_beside,
)

_STATIC = files("holodeck.testing.dashboard").joinpath("static")
_PAGES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
}
_HEADERS = {  # beside the shared security headers
    # nothing but this server: no inline script or style, no other host, no frames
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "Cache-Control": "no-store",
}
_MAX_COMPARED = 12


class _Listing(TypedDict):
    directory: str
    runs: list[RunDigest]
    skipped: list[Skipped]
    scans: list[ScanDigest]
    scans_skipped: list[Shelved]


_LISTING = TypeAdapter(_Listing)  # 1,000 digests serialised in one call


def create_dashboard(index: RunIndex, scans: ScanShelf | None = None) -> FastAPI:
    """The dashboard over the runs `index` reads and the scans `scans` holds (default:
    those saved beside the runs)."""
    shelf = scans if scans is not None else ScanShelf(scans_beside(index.directory))
    app = FastAPI(
        title="HoloDeck runs dashboard",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )

    install_error_handlers(app, log=logging.getLogger("holodeck.testing.dashboard"))
    # innermost first: a request for another name is refused, with an id and the headers
    app.add_middleware(LoopbackOnly)  # it listens on 127.0.0.1 only
    app.add_middleware(RequestIds)
    app.add_middleware(SecurityHeaders, extra=_HEADERS)

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
        found, shelved = shelf.digests()
        body = listed.get(version) if not (found or shelved) else None
        if body is None:
            body = _LISTING.dump_json(
                {
                    "directory": display_path(index.directory),
                    "runs": digests,
                    "skipped": skipped,
                    "scans": found,
                    "scans_skipped": shelved,
                }
            )
            listed.clear()
            listed[version] = body
        return Response(body, media_type="application/json")

    @app.get("/api/scans/{scan_id}")
    def scan(scan_id: str) -> Response:
        try:
            found = shelf.load(scan_id)
        except UnknownScan:
            raise ApiError(
                404,
                "not_found",
                f"no saved scan {scan_id!r} in {display_path(shelf.directory)}",
                hint="pick a scan from /api/runs",
            ) from None
        except DamagedScan as exc:
            where = display_path(shelf.directory / (scan_id + ".json"))
            raise ApiError(422, "damaged_scan", f"{where} is {exc}") from None
        return Response(scan_json(found), media_type="application/json")

    @app.get("/api/runs/{run_id}")
    def run(run_id: str) -> Response:
        return Response(_load(index, run_id).model_dump_json(), media_type="application/json")

    @app.get("/api/compare")
    def compare(run: list[str] = Query(default=[])) -> Response:  # noqa: B008
        ids = list(dict.fromkeys(run))
        if not 2 <= len(ids) <= _MAX_COMPARED:
            raise ApiError(
                400,
                "invalid_request",
                f"a comparison takes 2 to {_MAX_COMPARED} different runs; {len(ids)} given",
                hint="name each run once: /api/compare?run=ID_A&run=ID_B",
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
        raise ApiError(
            404,
            "not_found",
            f"no saved run {run_id!r} in {display_path(index.directory)}",
            hint="pick a run from /api/runs",
        ) from None
    except DamagedRun as exc:
        raise ApiError(
            422,
            "damaged_run",
            f"{display_path(index.directory / (run_id + '.json'))} is {exc}",
        ) from None
