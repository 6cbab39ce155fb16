"""MCP: the served agents as tools of an MCP server, at /mcp over streamable HTTP and
through `holodeck mcp serve` over stdio, each driven by the official `mcp` client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx

from server_harness import REPO, WEATHER, Serve, agent_dir, function_tool, log_lines

Use = Callable[[Any], Awaitable[Any]]


@asynccontextmanager
async def http_client(url: str, key: str | None = None) -> AsyncIterator[Any]:
    """An initialized `mcp.ClientSession` on the server's /mcp."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_client(*args: str, errlog: Any = None) -> AsyncIterator[Any]:
    """An initialized `mcp.ClientSession` on `holodeck mcp serve ARGS`."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client as spawn

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "holodeck", "mcp", "serve", *args], env=dict(os.environ)
    )
    async with (
        spawn(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def run(coroutine: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coroutine

    return asyncio.run(main())


async def conversation(session: Any, tool: str) -> tuple[Any, Any, Any]:
    """A question with tool calls, a follow-up in its session, and the same follow-up
    in a new session."""
    first = await session.call_tool(tool, {"question": "Weather in Oslo? /call *"})
    session_id = first.structured_content["session_id"]
    more = await session.call_tool(tool, {"question": "Thanks!", "session_id": session_id})
    fresh = await session.call_tool(tool, {"question": "Thanks!"})
    return first, more, fresh


def check_conversation(first: Any, more: Any, fresh: Any) -> None:
    assert not first.is_error and not more.is_error and not fresh.is_error
    answer = first.structured_content
    assert first.content[0].text == answer["response"] and "Oslo" in answer["response"]
    assert [c["name"] for c in answer["tool_calls"]] == ["get_weather", "get_forecast"]
    assert more.structured_content["session_id"] == answer["session_id"]
    assert fresh.structured_content["session_id"] != answer["session_id"]
    # the follow-up was sent with the conversation so far: it read more than the same
    # question asked afresh
    grown = more.structured_content["usage"]["input_tokens"]
    assert grown > fresh.structured_content["usage"]["input_tokens"]


def test_each_served_agent_is_a_tool_at_mcp_and_a_conversation_continues(
    serve: Serve, tmp_path: Path
) -> None:
    helper = agent_dir(tmp_path / "helper", name="helper", description="Helps with anything.")

    async def use(url: str) -> tuple[Any, ...]:
        async with http_client(url) as session:
            tools = (await session.list_tools()).tools
            return (tools, *(await conversation(session, "weather")))

    with serve(WEATHER, helper) as server:
        tools, first, more, fresh = run(use(server.url))
        stored = server.client.get(
            f"/v1/sessions/{first.structured_content['session_id']}", params={"agent": "weather"}
        ).json()
    assert [t.name for t in tools] == ["helper", "weather"]
    helper_tool = tools[0]
    assert "Helps with anything." in (helper_tool.description or "")
    assert helper_tool.input_schema["required"] == ["question"]
    assert set(helper_tool.input_schema["properties"]) == {"question", "session_id"}
    check_conversation(first, more, fresh)
    users = [m["content"] for m in stored["messages"] if m["role"] == "user"]
    assert users == ["Weather in Oslo? /call *", "Thanks!"]


def test_a_callers_mistakes_are_the_tools_error_results_saying_what_to_do(
    serve: Serve,
) -> None:
    async def use(url: str) -> list[Any]:
        async with http_client(url) as session:
            return [
                await session.call_tool("weather", {"question": ""}),
                await session.call_tool("weather", {"question": "Hi", "session_id": "no/slash"}),
                await session.call_tool("weather", {"question": "Hi", "city": "Oslo"}),
            ]

    with serve(WEATHER) as server:
        results = run(use(server.url))
    assert all(r.is_error for r in results)
    texts = [r.content[0].text for r in results]
    assert "`question` is required" in texts[0]
    assert "session_id" in texts[1] and "letters, digits" in texts[1]
    assert "unknown argument 'city'" in texts[2]


def test_keys_ownership_body_limit_and_request_log_hold_as_for_chat(
    serve: Serve, tmp_path: Path
) -> None:
    keys = (("alice", "k-alice"), ("bob", "k-bob"))
    home = tmp_path / "home"

    async def use(url: str) -> tuple[Any, Any, Any]:
        async with http_client(url, "k-alice") as alice:
            first = await alice.call_tool("weather", {"question": "Weather in Oslo? /call *"})
        session_id = first.structured_content["session_id"]
        async with http_client(url, "k-bob") as bob:
            stolen = await bob.call_tool("weather", {"question": "Hi", "session_id": session_id})
        async with http_client(url, "k-alice") as alice:
            again = await alice.call_tool("weather", {"question": "Hi", "session_id": session_id})
        return first, stolen, again

    with serve(WEATHER, named_keys=keys, max_request_bytes=4000, log_dir=str(home / "logs")) as s:
        anonymous = s.client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        big = s.client.post(
            "/mcp",
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x" * 5000}),
            headers={"Authorization": "Bearer k-alice", "Content-Type": "application/json"},
        )
        first, stolen, again = run(use(s.url))
    assert anonymous.status_code == 401 and anonymous.json()["error"]["type"] == "unauthorized"
    assert big.status_code == 413 and big.json()["error"]["type"] == "too_large"
    assert not first.is_error and not again.is_error
    assert stolen.is_error and "no session" in stolen.content[0].text
    session_id = first.structured_content["session_id"]
    lines = [x for x in log_lines(home, "weather") if x["endpoint"] == "/mcp"]
    answered = [(x["key"], x["session_id"], x["status"]) for x in lines if x["status"] == 200]
    assert answered == [("alice", session_id, 200), ("alice", session_id, 200)]
    assert any(x["status"] == 404 and x["key"] == "bob" for x in lines)
    assert any(x["status"] == 401 for x in lines) and any(x["status"] == 413 for x in lines)
    first_line = next(x for x in lines if x["status"] == 200)
    # `/call *` runs both tools at once: the log lists them in the order they finished
    assert {c["name"] for c in first_line["tool_calls"]} == {"get_weather", "get_forecast"}


def test_holodeck_mcp_serve_answers_over_stdio_with_only_protocol_on_stdout(
    tmp_path: Path,
) -> None:
    noisy = agent_dir(
        tmp_path / "noisy",
        name="noisy",
        python="print('imported, said on stdout')\n\n"
        "def shout() -> str:\n    print('a tool talking on stdout')\n    return 'done'\n",
        tools=[function_tool("shout")],
    )
    errors = tmp_path / "stderr.txt"

    async def use() -> tuple[Any, ...]:
        with errors.open("w") as errlog:
            serving = (str(WEATHER), str(noisy), "--model", "test")
            async with stdio_client(*serving, errlog=errlog) as session:
                tools = (await session.list_tools()).tools
                loud = await session.call_tool("noisy", {"question": "Go /call shout"})
                return (tools, loud, *(await conversation(session, "weather")))

    tools, loud, first, more, fresh = run(use())
    assert sorted(t.name for t in tools) == ["noisy", "weather"]
    check_conversation(first, more, fresh)
    assert not loud.is_error
    assert [c["result"] for c in loud.structured_content["tool_calls"]] == ["done"]
    said = errors.read_text()
    assert "imported, said on stdout" in said and "a tool talking on stdout" in said


def test_holodeck_mcp_serve_stdout_is_only_json_rpc(tmp_path: Path) -> None:
    """Read raw: every line the process writes to stdout is a JSON-RPC message."""
    noisy = agent_dir(
        tmp_path / "noisy",
        name="noisy",
        python="print('noise at import')\n\ndef shout() -> str:\n    return 'done'\n",
        tools=[function_tool("shout")],
    )
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "holodeck", "mcp", "serve", str(noisy), "--model", "test"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    deadline = threading.Timer(180, process.kill)  # a busy machine; a hang fails, not waits
    deadline.start()
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        replies = []
        while len(replies) < 2:  # as a client does: the answers, then it leaves
            line = process.stdout.readline()
            assert line, "the server ended before answering both requests"
            replies.append(json.loads(line))  # a stray line fails here
        rest, stderr = process.communicate(timeout=180)  # closes stdin: the client left
    finally:
        deadline.cancel()
        process.kill()
    assert rest == ""  # nothing else on stdout
    assert [r.get("id") for r in replies] == [1, 2]
    assert [t["name"] for t in replies[1]["result"]["tools"]] == ["noisy"]
    assert "noise at import" in stderr


def test_holodeck_mcp_serve_reports_a_bad_definition_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("name: broken\nmodel: [\n")
    done = subprocess.run(
        [sys.executable, "-m", "holodeck", "mcp", "serve", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "agent.yaml" in done.stderr and "Traceback" not in done.stderr


def test_the_deploy_guides_mcp_example_runs(serve: Serve, capsys: Any) -> None:
    page = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    section = page.split("### MCP", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```py\n(.*?)^```$", section, flags=re.M | re.S)
    with serve(WEATHER) as server:
        exec(block, {"server_url": server.url, "__name__": "example"})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "['weather']"
    assert "And tomorrow?" in printed[1]  # the offline model answers the follow-up


def test_agui_and_mcp_turns_are_server_spans_named_for_their_endpoint(
    serve: Serve, tmp_path: Path, monkeypatch: Any
) -> None:
    from agui_client import run_input
    from holodeck.observability import shutdown_shared
    from otlp_receiver import otlp_http

    monkeypatch.setenv("HOLODECK_HOME", str(tmp_path / "home"))
    home = tmp_path / "home"

    async def ask(url: str) -> Any:
        async with http_client(url) as session:
            return await session.call_tool("traced", {"question": "Hello"})

    with otlp_http() as received:
        observability = {
            "enabled": True,
            "traces": {"schedule_delay_millis": 50},
            "logs": {"include_trace_context": True},
            "exporters": {"otlp": {"endpoint": received.endpoint, "protocol": "http"}},
        }
        path = agent_dir(tmp_path / "traced", name="traced", observability=observability)
        try:
            with serve(path, log_dir=str(home / "logs")) as server:
                assert server.client.post("/awp", json=run_input("t-1", "Hi")).status_code == 200
                assert not run(ask(server.url)).is_error
            lines = {x["endpoint"]: x for x in log_lines(home, "traced") if x["status"] == 200}
            ids = {lines[e]["span_id"] for e in ("/awp", "/mcp")}
            received.wait_for(lambda r: ids <= {s.span_id for s in r.spans})
            for endpoint in ("/awp", "/mcp"):
                line = lines[endpoint]
                span = next(s for s in received.spans if s.span_id == line["span_id"])
                assert span.name == endpoint and span.trace_id == line["trace_id"]
                assert span.attributes["gen_ai.conversation.id"] == line["session_id"]
                turns = [s for s in received.spans if s.name == "invoke_agent traced"]
                assert any(t.parent_id == span.span_id for t in turns)
        finally:
            asyncio.run(shutdown_shared())


def test_the_rate_limit_refuses_mcp_requests_over_it(serve: Serve) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "Authorization": "Bearer k",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    with serve(WEATHER, api_keys=("k",), requests_per_minute=2) as server:
        answers = [server.client.post("/mcp", json=listing, headers=headers) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [t["name"] for t in answers[0].json()["result"]["tools"]] == ["weather"]
    assert answers[2].json()["error"]["type"] == "rate_limited"
    assert answers[2].headers["retry-after"]
