"""The agent server and the runs dashboard stand on one HTTP foundation: the same error
body with a real request id, the same refusal of a DNS-rebound name, the same security
headers; each against a real uvicorn server on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx2 as httpx
import pytest

from dashboard_runs import dashboard, get
from server_harness import WEATHER, Server, served


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    """The agent server (examples/weather) and a dashboard over an empty runs directory."""
    root = tmp_path_factory.mktemp("http")
    (root / "runs").mkdir()
    with served(WEATHER, state_dir=root / "state") as server, dashboard(root / "runs") as board:
        yield server, board


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _error_shape(response: httpx.Response) -> dict[str, Any]:
    """The body with its words taken out: which fields, and the request id's agreement
    with the X-Request-ID header."""
    body = response.json()
    assert body["request_id"] == response.headers["x-request-id"]
    assert body["error"]["message"] and body["error"]["hint"]
    return {
        "status": response.status_code,
        "keys": sorted(body),
        "error_keys": sorted(body["error"]),
    }


def test_the_dashboard_and_the_server_answer_a_refusal_in_one_shape_with_its_request_id(
    both: tuple[Server, str],
) -> None:
    server, board = both
    ours = server.client.get("/v1/sessions/nope")
    theirs = get(board + "/api/runs/nope")
    assert _error_shape(theirs) == _error_shape(ours)
    assert theirs.json()["error"]["type"] == "not_found"
    # a client's own id comes back in the body, as the server does
    given = get(board + "/api/runs/nope", **{"X-Request-ID": "case-42"})
    assert given.json()["request_id"] == "case-42"
    bad = get(board + "/api/compare?run=one")
    assert bad.status_code == 400 and bad.json()["request_id"] == bad.headers["x-request-id"]


def test_the_dashboard_refuses_a_rebound_name_as_the_server_does_and_takes_every_loopback_name(
    both: tuple[Server, str],
) -> None:
    server, board = both
    for base, path, ask in (
        (server.url, "/health", lambda h: server.client.get("/health", headers=h)),
        (board, "/api/runs", lambda h: get(board + "/api/runs", **h)),
    ):
        port = _port(base)
        refused = ask({"Host": f"rebound.example:{port}"})
        assert _error_shape(refused)["status"] == 421
        error = refused.json()["error"]
        assert error["type"] == "wrong_host" and "'rebound.example" in error["message"]
        assert error["hint"].startswith(f"use http://127.0.0.1:{port}/"), path
        for host in ("LOCALHOST", f"127.0.0.2:{port}", f"[::1]:{port}", f"localhost:{port}"):
            assert ask({"Host": host}).status_code == 200, (path, host)


def test_every_answer_of_the_server_carries_the_security_headers(
    both: tuple[Server, str],
) -> None:
    server, board = both
    answers = [
        server.client.get("/health"),
        server.client.get("/"),
        server.client.get("/v1/sessions/nope"),
        server.client.get("/health", headers={"Host": "rebound.example"}),
        get(board + "/"),
        get(board + "/api/runs/nope"),
    ]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff", answer.url
        assert answer.headers["referrer-policy"] == "no-referrer", answer.url
        assert answer.headers["x-frame-options"] == "DENY", answer.url
