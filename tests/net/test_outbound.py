"""Outbound walls: what the model or an uploaded image steers cannot reach this machine or
the private network unless the configuration names it.

Every server here listens on a loopback address (127.0.0.1 or ::1) with a random port: the
policy refuses them by default, which is what is tested, and the configuration that names
them lets the same requests through. Names resolve through /etc/hosts (`localhost`) or an
injected resolver that only ever answers with loopback addresses; nothing else is reached.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import tarfile
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.errors import HoloDeckError
from holodeck.net import DownloadError, OutboundBlocked, OutboundPolicy, download
from holodeck.runtime import Agent, Hosting, ToolCallFinished, tool_context
from holodeck.runtime.toolsets import builtin_toolset
from holodeck.spec.models.network_settings import NetworkSettings
from holodeck.tools.builtins import fetch_text
from local_http import LocalHTTPServer
from server_harness import WEATHER, Serve, until

openai_server = scripted_servers.openai_server
embeddings_server = scripted_servers.embeddings_server

pytestmark = pytest.mark.anyio


# --- small servers on loopback ----------------------------------------------------------


@dataclass
class Site:
    """An HTTP server on a loopback address: `/` says which port answered, `/to?url=U`
    redirects to U, `/via/HOST:PORT/PATH` to http://HOST:PORT/PATH. `seen` lists the
    paths and Host headers it received."""

    host: str
    server: LocalHTTPServer
    seen: list[tuple[str, str]] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    def redirect(self, target: str) -> str:
        return f"{self.url}/to?url={target}"


def start_site(host: str) -> Site:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Server(LocalHTTPServer):
        address_family = family

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.seen.append((self.path, self.headers.get("Host", "")))
            location = None
            if self.path.startswith("/to?"):
                location = parse_qs(urlsplit(self.path).query)["url"][0]
            elif self.path.startswith("/via/"):  # keeps its way when a query is added
                location = "http://" + urlsplit(self.path).path[len("/via/") :]
            if location is not None:
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = f"internal page on port {site.port}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    site = Site(host, Server((host, 0), Handler))
    threading.Thread(target=site.server.serve_forever, daemon=True).start()
    return site


@pytest.fixture
def sites() -> Iterator[Callable[[str], Site]]:
    started: list[Site] = []

    def start(host: str = "127.0.0.1") -> Site:
        started.append(start_site(host))
        return started[-1]

    yield start
    for site in started:
        site.server.shutdown()
        site.server.server_close()


def allowing(*entries: str) -> OutboundPolicy:
    return OutboundPolicy.from_settings(NetworkSettings(allow=list(entries)))


# --- web_fetch ------------------------------------------------------------------------------


async def test_a_loopback_url_is_refused_unless_allowed(sites: Callable[[str], Site]) -> None:
    site = sites("127.0.0.1")
    with pytest.raises(OutboundBlocked) as refused:
        await fetch_text(f"{site.url}/v1/models")
    assert str(refused.value) == (
        "blocked: 127.0.0.1 is a loopback address; allow it under network.allow"
    )
    assert site.seen == []  # no connection was made
    other_port = allowing("127.0.0.1:1")
    with pytest.raises(OutboundBlocked):
        await fetch_text(site.url, policy=other_port)  # an entry with a port names that port
    text = await fetch_text(site.url, policy=allowing(f"127.0.0.1:{site.port}"))
    assert text == f"internal page on port {site.port}"


async def test_a_name_resolving_to_loopback_is_refused_unless_allowed(
    sites: Callable[[str], Site],
) -> None:
    site = sites("127.0.0.1")
    url = f"http://localhost:{site.port}/"
    with pytest.raises(OutboundBlocked) as refused:
        await fetch_text(url)
    assert str(refused.value) == (
        "blocked: localhost resolves to 127.0.0.1, a loopback address; allow it under network.allow"
    )
    assert site.seen == []
    assert await fetch_text(url, policy=allowing("localhost")) == (
        f"internal page on port {site.port}"
    )
    # named by its address instead of its name: the resolved address is what counts
    assert await fetch_text(url, policy=allowing("127.0.0.0/8")) == (
        f"internal page on port {site.port}"
    )


async def test_a_redirect_to_a_refused_address_is_checked_again(
    sites: Callable[[str], Site],
) -> None:
    public, internal = sites("127.0.0.1"), sites("127.0.0.1")
    start = public.redirect(f"{internal.url}/secret")
    only_first = allowing(f"127.0.0.1:{public.port}")
    with pytest.raises(OutboundBlocked, match=r"127\.0\.0\.1 is a loopback address"):
        await fetch_text(start, policy=only_first)
    assert [path for path, _ in public.seen] == [f"/to?url={internal.url}/secret"]
    assert internal.seen == []  # the second hop never connected
    both = allowing(f"127.0.0.1:{public.port}", f"127.0.0.1:{internal.port}")
    assert await fetch_text(start, policy=both) == f"internal page on port {internal.port}"


async def test_file_urls_are_never_read() -> None:
    everything = allowing("0.0.0.0/0", "::/0", "localhost")
    for policy in (OutboundPolicy(), everything):
        with pytest.raises(OutboundBlocked) as refused:
            await fetch_text("file:///etc/passwd", policy=policy)
        assert str(refused.value) == (
            "blocked: file:///etc/passwd is not an http:// or https:// URL; only those are fetched"
        )


async def test_ipv6_loopback_is_refused_unless_allowed(sites: Callable[[str], Site]) -> None:
    site = sites("::1")
    with pytest.raises(OutboundBlocked) as refused:
        await fetch_text(site.url)
    assert str(refused.value) == "blocked: ::1 is a loopback address; allow it under network.allow"
    assert site.seen == []
    allowed = allowing(f"[::1]:{site.port}")
    assert await fetch_text(site.url, policy=allowed) == f"internal page on port {site.port}"


async def test_an_ipv4_mapped_ipv6_address_is_refused_unless_allowed(
    sites: Callable[[str], Site],
) -> None:
    site = sites("127.0.0.1")
    url = f"http://[::ffff:127.0.0.1]:{site.port}/"
    with pytest.raises(OutboundBlocked) as refused:
        await fetch_text(url)
    assert str(refused.value) == (
        "blocked: ::ffff:127.0.0.1 is a loopback address; allow it under network.allow"
    )
    assert site.seen == []
    # the IPv4 address it carries is what a rule names
    assert await fetch_text(url, policy=allowing("127.0.0.1")) == (
        f"internal page on port {site.port}"
    )


async def test_deny_wins_over_allow(sites: Callable[[str], Site]) -> None:
    site = sites("127.0.0.1")
    policy = OutboundPolicy.from_settings(
        NetworkSettings(allow=["127.0.0.0/8"], deny=[f"localhost:{site.port}"])
    )
    with pytest.raises(OutboundBlocked, match=rf"localhost:{site.port} is denied by network.deny"):
        await fetch_text(f"http://localhost:{site.port}/", policy=policy)
    assert await fetch_text(site.url, policy=policy) == f"internal page on port {site.port}"


async def test_a_search_providers_endpoint_is_reached_as_written_but_not_its_redirects(
    write: Write, sites: Callable[[str], Site]
) -> None:
    """HOLODECK_GOOGLE_SEARCH_URL is the operator's: its loopback server is reached; where
    it redirects is checked like any fetch."""
    api, internal = sites("127.0.0.1"), sites("127.0.0.1")
    spec = load_agent(
        write(
            {
                "config.yaml": "spec_version: 1\nname: scout\nllm: {model: openai/gpt-4o}\n"
                "tools:\n  builtins:\n    - {name: web_search, search_provider: google, "
                "api_key: gk-1, engine_id: cx-1}\n"
            }
        )
    )
    env = {"HOLODECK_GOOGLE_SEARCH_URL": f"{api.url}/via/127.0.0.1:{internal.port}/results"}
    toolset = builtin_toolset(spec, tool_context(spec, RunOptions(env=env)))
    search = toolset.tools["web_search"].function  # type: ignore[attr-defined]
    with pytest.raises(OutboundBlocked, match=r"127\.0\.0\.1 is a loopback address"):
        await search("tides")
    assert len(api.seen) == 1 and internal.seen == []


# --- the address checked is the address connected to ----------------------------------------


class Answers:
    """A resolver that answers each lookup with the next list of addresses."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


async def test_the_connection_goes_to_the_address_that_was_checked(
    sites: Callable[[str], Site],
) -> None:
    """`site.test` exists only in the injected resolver: the page arrives, so the
    connection used its one answer, and the Host header still names the URL's host."""
    site = sites("127.0.0.1")
    resolver = Answers(["127.0.0.1"])
    policy = OutboundPolicy.from_settings(NetworkSettings(allow=[f"127.0.0.1:{site.port}"]))
    policy = OutboundPolicy(policy.allow, policy.deny, resolver=resolver)
    text = await fetch_text(f"http://site.test:{site.port}/", policy=policy)
    assert text == f"internal page on port {site.port}"
    assert resolver.asked == [("site.test", site.port)]
    assert site.seen == [("/", f"site.test:{site.port}")]


async def test_every_answer_of_every_lookup_is_checked() -> None:
    """A name that first resolves to a public address and then to a private one (DNS
    rebinding) is refused at the lookup that gives the private one; a mixed answer is
    refused whole. Public answers are only checked here, never connected to."""
    rebinding = OutboundPolicy(resolver=Answers(["192.0.2.10"], ["10.0.0.7"]))
    assert [str(a) for a in await rebinding.addresses("rebind.test", 80)] == ["192.0.2.10"]
    with pytest.raises(OutboundBlocked) as second:
        await rebinding.addresses("rebind.test", 80)
    assert "rebind.test resolves to 10.0.0.7, a private address" in str(second.value)
    mixed = OutboundPolicy(resolver=Answers(["192.0.2.10", "169.254.169.254"]))
    with pytest.raises(OutboundBlocked, match=r"169\.254\.169\.254, a cloud metadata address"):
        await mixed.addresses("metadata.test", 80)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("127.3.4.5", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.20.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fd12:3456::1", "a private (unique-local) address"),
        ("169.254.10.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("100.64.0.1", "a carrier-grade NAT address"),
        ("224.0.0.251", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("2002:a00:1::", "a private address"),  # 6to4 of 10.0.0.1
    ],
)
async def test_non_public_addresses_are_refused_by_default(address: str, kind: str) -> None:
    policy = OutboundPolicy(resolver=Answers([address]))
    with pytest.raises(OutboundBlocked) as refused:
        await policy.addresses("somewhere.test", 443)
    assert str(refused.value) == (
        f"blocked: somewhere.test resolves to {address}, {kind}; allow it under network.allow"
    )


# --- a turn: the model reads the refusal ------------------------------------------------


def fetching(url: str) -> FunctionModel:
    """A model that fetches `url`, then answers with what the tool returned."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        returned = [
            part.content
            for message in messages
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        if returned:
            yield f"The tool said: {returned[-1]}"
            return
        yield {0: DeltaToolCall("web_fetch", json.dumps({"url": url}), tool_call_id="fetch")}

    return FunctionModel(stream_function=stream, model_name="fetching")


READER = {"config.yaml": "spec_version: 1\nname: reader\ntools: {builtins: [web_fetch]}\n"}


async def test_the_model_sees_a_short_blocked_error_and_the_log_says_it(
    write: Write, sites: Callable[[str], Site], caplog: pytest.LogCaptureFixture
) -> None:
    site = sites("127.0.0.1")
    agent = Agent(load_agent(write(READER)), RunOptions(model=fetching(f"{site.url}/v1/models")))
    with caplog.at_level(logging.WARNING):
        events = [event async for event in agent.run("read the internal page")]
    call = next(e for e in events if isinstance(e, ToolCallFinished))
    refusal = "blocked: 127.0.0.1 is a loopback address; allow it under network.allow"
    assert call.result == refusal
    assert call.error == f"OutboundBlocked: {refusal}"
    assert events[-1].text == f"The tool said: {refusal}"  # type: ignore[attr-defined]
    assert site.seen == []
    assert any(refusal in record.getMessage() for record in caplog.records)
    assert "Traceback" not in caplog.text


async def test_config_yaml_and_agent_yaml_network_blocks_allow_together(
    write: Write, sites: Callable[[str], Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The global config.yaml allows one port, the agent.yaml another (its image
    sub-agent fetches): both are reachable, a third is not."""
    first, second, third = sites("127.0.0.1"), sites("127.0.0.1"), sites("127.0.0.1")
    home = write({"config.yaml": f"network:\n  allow: ['127.0.0.1:{first.port}']\n"})
    monkeypatch.setenv("HOLODECK_HOME", str(home))
    root = write(
        {
            "agent.yaml": "name: lead\nmodel: {provider: test}\n"
            "instructions: {inline: Delegate.}\n"
            "tools:\n  - {type: agent, name: reader, path: reader}\n"
            f"network:\n  allow: ['127.0.0.1:{second.port}']\n",
            **{f"reader/{name}": text for name, text in READER.items()},
        }
    )
    spec = load_agent(root)
    policy = tool_context(spec, RunOptions()).outbound
    assert await fetch_text(first.url, policy=policy) == f"internal page on port {first.port}"
    assert await fetch_text(second.url, policy=policy) == f"internal page on port {second.port}"
    with pytest.raises(OutboundBlocked):
        await fetch_text(third.url, policy=policy)


def test_a_bad_network_entry_is_an_error_at_its_line(write: Write) -> None:
    root = write(
        {
            "agent.yaml": "name: a\nmodel: {provider: test}\ninstructions: {inline: Hi.}\n"
            "network:\n  allow:\n    - 10.0.0.0/8\n    - 'db.internal:http'\n"
        }
    )
    with pytest.raises(HoloDeckError) as failed:
        load_agent(root)
    assert "agent.yaml:7:" in str(failed.value)  # the entry's own line
    assert "network.allow[1]: 'db.internal:http': the port must be a number from 1 to 65535" in (
        str(failed.value)
    )


# --- files from URLs ------------------------------------------------------------------------


async def test_a_download_is_refused_by_default_and_allowed_by_configuration(
    sites: Callable[[str], Site],
) -> None:
    site, other = sites("127.0.0.1"), sites("127.0.0.1")
    for url in (f"{site.url}/cases.csv", f"http://localhost:{site.port}/cases.csv"):
        with pytest.raises(OutboundBlocked, match="a loopback address"):
            await download(url, OutboundPolicy())
    with pytest.raises(OutboundBlocked, match="not an http:// or https:// URL"):
        await download("file:///etc/passwd", allowing("0.0.0.0/0"))
    assert site.seen == []
    allowed = allowing(f"127.0.0.1:{site.port}")
    assert await download(f"{site.url}/cases.csv", allowed) == (
        f"internal page on port {site.port}".encode()
    )
    # a redirect to a port the configuration does not name is checked again
    with pytest.raises(OutboundBlocked):
        await download(site.redirect(other.url), allowed)
    assert other.seen == []
    with pytest.raises(DownloadError, match="larger than 4 bytes"):
        await download(f"{site.url}/cases.csv", allowed, max_bytes=4)


async def test_a_download_over_ipv6_loopback(sites: Callable[[str], Site]) -> None:
    site = sites("::1")
    for url in (site.url, f"http://[::ffff:127.0.0.1]:{site.port}/"):
        with pytest.raises(OutboundBlocked, match="a loopback address"):
            await download(url, OutboundPolicy())
    assert (
        await download(site.url, allowing("::1")) == f"internal page on port {site.port}".encode()
    )


# --- an uploaded image's MCP url ---------------------------------------------------------------


def archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def mcp_image(url: str, transport: str = "http") -> dict[str, str]:
    return {
        "config.yaml": "spec_version: 1\nname: remote\n",
        "AGENTS.md": "You help.\n",
        "tools/mcp/api.yaml": f"name: api\ntransport: {transport}\nurl: {url}\n",
    }


def upload_status(serve: Serve, files: dict[str, str]) -> dict[str, Any]:
    with serve(WEATHER, allow_uploads=True) as server:
        posted = server.client.post(
            "/v1/agents", content=archive(files), headers={"Content-Type": "application/gzip"}
        )
        assert posted.status_code == 201, posted.text

        def settled() -> dict[str, Any] | None:
            agents = server.client.get("/v1/agents").json()["agents"]
            found = next(a for a in agents if a["name"] == "remote")
            return found if found["status"] != "loading" else None

        status: dict[str, Any] = until(settled, what="the uploaded agent to start or fail")
        return status


@pytest.fixture
def mcp_url() -> Iterator[str]:
    from test_mcp import http_demo

    with http_demo("http") as (url, _):
        yield url


@pytest.fixture
def mcp_sse_url() -> Iterator[str]:
    from test_mcp import http_demo

    with http_demo("sse") as (url, _):
        yield url


def test_an_uploaded_images_mcp_url_on_loopback_is_refused(
    serve: Serve, mcp_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLODECK_HOME", str(tmp_path / "home"))
    status = upload_status(serve, mcp_image(mcp_url))
    assert status["status"] == "failed"
    assert (
        "blocked: 127.0.0.1 is a loopback address; allow it under network.allow"
        in (status["error"])
    )
    assert "Traceback" not in status["error"]


def test_an_uploaded_images_sse_server_is_refused_unless_allowed(
    serve: Serve, mcp_sse_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOLODECK_HOME", str(home))
    refused = upload_status(serve, mcp_image(mcp_sse_url, "sse"))
    assert refused["status"] == "failed"
    assert "blocked: 127.0.0.1 is a loopback address" in refused["error"]
    (home / "config.yaml").write_text("network:\n  allow: [127.0.0.1]\n")
    assert upload_status(serve, mcp_image(mcp_sse_url, "sse"))["status"] == "ready"


def test_the_servers_config_yaml_allows_an_uploaded_images_mcp_url(
    serve: Serve, mcp_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    port = mcp_url.split(":")[2].split("/")[0]
    (home / "config.yaml").write_text(f"network:\n  allow: ['127.0.0.1:{port}']\n")
    monkeypatch.setenv("HOLODECK_HOME", str(home))
    status = upload_status(serve, mcp_image(mcp_url))
    assert status["status"] == "ready", status


def test_an_uploaded_agent_yaml_cannot_allow_itself(
    serve: Serve, mcp_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own `network` block, and a config.yaml it carries, are the uploader's: ignored."""
    monkeypatch.setenv("HOLODECK_HOME", str(tmp_path / "home"))
    allow = "network:\n  allow: ['127.0.0.0/8', localhost]\n"
    files = {
        "agent.yaml": "name: remote\nmodel: {provider: test}\ninstructions: {inline: Hi.}\n"
        f"tools:\n  - {{type: mcp, name: api, url: '{mcp_url}'}}\n" + allow,
        "config.yaml": allow,
    }
    status = upload_status(serve, files)
    assert status["status"] == "failed"
    assert "blocked: 127.0.0.1 is a loopback address" in status["error"]


# --- holodeck chat --allow-loopback ----------------------------------------------------------


def test_chat_allows_loopback_with_one_flag_and_says_so(
    write: Write, sites: Callable[[str], Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    from holodeck.cli.main import cli
    from holodeck.llm import offline_model

    site = sites("127.0.0.1")

    class Arguments:  # the test model's argument for web_fetch: the local page
        def gen_tool_args(self, tool: Any) -> Any:
            return {"url": f"{site.url}/dev"}

    monkeypatch.setattr(offline_model, "_ARGS", Arguments())
    root = write(READER)
    runner = CliRunner()
    plain = runner.invoke(cli, ["chat", str(root), "--model", "test"], input="read it /call *\n")
    assert plain.exit_code == 0, plain.output
    assert "blocked: 127.0.0.1 is a loopback address" in plain.output
    assert "--allow-loopback" not in plain.output
    opened = runner.invoke(
        cli, ["chat", str(root), "--model", "test", "--allow-loopback"], input="read it /call *\n"
    )
    assert opened.exit_code == 0, opened.output
    assert f"internal page on port {site.port}" in opened.output
    assert "loopback allowed (--allow-loopback)" in opened.output
    assert [path for path, _ in site.seen] == ["/dev"]


# --- endpoints an uploaded definition names ----------------------------------------------------


def endpoint_image(url: str) -> dict[str, str]:
    return {
        "config.yaml": "spec_version: 1\nname: remote\n"
        f"executor:\n  model: openai/gpt-4o\n  connection: {{base_url: '{url}'}}\n",
        "AGENTS.md": "You help.\n",
    }


def test_an_uploaded_images_model_endpoint_is_checked_before_it_starts(
    serve: Serve, sites: Callable[[str], Site], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = sites("127.0.0.1")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOLODECK_HOME", str(home))
    refused = upload_status(serve, endpoint_image(f"{site.url}/v1"))
    assert refused["status"] == "failed"
    assert refused["error"] == (
        f"blocked: `model.endpoint` {site.url}/v1: 127.0.0.1 is a loopback address; "
        "allow it under network.allow"
    )
    (home / "config.yaml").write_text(f"network:\n  allow: ['127.0.0.1:{site.port}']\n")
    assert upload_status(serve, endpoint_image(f"{site.url}/v1"))["status"] == "ready"
    assert site.seen == []  # checked, never requested: the served model here is `test`


async def test_a_local_definitions_endpoints_are_reached_as_written(
    write: Write, sites: Callable[[str], Site]
) -> None:
    """The operator wrote them: the same image, not uploaded, starts."""
    site = sites("127.0.0.1")
    spec = load_agent(write(endpoint_image(f"{site.url}/v1")))
    async with Agent(spec, RunOptions(model="test")):
        pass
    with pytest.raises(OutboundBlocked):
        async with Agent(spec, RunOptions(model="test"), hosting=Hosting(uploaded=True)):
            pass


# --- an uploaded definition's own model endpoint: every connection checked ------------------


def own_endpoint_agent(write: Write, port: int) -> Path:
    model = {
        "provider": "openai",
        "name": "gpt-4o-mini",
        "endpoint": f"http://model.test:{port}/v1",
        "api_key": "sk-the-uploads-own",
    }
    agent = {"name": "own-endpoint", "model": model, "instructions": {"inline": "Answer."}}
    return write({"agent.yaml": json.dumps(agent)})


async def test_an_uploads_own_model_endpoint_is_checked_at_every_connection(
    write: Write, openai_server: scripted_servers.OpenAIServer
) -> None:
    """Checked when the agent starts, and again when each connection opens: a name that
    passes at start and then resolves to a refused address (DNS rebinding) never reaches
    it; an allowed one is reached at the checked address, under its own name."""
    spec = load_agent(own_endpoint_agent(write, openai_server.port))
    allow = NetworkSettings(allow=[f"127.0.0.1:{openai_server.port}"])
    allowed = OutboundPolicy.from_settings(allow)
    allowed = OutboundPolicy(allowed.allow, allowed.deny, resolver=Answers(["127.0.0.1"]))
    openai_server.script(scripted_servers.text("hello from the upload's own model"))
    agent = Agent(spec, hosting=Hosting(uploaded=True, outbound=allowed))
    async with agent, agent.session() as session:
        answer = await session.answer("hi")
    assert answer.text == "hello from the upload's own model"
    assert openai_server.requests[-1].headers["host"] == f"model.test:{openai_server.port}"
    seen = len(openai_server.requests)

    rebinding = OutboundPolicy(resolver=Answers(["192.0.2.10"], ["127.0.0.1"]))
    agent = Agent(spec, hosting=Hosting(uploaded=True, outbound=rebinding))
    async with agent, agent.session() as session:
        with pytest.raises(OutboundBlocked) as caught:
            await session.answer("hi")
    assert len(openai_server.requests) == seen  # the rebound address was never connected to
    assert str(caught.value) == (
        "blocked: model.test resolves to 127.0.0.1, a loopback address; "
        "allow it under network.allow"
    )


async def test_an_uploads_own_embedding_endpoint_is_checked_at_every_connection(
    embeddings_server: scripted_servers.EmbeddingsServer, tmp_path: Path
) -> None:
    from holodeck.search.embeddings import choose_embedder
    from holodeck.spec.models.model_settings import ModelSettings
    from holodeck.spec.models.settings import Settings

    own = ModelSettings(
        provider="openai",
        name="gpt-4o-mini",
        endpoint=f"http://embed.test:{embeddings_server.port}/v1",
        api_key="sk-the-uploads-own",
    )

    def embedder(policy: OutboundPolicy) -> Any:
        return choose_embedder(
            None,
            own,
            Settings(),
            {},
            dimensions=None,
            cache_dir=tmp_path / "cache",
            lent=frozenset(),
            outbound=policy,
        )

    loopback = OutboundPolicy(resolver=Answers(["127.0.0.1"]))
    with pytest.raises(OutboundBlocked, match=r"embed\.test resolves to 127\.0\.0\.1, a loopback"):
        await embedder(loopback).embed(["alpha"])
    assert embeddings_server.requests == []
    allow = OutboundPolicy.from_settings(
        NetworkSettings(allow=[f"127.0.0.1:{embeddings_server.port}"])
    )
    allowed = OutboundPolicy(allow.allow, allow.deny, resolver=Answers(["127.0.0.1"]))
    vectors = await embedder(allowed).embed(["alpha"])
    assert len(vectors) == 1
    assert embeddings_server.requests[-1].headers["host"] == f"embed.test:{embeddings_server.port}"
