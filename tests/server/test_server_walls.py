"""The server's walls, each against a real server on loopback: what a web page may make
it do (Host, Origin, uploads), keys checked before a body is read, keys that own their
sessions, one session's flood not starving the others, and a client that leaves
cancelling its turn."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2 as httpx

from server_harness import (
    WAITING_TOOL,
    WEATHER,
    Serve,
    agent_dir,
    deploy_process,
    function_tool,
    log_lines,
    served,
    until,
)
from test_server_operation import LEAKY, image_archive

GZIP = {"Content-Type": "application/gzip"}


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


# --- 1. what a web page can make a server do ------------------------------------------------


def test_a_loopback_server_answers_only_its_own_names_and_pages(serve: Serve) -> None:
    with serve(WEATHER, allow_uploads=True) as server:
        port = _port(server.url)
        rebound = {"Host": f"attacker.example:{port}", "Origin": f"http://attacker.example:{port}"}
        # a page whose name was rebound to 127.0.0.1: its own origin, a foreign Host
        for refused in (
            server.client.get("/health", headers=rebound),
            server.client.post(
                "/v1/agents", content=image_archive(LEAKY), headers={**GZIP, **rebound}
            ),
        ):
            assert refused.status_code == 421, refused.text
            error = refused.json()["error"]
            assert error["type"] == "wrong_host" and "attacker.example" in error["message"]
            assert f"127.0.0.1:{port}" in error["hint"]
        # a page of another site, sending to 127.0.0.1 itself
        foreign = {"Origin": "https://attacker.example"}
        upload = server.client.post(
            "/v1/agents", content=image_archive(LEAKY), headers={**GZIP, **foreign}
        )
        assert upload.status_code == 403 and upload.json()["error"]["type"] == "origin_refused"
        assert "cors_origins" in upload.json()["error"]["hint"]
        chat = server.client.post("/v1/chat", json={"message": "Hi"}, headers=foreign)
        assert chat.status_code == 403
        names = [a["name"] for a in server.client.get("/v1/agents").json()["agents"]]
        assert names == ["weather"]  # nothing was uploaded
        # reading is not changing; and the server's own page may post
        assert server.client.get("/v1/agents", headers=foreign).status_code == 200
        own = {"Origin": server.url}
        assert (
            server.client.post("/v1/chat", json={"message": "Hi"}, headers=own).status_code == 200
        )
        for host in (f"localhost:{port}", f"[::1]:{port}", f"127.0.0.1:{port}"):
            assert server.client.get("/health", headers={"Host": host}).status_code == 200


def test_an_origin_listed_in_cors_origins_may_post(serve: Serve) -> None:
    listed = "https://app.example"
    with serve(WEATHER, cors_origins=(listed,)) as server:
        ok = server.client.post("/v1/chat", json={"message": "Hi"}, headers={"Origin": listed})
        assert ok.status_code == 200
        other = {"Origin": "https://other.example"}
        assert (
            server.client.post("/v1/chat", json={"message": "Hi"}, headers=other).status_code == 403
        )


# --- 2. keys before bodies, and uploads only when asked for -----------------------------------


def _status_of_headers_only(url: str, path: str, length: int, key: str | None = None) -> bytes:
    """The status line the server answers a POST with, while the client has sent only the
    headers of a `length`-byte body (and never sends the body)."""
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{_port(url)}\r\n{auth}"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=20) as sock:
        sock.sendall(head.encode())
        answer = b""
        while b"\r\n" not in answer:
            more = sock.recv(4096)  # a server waiting for the body never answers: timeout
            if not more:
                break
            answer += more
    return answer.split(b"\r\n", 1)[0]


def test_a_request_without_a_key_is_refused_before_its_body_is_sent(tmp_path: Path) -> None:
    root = agent_dir(tmp_path / "locked", "locked")
    (root / "config.yaml").write_text(
        "deployment:\n  auth:\n    type: api_key\n"
        "    api_keys: [{name: alice, key: k-alice-1}, k-plain-2]\n",
        encoding="utf-8",
    )
    with deploy_process(str(root), "--model", "test") as (_, url):
        sixteen_mib = 16 * 1024 * 1024
        for path in ("/v1/chat", "/v1/agents", "/v1/chat/completions", "/nowhere"):
            assert _status_of_headers_only(url, path, sixteen_mib) == b"HTTP/1.1 401 Unauthorized"
        wrong = _status_of_headers_only(url, "/v1/chat", sixteen_mib, key="k-guess")
        assert wrong == b"HTTP/1.1 401 Unauthorized"
        with httpx.Client(base_url=url, timeout=30) as client:
            for path in ("/docs", "/openapi.json"):
                assert client.get(path).status_code == 401
                assert client.get(path, headers={"Authorization": "Bearer k-alice-1"}).is_success
            for path in ("/health", "/ready", "/"):
                assert client.get(path).status_code == 200
            for key in ("k-alice-1", "k-plain-2"):  # both forms of key work
                chat = client.post(
                    "/v1/chat", json={"message": "Hi"}, headers={"Authorization": f"Bearer {key}"}
                )
                assert chat.status_code == 200
            # on loopback, with a key, uploads are still off unless asked for
            upload = client.post(
                "/v1/agents",
                content=image_archive(LEAKY),
                headers={**GZIP, "Authorization": "Bearer k-alice-1"},
            )
            assert (
                upload.status_code == 403 and upload.json()["error"]["type"] == "uploads_disabled"
            )


# --- 3. keys own their sessions -----------------------------------------------------------------

KEYS = (("alice", "k-alice-secret"), ("bob", "k-bob-secret"))


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _users(client: httpx.Client, key: str, session_id: str) -> list[str] | int:
    """What the user said in a session as `key` sees it, or the status when it cannot."""
    answer = client.get(f"/v1/sessions/{session_id}", headers=_as(key))
    if answer.status_code != 200:
        return answer.status_code
    return [m["content"] for m in answer.json()["messages"] if m["role"] == "user"]


def test_a_session_belongs_to_the_key_that_started_it(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    alice, bob = (key for _, key in KEYS)
    with serve(WEATHER, named_keys=KEYS) as server:
        client = server.client
        started = client.post("/v1/chat", json={"message": "alice's secret"}, headers=_as(alice))
        session_id = started.json()["session_id"]
        missing = client.get(f"/v1/sessions/{session_id}", headers=_as(bob))
        assert missing.status_code == 404
        assert missing.json()["error"]["type"] == "unknown_session"
        assert client.delete(f"/v1/sessions/{session_id}", headers=_as(bob)).status_code == 404
        # nor continue it, on either route
        body = {"message": "bob here", "session_id": session_id}
        refused = client.post("/v1/chat", json=body, headers=_as(bob))
        assert refused.status_code == 404 and refused.json()["error"]["type"] == "unknown_session"
        completion = {
            "model": "weather",
            "messages": [{"role": "user", "content": "bob again"}],
            "holodeck": {"session_id": session_id},
        }
        answer = client.post("/v1/chat/completions", json=completion, headers=_as(bob))
        assert answer.status_code == 404
        # an id no key has used is a new conversation of the key that names it
        own = {"message": "bob's own", "session_id": "bobs-chosen-id"}
        assert client.post("/v1/chat", json=own, headers=_as(bob)).status_code == 200
        assert _users(client, alice, session_id) == ["alice's secret"]
        assert _users(client, bob, "bobs-chosen-id") == ["bob's own"]
        assert client.get("/v1/sessions/bobs-chosen-id", headers=_as(alice)).status_code == 404
        alice_turn = {"message": "alice again", "session_id": session_id}
        assert client.post("/v1/chat", json=alice_turn, headers=_as(alice)).status_code == 200
        assert _users(client, alice, session_id) == ["alice's secret", "alice again"]
    logged = [line for line in log_lines(isolated_home, "weather") if line["session_id"]]
    assert [line["key"] for line in logged] == ["alice", "bob", "alice"]
    text = json.dumps(log_lines(isolated_home, "weather"))
    assert "k-alice-secret" not in text and "k-bob-secret" not in text


def test_ownership_holds_across_processes_sharing_a_store_and_a_restart(tmp_path: Path) -> None:
    alice, bob = (key for _, key in KEYS)
    root = agent_dir(tmp_path / "kept", "kept", memory={"store": "sqlite", "url": "sessions.db"})
    options: dict[str, Any] = {"named_keys": KEYS, "state_dir": tmp_path / "state"}
    with served(root, **options) as one, served(root, **options) as two:
        started = one.client.post("/v1/chat", json={"message": "mine"}, headers=_as(alice))
        session_id = started.json()["session_id"]
        assert _users(two.client, alice, session_id) == ["mine"]
        assert _users(two.client, bob, session_id) == 404
    with served(root, **options) as again:
        assert _users(again.client, alice, session_id) == ["mine"]
        assert _users(again.client, bob, session_id) == 404


def test_named_keys_come_from_the_deployment_block() -> None:
    from holodeck.server import ServeOptions
    from holodeck.spec.models.settings import DeploymentSettings

    settings = DeploymentSettings.model_validate(
        {
            "auth": {"type": "api_key", "api_keys": [{"name": "ci", "key": "k-1"}, "k-2"]},
            "max_queued_turns_per_session": 3,
        }
    )
    options = ServeOptions.from_settings(("a",), settings)
    (named, (plain_name, plain_key)) = options.keys
    assert named == ("ci", "k-1") and plain_key == "k-2"
    assert plain_name.startswith("key-") and "k-2" not in plain_name
    assert ServeOptions.from_json(options.to_json()).keys == options.keys  # as workers get it
    assert options.max_queued_turns_per_session == 3


# --- 4. one session's flood does not starve the others ------------------------------------------


def test_a_flooded_session_waits_without_slots_and_its_queue_is_bounded(
    tmp_path: Path, serve: Serve
) -> None:
    slow = agent_dir(
        tmp_path / "slow", "slow", python=WAITING_TOOL, tools=[function_tool("wait_here")]
    )
    quick = agent_dir(tmp_path / "quick", "quick")
    limits = {"max_concurrent_turns": 2, "max_queued_turns_per_session": 2}
    with serve(slow, quick, **limits) as server:
        answers: list[httpx.Response] = []

        def flood() -> None:
            answers.append(server.chat("again /call wait_here", agent="slow", session_id="flooded"))

        threads = [threading.Thread(target=flood) for _ in range(5)]
        for thread in threads:
            thread.start()
        until(lambda: (slow / "started").exists(), what="the session's first turn to run")
        # one turn runs, two wait for it, the rest are refused at once
        refused = until(
            lambda: len(answers) == 2 and answers, what="the turns beyond the queue refused"
        )
        assert [a.status_code for a in refused] == [429, 429]
        assert refused[0].json()["error"]["type"] == "session_queue_full"
        assert refused[0].headers["retry-after"] == "1"
        # two slots: the running turn holds one; its session's waiting turns hold none
        other: list[httpx.Response] = []
        beside = threading.Thread(target=lambda: other.append(server.chat("hi", agent="quick")))
        beside.start()
        until(lambda: other, what="another session's turn to be answered")
        assert other[0].status_code == 200
        (slow / "release").write_text("go")
        for thread in [*threads, beside]:
            thread.join(30)
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 429, 429]


# --- 5. a client that leaves cancels its turn, streaming or not ---------------------------------

LEAVING_TOOL = """
import asyncio
from pathlib import Path

calls = 0

async def wait_here(marker: str) -> str:
    '''The first call waits for `release` beside this file; later ones answer at once.'''
    global calls
    calls += 1
    if calls > 1:
        return "at once"
    here = Path(__file__).parent
    (here / "started").write_text("yes")
    try:
        while not (here / "release").exists():
            await asyncio.sleep(0.01)
    except asyncio.CancelledError:
        (here / "cancelled").write_text("yes")
        raise
    return "released"
"""


def _post_and_leave(url: str, path: str, body: dict[str, Any], started: Path) -> None:
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{_port(url)}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=20) as sock:
        sock.sendall(head.encode() + data)
        until(started.exists, what="the turn's tool to start")
    # the connection is closed here, before any answer


def test_a_json_client_that_leaves_cancels_its_turn(
    tmp_path: Path, serve: Serve, isolated_home: Path
) -> None:
    root = agent_dir(
        tmp_path / "left", "left", python=LEAVING_TOOL, tools=[function_tool("wait_here")]
    )
    with serve(root) as server:
        asked = {"message": "first /call wait_here", "session_id": "s-chat"}
        _post_and_leave(server.url, "/v1/chat", asked, root / "started")
        until((root / "cancelled").exists, what="the tool to be cancelled")
        history = until(
            lambda: (r := server.client.get("/v1/sessions/s-chat")).status_code == 200 and r,
            what="the session to be free and saved as it was",
        )
        assert history.json()["messages"] == []
        after = server.chat("second /call wait_here", session_id="s-chat").json()
        assert after["tool_calls"][0]["result"] == "at once"
        said = server.client.get("/v1/sessions/s-chat").json()["messages"]
        assert [m["content"] for m in said if m["role"] == "user"] == ["second /call wait_here"]
    logged = [line for line in log_lines(isolated_home, "left") if line["endpoint"] == "/v1/chat"]
    assert [line["status"] for line in logged] == [499, 200]


def test_an_openai_client_that_leaves_cancels_its_turn(tmp_path: Path, serve: Serve) -> None:
    root = agent_dir(
        tmp_path / "gone", "gone", python=LEAVING_TOOL, tools=[function_tool("wait_here")]
    )
    with serve(root) as server:
        completion = {
            "model": "gone",
            "messages": [{"role": "user", "content": "first /call wait_here"}],
            "holodeck": {"session_id": "s-openai"},
        }
        _post_and_leave(server.url, "/v1/chat/completions", completion, root / "started")
        until((root / "cancelled").exists, what="the tool to be cancelled")
        history = until(
            lambda: (r := server.client.get("/v1/sessions/s-openai")).status_code == 200 and r,
            what="the session to be free and saved as it was",
        )
        assert history.json()["messages"] == []
