"""`allow_network: true`, with real bubblewrap sandboxes, curl and Python inside them and
HTTP servers the tests run: a command reaches the network only through HoloDeck's proxy,
which refuses what the outbound policy refuses (loopback here) with its reason, lets
through what the policy allows, and stops with the call; nothing reaches past it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from conftest import MINIMAL_AGENT, Write
from holodeck import Agent, RunOptions, load_agent
from holodeck.net import OutboundPolicy
from holodeck.sandbox import Sandbox
from holodeck.spec.models.network_settings import NetworkSettings
from holodeck.spec.models.sandbox_settings import SandboxSettings
from holodeck.tools.workspace import Terminals
from local_http import LocalHTTPServer
from processes import running
from server_harness import until

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("curl") is None,
    reason="bubblewrap and curl are needed (make sandbox)",
)

NETWORKED = SandboxSettings(allow_network=True)
RELAY_MARKER = "# holodeck sandbox relay"  # the relay's first line, in its command line


@dataclass
class Site:
    """An HTTP server on this machine that answers `reached` and counts its requests."""

    server: LocalHTTPServer
    hosts: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])


@pytest.fixture
def site() -> Iterator[Site]:
    seen: list[str] = []

    class Reached(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Host", ""))
            self.send_response(200)
            self.send_header("Content-Length", "7")
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args: object) -> None:
            pass

    server = LocalHTTPServer(("0.0.0.0", 0), Reached)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Site(server, seen)
    server.shutdown()
    server.server_close()


@pytest.fixture
def workspace() -> Iterator[Path]:
    # outside /tmp, which the sandbox replaces with its own
    root = Path(tempfile.mkdtemp(prefix="holodeck-sandbox-net-", dir="/var/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


class Answers:
    """A resolver that knows one name, as web_fetch's tests give the policy."""

    def __init__(self, address: str) -> None:
        self.address = address

    async def __call__(self, host: str, port: int) -> list[str]:
        if host != "site.test":
            raise socket.gaierror(socket.EAI_NONAME, "unknown name")
        return [self.address]


def _relays() -> list[int]:
    return running(RELAY_MARKER)


def _proxy_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("holodeck-net-*"))


def _nothing_left(before: set[Path], within: float = 5.0) -> bool:
    until(lambda: not _relays() and not _proxy_folders() - before, within, "relays to end")
    return True


def test_a_loopback_service_is_refused_with_the_policys_reason(workspace: Path, site: Site) -> None:
    url = f"http://127.0.0.1:{site.port}/"
    sandbox = Sandbox(workspace, NETWORKED)
    curl = asyncio.run(
        sandbox.shell(
            f"curl -sS {url}; curl -sS https://127.0.0.1:{site.port}/; "
            "curl -sS http://169.254.169.254/latest/meta-data/; curl -sS http://10.1.2.3/"
        )
    )
    code = (
        "import urllib.request\n"
        f"try: urllib.request.urlopen({url!r}, timeout=5)\n"
        "except Exception as error: print(error)\n"
    )
    python = asyncio.run(sandbox.run(["python3", "-c", code]))

    reason = "blocked: 127.0.0.1 is a loopback address; allow it under network.allow"
    assert reason in curl.stdout  # plain HTTP: the 403's body
    assert "CONNECT tunnel failed, response 403" in curl.stderr  # HTTPS
    assert "169.254.169.254 is a cloud metadata address" in curl.stdout
    assert "10.1.2.3 is a private address" in curl.stdout
    assert python.stdout == f"HTTP Error 403: {reason}\n"
    assert site.hosts == []  # the server never saw a request


def test_an_allowed_address_is_reached_through_the_proxy(workspace: Path, site: Site) -> None:
    """`site.test` exists only in the policy's resolver: the page arrives, so the proxy
    resolved it there and connected to the address it checked, with the Host unchanged."""
    rules = OutboundPolicy.from_settings(NetworkSettings(allow=[f"127.0.0.1:{site.port}"]))
    policy = OutboundPolicy(rules.allow, rules.deny, resolver=Answers("127.0.0.1"))
    sandbox = Sandbox(workspace, NETWORKED, outbound=policy)
    url = f"http://site.test:{site.port}/page"
    # plain HTTP, then a CONNECT tunnel (what HTTPS uses), then Python's urllib
    result = asyncio.run(
        sandbox.shell(
            f"curl -sS {url}; echo; curl -sS --proxytunnel {url}; echo; "
            f"python3 -c 'import urllib.request; print(urllib.request.urlopen(\"{url}\").read())'"
        )
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "reached\nreached\nb'reached'\n"
    assert site.hosts == [f"site.test:{site.port}"] * 3


def test_a_connection_around_the_proxy_reaches_nothing(workspace: Path, site: Site) -> None:
    """Without the proxy variables, neither the host's own address nor loopback answers:
    the sandbox has its own network namespace, with nothing in it but the relay."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: it picks the outgoing address
        host_address = probe.getsockname()[0]
    except OSError:
        host_address = None
    finally:
        probe.close()
    targets = [("127.0.0.1", site.port)]
    if host_address and not host_address.startswith("127."):
        with socket.create_connection((host_address, site.port), timeout=5):
            pass  # reachable from here
        targets.append((host_address, site.port))
    code = (
        "import socket\n"
        f"for target in {targets!r}:\n"
        "    try:\n"
        "        socket.create_connection(target, timeout=3)\n"
        "        print('connected', target)\n"
        "    except OSError as error:\n"
        "        print('refused', type(error).__name__)\n"
    )
    result = asyncio.run(
        Sandbox(workspace, NETWORKED).shell(
            f'unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; python3 -c "{code}"; '
            f"curl -sS --noproxy '*' http://127.0.0.1:{site.port}/"
        )
    )
    assert "connected" not in result.stdout
    assert result.stdout.count("refused") == len(targets)
    assert "reached" not in result.stdout
    assert site.hosts == []


def test_nothing_is_left_running_after_a_call_or_a_terminal(workspace: Path, site: Site) -> None:
    before = _proxy_folders()
    sandbox = Sandbox(workspace, NETWORKED)
    result = asyncio.run(sandbox.shell("sleep 1361.5 & curl -sS http://127.0.0.1:1/; echo done"))
    assert result.stdout.endswith("done\n")
    assert _nothing_left(before), "a relay or a proxy outlived its call"

    async def terminal() -> str:
        async with Terminals(sandbox) as terminals:
            await terminals.open("net")
            await terminals.write("net", f"curl -sS http://127.0.0.1:{site.port}/; echo")
            text = ""
            deadline = time.monotonic() + 10
            while "allow it under network.allow" not in text and time.monotonic() < deadline:
                text += await terminals.read("net", wait=1)
            assert _relays(), "the terminal's relay runs while it is open"
            return text

    text = asyncio.run(terminal())
    assert "127.0.0.1 is a loopback address" in text
    assert _nothing_left(before), "a terminal's relay or proxy outlived it"
    assert site.hosts == []


def test_sandbox_settings_take_allow_network() -> None:
    assert SandboxSettings.model_validate({"allow_network": True}).allow_network is True
    # `type: none` has no walls: its commands keep the host's network and proxies
    environ = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "HTTP_PROXY": "http://p:1"}
    plain = Sandbox(Path(), SandboxSettings(type="none", allow_network=True), environ=environ)
    assert plain.environment["HTTP_PROXY"] == "http://p:1"
    walled = Sandbox(Path(), NETWORKED, environ=environ)
    assert walled.environment["HTTP_PROXY"] == "http://127.0.0.1:3128"
    assert walled.environment["NO_PROXY"] == ""


def test_an_agents_shell_reaches_what_its_network_rules_allow(write: Write, site: Site) -> None:
    """agent.yaml's `network.allow` is the policy its commands' proxy applies: the allowed
    port answers, another port of the same address is refused with the reason."""
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "builtins: [shell]\nsandbox: {allow_network: true}\n"
            + f"network: {{allow: ['127.0.0.1:{site.port}']}}\n"
        }
    )
    agent = Agent(load_agent(root / "agent.yaml"), RunOptions(model="test"))
    command = f"curl -sS http://127.0.0.1:{site.port}/; echo; curl -sS http://127.0.0.1:1/"
    call = json.dumps({"command": command})

    async def go() -> str:
        async with agent, agent.session() as session:
            final = await session.answer(f"/call shell {call}")
        return str(final.tool_calls[0].result)

    result = asyncio.run(go())
    assert "reached\n" in result
    assert "blocked: 127.0.0.1 is a loopback address; allow it under network.allow" in result
    assert site.hosts == [f"127.0.0.1:{site.port}"]
