"""Servers for the HTTP service's tests: the app under a real uvicorn on a loopback port
(in a thread of the test process), or `holodeck deploy` as a process of its own."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from yaml_dump import dump

REPO = Path(__file__).resolve().parent.parent
WEATHER = REPO / "examples" / "weather"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def until(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def agent_dir(root: Path, name: str = "helper", **fields: Any) -> Path:
    """An agent.yaml (test provider) with optional `tools.py` given as `python=`."""
    python = fields.pop("python", None)
    root.mkdir(parents=True, exist_ok=True)
    spec = {
        "name": name,
        "model": {"provider": "test"},
        "instructions": {"inline": "You help."},
        **fields,
    }
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    if python is not None:
        (root / "tools.py").write_text(python, encoding="utf-8")
    return root


def function_tool(name: str) -> dict[str, str]:
    return {"type": "function", "name": name, "file": "tools.py", "function": name}


WAITING_TOOL = """
import asyncio
from pathlib import Path

async def wait_here(marker: str) -> str:
    '''Waits until the file `release` appears beside this one.'''
    here = Path(__file__).parent
    (here / "started").write_text("yes")
    while not (here / "release").exists():
        await asyncio.sleep(0.01)
    return "released"
"""


def log_lines(home: Path, agent: str) -> list[dict[str, Any]]:
    """The lines of an agent's request log under HOLODECK_HOME `home`."""
    path = home / "logs" / f"agent-{agent}.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@dataclass
class Server:
    url: str
    client: httpx.Client

    def chat(self, message: str, **fields: Any) -> httpx.Response:
        return self.client.post("/v1/chat", json={"message": message, **fields})

    def events(self, message: str, **fields: Any) -> list[tuple[str, dict[str, Any]]]:
        """The Server-Sent Events of a streamed chat, read to the end."""
        body = {"message": message, "stream": True, **fields}
        with self.client.stream("POST", "/v1/chat", json=body) as response:
            assert response.status_code == 200, response.read()
            return parse_sse(response.iter_lines())


def parse_sse(lines: Iterator[str]) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    name, data = "message", ""
    for line in lines:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line.strip() and data:
            events.append((name, json.loads(data)))
            name, data = "message", ""
    return events


Serve = Callable[..., AbstractContextManager[Server]]


@pytest.fixture
def serve(tmp_path: Path) -> Serve:
    """`serve(*paths, **options)`: `served` with its state under the test's tmp_path."""

    def _serve(*paths: Path, **options: Any) -> AbstractContextManager[Server]:
        return served(*paths, state_dir=tmp_path / "state", **options)

    return _serve


@contextmanager
def served(*paths: Path, state_dir: Path, **options: Any) -> Iterator[Server]:
    """The app for `paths` under uvicorn on a free port, until the block ends; uploads
    and the sqlite store's default file go under `state_dir`."""
    import uvicorn

    from holodeck.server import ServeOptions, create_app

    port = free_port()
    options.setdefault("model", "test")
    paths_text = tuple(str(p) for p in paths)
    serve = ServeOptions(paths=paths_text, port=port, state_dir=str(state_dir), **options)
    config = uvicorn.Config(
        create_app(serve),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        log_config=None,  # uvicorn's handlers would hold pytest's captured streams
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn {port}", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        until(lambda: server.started or not thread.is_alive(), what="the server to start")
        assert server.started, "the server did not start"
        with httpx.Client(base_url=url, timeout=30) as client:
            until(lambda: client.get("/ready").status_code == 200, what="the agents to be ready")
            yield Server(url, client)
    finally:
        server.should_exit = True
        thread.join(15)


@contextmanager
def deploy_process(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path = REPO,
    port: int | None = None,
    port_flag: bool = True,
    umask: int = -1,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`holodeck deploy ARGS --port P` as a process; yields it and its base URL once
    /health answers. `port_flag=False` leaves the port to the configuration (`port`
    then says where to expect it). Its output goes to a file (a pipe nobody reads would
    stall a server that logs every request), shown when it fails to start. `umask`, when
    given, is the process's umask."""
    port = port or free_port()
    flag = ["--port", str(port)] if port_flag else []
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "holodeck", "deploy", *args, *flag],
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=output,
            stderr=subprocess.STDOUT,
            umask=umask,
        )

        def up() -> bool:
            if process.poll() is not None:
                output.seek(0)
                said = output.read().decode(errors="replace")
                raise AssertionError(f"deploy exited {process.returncode}: {said}")
            try:
                return httpx.get(url + "/health", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        try:
            until(up, timeout=180, what="holodeck deploy to serve")  # a busy machine
            yield process, url
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
