"""MCP tools: real servers (the SDK's, over stdio, streamable HTTP and SSE on 127.0.0.1; the
npm filesystem server), schemas providers accept, results the model reads, failures that
never stop a turn, restarts, timeouts, and no child process left behind."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import BinaryContent, ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.tools import ToolDefinition

import scripted_servers
from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, Event, FinalMessage, ToolCallFinished
from holodeck.runtime.toolsets import McpToolset, mcp_toolset, model_content
from holodeck.spec.models.tools import McpTool
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.mcp import McpToolError
from holodeck.tools.mcp.schema import (
    TOOL_NAME,
    ToolSchema,
    exposed_name,
    model_schema,
    strip_nulls,
)
from scripted_servers import Call, OpenAIServer, text, tool_calls
from yaml_dump import dump

pytestmark = pytest.mark.anyio

openai_server = scripted_servers.openai_server

DEMO = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo.py"
REPO = Path(__file__).resolve().parents[2]
LONG = "summarise_the_quarterly_report_with_every_detail_the_board_asked_for"


# --- helpers ---------------------------------------------------------------------------


def demo(name: str = "demo", *flags: str, **fields: Any) -> dict[str, Any]:
    """A `type: mcp` entry running tests/mcp_servers/demo.py over stdio."""
    return {
        "type": "mcp",
        "name": name,
        "command": sys.executable,
        "args": [str(DEMO), *flags],
    } | fields


def agent_yaml(*tools: dict[str, Any], **extra: Any) -> str:
    return dump(
        {
            "name": "helper",
            "model": {"provider": "openai", "name": "gpt-4o"},
            "instructions": {"inline": "You help."},
            "tools": list(tools),
            **extra,
        }
    )


class Script:
    """A model that makes the listed calls, one step per request, and records the tools
    it was offered. A step is a list of (tool, args), or the answer's text."""

    def __init__(self, *steps: list[tuple[str, dict[str, Any]]] | str) -> None:
        self.steps = list(steps)
        self.offered: list[dict[str, ToolDefinition]] = []

    def model(self) -> FunctionModel:
        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | DeltaToolCalls]:
            self.offered.append({t.name: t for t in info.function_tools})
            step = self.steps.pop(0) if self.steps else "done"
            if isinstance(step, str):
                yield step
                return
            yield {
                i: DeltaToolCall(
                    name, json.dumps(args), tool_call_id=f"call{len(self.offered)}_{i}"
                )
                for i, (name, args) in enumerate(step)
            }

        return FunctionModel(stream_function=stream, model_name="script")


def build(root: Path, model: Any = "test") -> Agent:
    return Agent(load_agent(root), RunOptions(model=model))


async def turn(
    agent: Agent, prompt: str = "go /call *", expected_tools: list[str] | None = None
) -> list[Event]:
    """One turn; the offline model calls `expected_tools` (as a test case's would), else
    what the prompt asks for (by default every tool: `/call *`)."""
    with agent.options.offline.expecting(expected_tools):
        return [event async for event in agent.run(prompt)]


def calls(events: list[Event]) -> dict[str, ToolCallFinished]:
    return {e.name: e for e in events if isinstance(e, ToolCallFinished)}


def mcp_of(agent: Agent) -> McpToolset:
    found: list[McpToolset] = []
    for toolset in agent._toolsets:
        toolset.apply(lambda t: found.append(t) if isinstance(t, McpToolset) else None)
    (toolset,) = found
    return toolset


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def until(check: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def http_demo(
    transport: str = "http", port: int | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """tests/mcp_servers/demo.py serving `transport` on 127.0.0.1; yields its URL."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, str(DEMO), transport, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60  # a loaded machine starts Python slowly
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, "the demo server exited"
                assert time.monotonic() < deadline, "the demo server did not listen in time"
                time.sleep(0.02)
        path = "mcp" if transport == "http" else "sse"
        yield f"http://127.0.0.1:{port}/{path}", process
    finally:
        process.kill()
        process.wait()


# --- names and schemas -----------------------------------------------------------------


def test_names_are_prefixed_sanitised_and_shortened() -> None:
    assert exposed_name("fs", "read_file", set()) == "fs_read_file"
    assert exposed_name("fs", "files.list", set()) == "fs_files_list"
    assert exposed_name("fs", "get user/name", set()) == "fs_get_user_name"
    long = exposed_name("library", LONG, set())
    assert len(long) == 64 and long.startswith("library_summarise_the_quarterly")
    assert long == exposed_name("library", LONG, set())  # deterministic
    taken = {"fs_a_b"}
    other = exposed_name("fs", "a.b", taken)  # `fs_a_b` is another tool's
    assert other != "fs_a_b" and other.startswith("fs_a_b_")
    for name in (long, other, exposed_name("x" * 64, "y", set())):
        assert TOOL_NAME.fullmatch(name)


FILESYSTEM_EDIT = {  # @modelcontextprotocol/server-filesystem, edit_file
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"],
            },
        },
        "dryRun": {"default": False, "description": "Preview only", "type": "boolean"},
    },
    "required": ["path", "edits"],
}
ZOD_REUSE = {  # zod-to-json-schema points a reused subschema at its first occurrence
    "type": "object",
    "properties": {
        "owner": {"type": "string", "minLength": 1},
        "repo": {"$ref": "#/properties/owner", "description": "Repository"},
        "labels": {"type": ["array", "null"], "items": {"type": "string"}},
        "since": {"type": "string", "format": "date-time"},
        "homepage": {"type": "string", "format": "uri"},
    },
    "required": ["owner", "repo"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}
DRAFT4 = {  # older generators: boolean exclusiveMinimum/exclusiveMaximum
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {
        "page": {"type": "integer", "minimum": 1, "exclusiveMinimum": False, "default": 1},
        "per_page": {"type": "number", "exclusiveMaximum": True, "maximum": 100},
    },
}
NO_TYPES = {  # hand-written: no `type` anywhere, `nullable` from OpenAPI
    "properties": {
        "mode": {"enum": ["fast", "slow"]},
        "note": {"type": "string", "nullable": True},
        "kind": {"const": "x"},
    },
    "required": ["mode"],
}
DEFINITIONS = {  # draft-07 `definitions`, a ref with siblings, oneOf, allOf intersection
    "type": "object",
    "definitions": {
        "Address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
            },
            "required": ["street"],
        },
        "Named": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        "Aged": {"type": "object", "properties": {"age": {"type": "integer"}}},
    },
    "properties": {
        "home": {"$ref": "#/definitions/Address", "description": "Where they live"},
        "contact": {
            "oneOf": [{"type": "string", "format": "email"}, {"type": "string", "format": "ipv4"}]
        },
        "person": {"allOf": [{"$ref": "#/definitions/Named"}, {"$ref": "#/definitions/Aged"}]},
    },
    "required": ["home"],
}
ROOT_ALTERNATIVES = {  # `type: object` with the alternatives at the root
    "type": "object",
    "properties": {"verbose": {"type": "boolean"}},
    "oneOf": [
        {"properties": {"id": {"type": "string"}}, "required": ["id"]},
        {"properties": {"email": {"type": "string"}}, "required": ["email"]},
    ],
}
EMPTY: dict[str, Any] = {}  # some servers send `{}` for a tool without arguments
PYDANTIC_OPTIONAL = {  # the Python SDK: Optional[...] = None, with titles
    "type": "object",
    "properties": {
        "q": {"title": "Q", "type": "string"},
        "limit": {
            "anyOf": [{"type": "integer"}, {"type": "null"}],
            "default": None,
            "title": "Limit",
        },
    },
    "required": ["q"],
    "title": "searchArguments",
}


@pytest.mark.parametrize(
    "raw",
    [
        FILESYSTEM_EDIT,
        ZOD_REUSE,
        DRAFT4,
        NO_TYPES,
        DEFINITIONS,
        ROOT_ALTERNATIVES,
        EMPTY,
        PYDANTIC_OPTIONAL,
    ],
    ids=[
        "filesystem",
        "zod",
        "draft4",
        "untyped",
        "definitions",
        "root-oneOf",
        "empty",
        "pydantic",
    ],
)
def test_server_schemas_become_what_providers_accept(raw: dict[str, Any]) -> None:
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer
    from pydantic_ai.providers.anthropic import AnthropicJsonSchemaTransformer

    before = json.dumps(raw, sort_keys=True)
    made = model_schema(raw)
    assert json.dumps(raw, sort_keys=True) == before  # the server's schema is not changed
    schema = made.schema
    jsonschema.Draft202012Validator.check_schema(schema)
    # both providers: an object at the root, nothing they refuse there
    assert schema["type"] == "object" and isinstance(schema["properties"], dict)
    assert not {"anyOf", "oneOf", "allOf", "not", "enum", "$schema"} & set(schema)
    assert "$schema" not in json.dumps(schema) and "definitions" not in schema
    # OpenAI: sent strict, the schema as it is (nothing left for strict mode to refuse)
    assert sent_to_openai(made).strict is True
    assert OpenAIJsonSchemaTransformer(schema, strict=True).walk()
    # Anthropic strict mode too (its SDK's transform_schema)
    assert AnthropicJsonSchemaTransformer(schema, strict=True).walk()["type"] == "object"
    # arguments made for the model's schema, once their added nulls are gone, fit the server's
    generated = TestModel(seed=0).gen_tool_args(
        ToolDefinition(name="t", parameters_json_schema=schema)
    )
    args = strip_nulls(generated, made.shape)
    if raw is not ROOT_ALTERNATIVES:  # the union's alternatives are described, not enforced
        jsonschema.validate(args, raw)
    assert None not in args.values()


def test_schema_rewrites_keep_what_the_server_said() -> None:
    made = model_schema(ZOD_REUSE)
    props = made.schema["properties"]
    assert props["repo"]["type"] == "string"  # the $ref into #/properties, inlined
    assert props["repo"]["description"] == "Repository (minLength: 1)"
    assert props["owner"] == {"type": "string", "description": "(minLength: 1)"}
    draft4 = model_schema(DRAFT4).schema["properties"]
    assert {"type": "null"} in draft4["page"]["anyOf"] and "(default: 1)" in draft4["page"][
        "description"
    ]
    assert {"type": "integer", "minimum": 1} in draft4["page"]["anyOf"]
    assert {"type": "number", "exclusiveMaximum": 100} in draft4["per_page"]["anyOf"]
    assert "(format: uri)" in props["homepage"]["description"]
    assert {"type": "string", "format": "date-time"} in props["since"]["anyOf"]  # strict allows it
    assert made.schema["required"] == list(props)
    assert strip_nulls({"owner": "o", "repo": "r", "labels": None, "since": None}, made.shape) == {
        "owner": "o",
        "repo": "r",
        "labels": None,  # the server accepts null there: it stays
    }
    root = model_schema(ROOT_ALTERNATIVES).schema
    assert set(root["properties"]) == {"verbose", "id", "email"}
    assert "(id); (email)" in root["description"]
    untyped = model_schema(NO_TYPES).schema["properties"]
    assert untyped["mode"]["type"] == "string"
    assert {"const": "x", "type": "string"} in untyped["kind"]["anyOf"]
    assert {"type": "string"} in untyped["note"]["anyOf"] and {"type": "null"} in untyped["note"][
        "anyOf"
    ]
    person = model_schema(DEFINITIONS).schema["properties"]["person"]
    branch = next(b for b in person["anyOf"] if b.get("type") == "object")
    assert set(branch["properties"]) == {"name", "age"}  # allOf merged


def sent_to_openai(made: ToolSchema) -> ToolDefinition:
    """The tool as the OpenAI model puts it in its request (the toolset sets `strict` so)."""
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    tool = ToolDefinition(
        name="t", parameters_json_schema=made.schema, strict=None if made.strict_ok else False
    )
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="sk-unused"))
    params = model.customize_request_parameters(ModelRequestParameters(function_tools=[tool]))
    return params.function_tools[0]


def test_schemas_strict_mode_cannot_take_stay_whole_and_non_strict() -> None:
    dict_param = {
        "type": "object",
        "properties": {"metadata": {"type": "object", "additionalProperties": {"type": "string"}}},
    }
    conditional = {
        "type": "object",
        "properties": {"a": {"type": "string", "not": {"const": "x"}}},
        "required": ["a"],
    }
    tree = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
    }
    pair = {  # a draft-04 tuple
        "type": "object",
        "properties": {
            "point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}
        },
        "required": ["point"],
    }
    for raw in (dict_param, conditional, tree, pair):
        made = model_schema(raw)
        jsonschema.Draft202012Validator.check_schema(made.schema)
        assert sent_to_openai(made).strict is False
    assert model_schema(dict_param).schema["properties"]["metadata"]["anyOf"][1][
        "additionalProperties"
    ] == {"type": "string"}
    assert model_schema(conditional).schema["properties"]["a"]["not"] == {
        "const": "x",
        "type": "string",
    }
    point = model_schema(pair).schema["properties"]["point"]
    assert point["prefixItems"] == [{"type": "number"}, {"type": "number"}]
    recursive = model_schema(tree).schema
    assert recursive["$defs"]["Node"]["properties"]["kids"]["items"] == {"$ref": "#/$defs/Node"}


KEYWORDS = [
    "type", "properties", "required", "items", "anyOf", "oneOf", "allOf", "not", "enum",
    "const", "$ref", "$defs", "definitions", "additionalProperties", "default", "format",
    "minimum", "exclusiveMinimum", "nullable", "prefixItems", "description", "x",
]  # fmt: skip
junk = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.sampled_from(
            ["object", "string", "array", "null", "int", "#/properties/a", "#", "#/$defs/n", "uri"]
        ),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*KEYWORDS, "a", "n"]), inner, max_size=5),
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(raw=junk)
def test_any_input_schema_becomes_an_object_providers_take(raw: Any) -> None:
    """Whatever a server sends: no exception, an object root, and schemas pydantic-ai's
    provider transformers walk (strict when it says so)."""
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer
    from pydantic_ai.providers.anthropic import AnthropicJsonSchemaTransformer

    made = model_schema(raw)
    assert made.schema["type"] == "object" and isinstance(made.schema["properties"], dict)
    assert not {"anyOf", "oneOf", "allOf", "not", "enum"} & set(made.schema)
    jsonschema.Draft202012Validator.check_schema(made.schema)
    AnthropicJsonSchemaTransformer(made.schema, strict=None).walk()
    OpenAIJsonSchemaTransformer(made.schema, strict=None).walk()
    sent_to_openai(made)  # the OpenAI model puts it in a request, strict or not
    strip_nulls({"a": None, "n": [None]}, made.shape)


# --- results ---------------------------------------------------------------------------


def test_results_become_model_readable_content() -> None:
    from mcp_types import (
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        TextContent,
    )

    png = base64.b64encode(b"\x89PNG....").decode()
    pdf = base64.b64encode(b"%PDF-1.4").decode()
    raw = base64.b64encode(b"\x00\x01").decode()

    def blob(data: str, mime: str) -> EmbeddedResource:
        return EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(uri="file:///x", blob=data, mime_type=mime),
        )

    text_json = CallToolResult(content=[TextContent(type="text", text='{"a": 1}')])
    assert model_content(text_json) == {"a": 1}
    structured = CallToolResult(
        content=[
            TextContent(type="text", text="3"),
            ImageContent(type="image", data=png, mime_type="image/png"),
        ],
        structured_content={"total": 3},
    )
    total, image = model_content(structured)
    assert (
        total == {"total": 3}
        and isinstance(image, BinaryContent)
        and image.media_type == "image/png"
    )
    files = model_content(
        CallToolResult(content=[blob(pdf, "application/pdf"), blob(raw, "application/zip")])
    )
    assert isinstance(files[0], BinaryContent) and files[0].data == b"%PDF-1.4"
    assert files[1] == {
        "resource": "file:///x",
        "mime_type": "application/zip",
        "bytes": 2,
        "note": "binary content, not shown",
    }
    assert model_content(
        CallToolResult(content=[blob(base64.b64encode(b"k: v").decode(), "application/yaml")])
    ) == {
        "resource": "file:///x",
        "text": "k: v",
    }
    assert model_content(CallToolResult(content=[])) == ""
    with pytest.raises(McpToolError, match="disk full"):
        model_content(
            CallToolResult(content=[TextContent(type="text", text="disk full")], is_error=True)
        )


# --- stdio -----------------------------------------------------------------------------


async def test_stdio_server_tools_reach_the_model_and_answer(write: Write) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml(
                demo("demo", "--flag", env={"DEMO_GREETING": "hello"}, description="Test helpers.")
            )
        }
    )
    script = Script(
        [
            ("demo_echo", {"text": "hi"}),
            ("demo_add", {"a": 2, "b": None}),  # a null for an optional argument: left out
            ("demo_whoami", {}),
            ("demo_files_list", {}),
            (
                "demo_search",
                {"query": "cats", "site": None, "limit": None, "tags": ["x"], "link": None},
            ),
            ("demo_lookup", {"id": None, "name": "Ada", "team": None, "verbose": None}),
        ],
        "done",
    )
    async with build(root, script.model()) as agent:
        events = await turn(agent)
    offered = script.offered[0]
    long = next(name for name in offered if name.startswith("demo_summarise"))
    assert len(long) == 64
    assert {"demo_echo", "demo_add", "demo_files_list", "demo_picture", "demo_crash"} <= set(
        offered
    )
    assert all(TOOL_NAME.fullmatch(name) for name in offered)
    assert (
        offered["demo_echo"].description == "Say `text` back.\n\n(MCP server `demo`: Test helpers.)"
    )
    assert offered["demo_lookup"].strict is None  # strict-compatible: OpenAI may use strict mode
    assert offered["demo_search"].strict is False  # `tags` has no item type: strict cannot say
    got = calls(events)
    assert all(c.ok for c in got.values()), got
    assert got["demo_echo"].result == "hi"
    assert got["demo_add"].result == 4  # structured content, the default b=2 applied
    who = got["demo_whoami"].result
    assert who["greeting"] == "hello" and who["argv"] == ["--flag"]
    assert Path(who["cwd"]) == root.resolve()  # relative paths start at the agent
    assert got["demo_files_list"].result == ["a.txt"]
    assert got["demo_search"].result == {"received": {"query": "cats", "tags": ["x"]}}
    assert got["demo_lookup"].result == {"received": {"name": "Ada"}}
    assert isinstance(events[-1], FinalMessage)


async def test_images_and_resources_reach_the_model(write: Write) -> None:
    root = write({"agent.yaml": agent_yaml(demo())})
    script = Script([("demo_picture", {}), ("demo_document", {})], "done")
    async with build(root, script.model()) as agent:
        events = await turn(agent)
    got = calls(events)
    picture = got["demo_picture"].result
    assert isinstance(picture, BinaryContent) and picture.media_type == "image/png"
    assert picture.data.startswith(b"\x89PNG")
    assert got["demo_document"].result == [
        "the report",
        {"resource": "file:///report.md", "text": "# Report"},
        {"resource_link": "file:///data.csv", "name": "data", "mime_type": "text/csv"},
    ]


async def test_a_tool_error_is_recorded_and_the_turn_goes_on(write: Write) -> None:
    root = write({"agent.yaml": agent_yaml(demo())})
    async with build(root) as agent:
        events = await turn(agent, expected_tools=["demo_refuse", "demo_echo"])
    got = calls(events)
    assert got["demo_refuse"].error == "McpToolError: Error executing tool refuse: not allowed here"
    assert got["demo_refuse"].result == ""
    assert got["demo_echo"].ok
    assert isinstance(events[-1], FinalMessage)


async def whoami(agent: Agent) -> int:
    events = await turn(agent, expected_tools=["demo_whoami"])
    pid: int = calls(events)["demo_whoami"].result["pid"]
    return pid


async def test_a_server_starts_once_per_agent_and_stops_on_close(write: Write) -> None:
    """Two turns share one server process; aclose() ends it."""
    root = write({"agent.yaml": agent_yaml(demo())})
    agent = build(root)
    first = await whoami(agent)
    assert await whoami(agent) == first
    await agent.aclose()
    assert gone(first)
    again = build(root)  # closed is final: a new agent starts a new server
    assert await whoami(again) != first
    await again.aclose()


def test_a_server_ends_with_the_event_loop_that_started_it(write: Write) -> None:
    """Servers run on the caller's loop: when it ends they stop. Until it is closed the
    agent is that loop's: another loop using it is refused; closed, it is not used again."""
    from holodeck.errors import LifecycleError

    agent = build(write({"agent.yaml": agent_yaml(demo())}))
    first = asyncio.run(whoami(agent))
    assert gone(first)
    with pytest.raises(LifecycleError, match="another event loop"):
        asyncio.run(whoami(agent))
    asyncio.run(agent.aclose())
    with pytest.raises(LifecycleError, match="is closed"):
        asyncio.run(whoami(agent))


EXITS_WITHOUT_CLOSING = """
import asyncio, sys
from holodeck.runtime import Agent
from holodeck import RunOptions
from holodeck.config.loader import load_agent

async def main():
    agent = Agent(load_agent(sys.argv[1]), RunOptions(model="test"))
    with agent.options.offline.expecting(["demo_whoami"]):
        async for event in agent.run("go"):
            if type(event).__name__ == "ToolCallFinished":
                print(event.result["pid"], flush=True)

asyncio.run(main())
"""


def test_servers_left_running_are_stopped_when_the_process_exits(write: Write) -> None:
    """A program that never calls aclose(), with a server that outlives its stdin."""
    root = write({"agent.yaml": agent_yaml(demo("demo", "--linger"))})
    done = subprocess.run(
        [sys.executable, "-c", EXITS_WITHOUT_CLOSING, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    pid = int(done.stdout.split()[0])
    assert gone(pid)  # stopped before the program ended


async def test_the_allowlist_limits_the_tools_and_names_unknown_ones(
    write: Write, caplog: pytest.LogCaptureFixture
) -> None:
    root = write({"agent.yaml": agent_yaml(demo(tools=["echo", "add", "nope"]))})
    script = Script("done")
    async with build(root, script.model()) as agent:
        with caplog.at_level(logging.WARNING, logger="holodeck.tools.mcp"):
            await turn(agent)
    assert set(script.offered[0]) == {"demo_echo", "demo_add"}
    assert "MCP server `demo` has no tool `nope` (listed in `tools:`)" in caplog.text


TOOLS_PY = "def local() -> str:\n    return 'still here'\n"
LOCAL = {"type": "function", "name": "local", "file": "tools.py", "function": "local"}


async def test_a_missing_command_is_reported_once_and_other_tools_work(
    write: Write, caplog: pytest.LogCaptureFixture
) -> None:
    missing = {"type": "mcp", "name": "ghost", "command": "holodeck-no-such-server"}
    root = write({"agent.yaml": agent_yaml(LOCAL, missing), "tools.py": TOOLS_PY})
    async with build(root) as agent:
        with caplog.at_level(logging.WARNING, logger="holodeck.tools.mcp"):
            first = await turn(agent)
            second = await turn(agent)
        reason = mcp_of(agent).unavailable()["ghost"]
    assert calls(first)["local"].result == "still here" and calls(second)["local"].ok
    assert set(calls(first)) == {"local"}  # the server's tools are absent
    assert "`holodeck-no-such-server`: not found" in reason and "fix `command`" in reason
    warnings = [r for r in caplog.records if "ghost" in r.getMessage()]
    assert len(warnings) == 1 and "MCP server `ghost`" in warnings[0].getMessage()


async def test_an_agent_left_without_any_tool_fails_clearly(write: Write) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"type": "mcp", "name": "ghost", "command": "holodeck-no-such-server"}
            )
        }
    )
    with pytest.raises(
        ToolLoadError, match=r"every MCP server failed: MCP server `ghost`"
    ) as caught:
        async with build(root) as agent:  # said when the agent starts, before any turn
            await turn(agent)
    assert "agent.yaml" in str(caught.value)


async def test_a_server_exiting_at_start_shows_what_it_said(write: Write) -> None:
    root = write(
        {"agent.yaml": agent_yaml(LOCAL, demo("broken", "--exit-at-start")), "tools.py": TOOLS_PY}
    )
    async with build(root) as agent:
        events = await turn(agent)
        reason = mcp_of(agent).unavailable()["broken"]
    assert calls(events)["local"].ok
    assert reason.startswith("MCP server `broken` (")
    assert "DEMO_API_KEY is not set" in reason and "check `command`/`args`/`env`" in reason


async def test_retry_starts_a_failing_server_again(write: Write, tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    retry = {"max_retries": 2, "backoff_base_s": 0.05, "jitter": False}
    broken = demo("broken", "--exit-at-start", retry=retry, env={"DEMO_PID_FILE": str(starts)})
    root = write({"agent.yaml": agent_yaml(LOCAL, broken), "tools.py": TOOLS_PY})
    async with build(root) as agent:
        await turn(agent)
        await turn(agent)  # within backoff_max_s of the failure: not tried again yet
    assert len(starts.read_text().split()) == 3


async def test_a_relative_command_starts_in_the_agents_directory(write: Write) -> None:
    root = write(
        {
            "agent.yaml": agent_yaml({"type": "mcp", "name": "local", "command": "bin/serve"}),
            "bin/serve": f'#!/bin/sh\nexec "{sys.executable}" "{DEMO}" "$@"\n',
        }
    )
    (root / "bin" / "serve").chmod(0o755)
    async with build(root) as agent:
        who = calls(await turn(agent, expected_tools=["local_whoami"]))["local_whoami"]
    assert who.ok and Path(who.result["cwd"]) == root.resolve()


async def test_a_server_hanging_past_its_startup_timeout_is_stopped(
    write: Write, tmp_path: Path
) -> None:
    pid_file = tmp_path / "hang.pid"
    # the shell records the pid at once (a loaded machine may take more than the 1 s
    # timeout to start Python), then becomes the hanging server
    hang = f'echo $$ >> "$DEMO_PID_FILE"; exec "{sys.executable}" "{DEMO}" --hang-at-start'
    hanging = demo("slow", startup_timeout=1, env={"DEMO_PID_FILE": str(pid_file)}) | {
        "command": "/bin/sh",
        "args": ["-c", hang],
    }
    root = write({"agent.yaml": agent_yaml(LOCAL, hanging), "tools.py": TOOLS_PY})
    started = time.monotonic()
    async with build(root) as agent:
        events = await turn(agent)
        reason = mcp_of(agent).unavailable()["slow"]
    assert time.monotonic() - started < 60  # 1 s and the SDK's stop (stdin, TERM, KILL), not a hang
    assert calls(events)["local"].ok
    assert "did not start within 1 s" in reason and "raise `startup_timeout`" in reason
    assert gone(int(pid_file.read_text().split()[0]))


async def test_a_server_that_dies_is_restarted_on_the_next_call(write: Write) -> None:
    root = write({"agent.yaml": agent_yaml(demo())})
    whoami = [("demo_whoami", {})]
    script = Script(whoami, "1", [("demo_crash", {})], "2", whoami, "3", whoami, "4")
    async with build(root, script.model()) as agent:
        first = calls(await turn(agent))["demo_whoami"].result["pid"]
        crashed = calls(await turn(agent))["demo_crash"]
        assert crashed.error is not None and "stopped during the call" in crashed.error
        assert "restarted on the next call" in crashed.error
        second = calls(await turn(agent))["demo_whoami"]
        assert second.ok and second.result["pid"] != first
        # killed between turns: noticed, and restarted before the next call
        os.kill(second.result["pid"], signal.SIGKILL)
        await until(lambda: mcp_of(agent).running() == {"demo": False})
        third = calls(await turn(agent))["demo_whoami"]
        assert third.ok and third.result["pid"] != second.result["pid"]
    assert gone(first) and gone(third.result["pid"])


async def test_retry_runs_a_call_again_on_a_restarted_server(write: Write, tmp_path: Path) -> None:
    retry = {"max_retries": 1, "backoff_base_s": 0.05, "jitter": False}
    root = write({"agent.yaml": agent_yaml(demo(retry=retry))})
    marker = tmp_path / "crashed-once"
    script = Script([("demo_crash_once", {"marker": str(marker)})], "done")
    async with build(root, script.model()) as agent:
        got = calls(await turn(agent))["demo_crash_once"]
    assert marker.exists() and got.ok and got.result == "survived"


async def test_a_call_past_its_timeout_fails_and_the_server_keeps_serving(write: Write) -> None:
    root = write({"agent.yaml": agent_yaml(demo(timeout=0.5))})
    script = Script([("demo_nap", {"seconds": 300})], [("demo_echo", {"text": "after"})], "done")
    started = time.monotonic()
    async with build(root, script.model()) as agent:
        events = await turn(agent)
    assert time.monotonic() - started < 120  # the 0.5 s timeout ended it, not the 300 s nap
    got = calls(events)
    assert got["demo_nap"].error is not None
    assert "no result from MCP server `demo` within 0.5 s (`timeout`)" in got["demo_nap"].error
    assert got["demo_echo"].result == "after"


# --- HTTP ------------------------------------------------------------------------------


async def test_streamable_http_server_with_headers(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_TOKEN", "s3cret")
    with http_demo("http") as (url, _):
        entry = {
            "type": "mcp",
            "name": "remote",
            "url": url,
            "headers": {"Authorization": "Bearer ${DEMO_TOKEN}"},
        }
        root = write({"agent.yaml": agent_yaml(entry)})
        script = Script(
            [("remote_header", {"name": "Authorization"}), ("remote_add", {"a": 1, "b": 1})], "done"
        )
        async with build(root, script.model()) as agent:
            got = calls(await turn(agent))
    assert got["remote_header"].result == "Bearer s3cret"
    assert got["remote_add"].result == 2


async def test_sse_server(write: Write) -> None:
    with http_demo("sse") as (url, _):
        root = write(
            {
                "agent.yaml": agent_yaml(
                    {"type": "mcp", "name": "old", "url": url, "transport": "sse"}
                )
            }
        )
        async with build(root) as agent:
            got = calls(await turn(agent, expected_tools=["old_echo", "old_picture"]))
    assert got["old_echo"].ok and isinstance(got["old_picture"].result, BinaryContent)


async def test_an_image_declares_an_http_server(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools/mcp/*.yaml: `${VAR}` in headers, and the image's tools.timeout as default."""
    monkeypatch.setenv("DEMO_TOKEN", "image-token")
    with http_demo("http") as (url, _):
        root = write(
            {
                "config.yaml": "spec_version: 1\nname: img\nllm: {model: openai/gpt-4o}\n"
                "tools: {timeout: 0.5}\n",
                "AGENTS.md": "You help.\n",
                "tools/mcp/api.yaml": f"name: api\ntransport: http\nurl: {url}\n"
                "headers:\n  X-Token: ${DEMO_TOKEN}\n",
            }
        )
        script = Script([("api_header", {"name": "X-Token"}), ("api_nap", {"seconds": 30})], "done")
        async with build(root, script.model()) as agent:
            got = calls(await turn(agent))
    assert got["api_header"].result == "image-token"
    assert got["api_nap"].error is not None and "within 0.5 s" in got["api_nap"].error


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and never answers."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


async def test_an_http_server_that_never_answers_times_out_at_start(write: Write) -> None:
    with silent_listener() as port:
        entry = {
            "type": "mcp",
            "name": "mute",
            "url": f"http://127.0.0.1:{port}/mcp",
            "startup_timeout": 0.5,
        }
        root = write({"agent.yaml": agent_yaml(LOCAL, entry), "tools.py": TOOLS_PY})
        started = time.monotonic()
        async with build(root) as agent:
            events = await turn(agent)
            reason = mcp_of(agent).unavailable()["mute"]
    assert time.monotonic() - started < 60  # the startup timeout ended it, not a hang
    assert calls(events)["local"].ok
    assert reason.startswith(
        f"MCP server `mute` (http://127.0.0.1:{port}/mcp) did not start within 0.5 s"
    )


async def test_http_server_down_then_back(write: Write, caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    retry = {"backoff_max_s": 0.1}  # how long a failed server waits before it is tried again
    entry = {"type": "mcp", "name": "api", "url": f"http://127.0.0.1:{port}/mcp", "retry": retry}
    root = write({"agent.yaml": agent_yaml(LOCAL, entry), "tools.py": TOOLS_PY})
    async with build(root) as agent:
        with caplog.at_level(logging.WARNING, logger="holodeck.tools.mcp"):
            down = await turn(agent, expected_tools=["local"])
        assert set(calls(down)) == {"local"}
        reason = mcp_of(agent).unavailable()["api"]
        assert f"MCP server `api` (http://127.0.0.1:{port}/mcp) is unreachable" in reason
        assert "check that it runs and that `url` is right" in reason
        with http_demo("http", port) as (_, server):
            # turns within backoff_max_s of the failure do not try it; a later one does
            deadline = time.monotonic() + 60
            while "api_echo" not in (up := calls(await turn(agent, expected_tools=["api_echo"]))):
                assert time.monotonic() < deadline, "the server was not tried again"
                await asyncio.sleep(0.01)
            assert up["api_echo"].ok
            server.kill()
            server.wait()
            lost = calls(await turn(agent, expected_tools=["api_echo"]))["api_echo"]
        assert lost.error is not None and "connection failed during the call" in lost.error
        with http_demo("http", port):
            again = calls(await turn(agent, expected_tools=["api_echo"]))["api_echo"]
        assert again.ok  # reconnected
    assert any("is unreachable" in r.getMessage() for r in caplog.records)


# --- providers see schemas they accept -------------------------------------------------


def test_openai_receives_strict_tools_and_the_server_the_arguments(
    write: Write, openai_server: OpenAIServer
) -> None:
    model = {
        "provider": "openai",
        "name": "gpt-4o",
        "endpoint": openai_server.url,
        "api_key": "sk-test",
    }
    root = write(
        {
            "agent.yaml": dump(
                {
                    "name": "a",
                    "model": model,
                    "instructions": {"inline": "Help."},
                    "tools": [demo(tools=["search", "lookup"])],
                }
            )
        }
    )
    openai_server.script(
        tool_calls(
            Call(
                "demo_search",
                {"query": "cats", "site": None, "limit": None, "tags": None, "link": None},
            )
        ),
        text("Found."),
    )
    agent = Agent(load_agent(root))

    async def run() -> list[Event]:
        async with agent:
            return await turn(agent)

    events = asyncio.run(run())
    assert calls(events)["demo_search"].result == {"received": {"query": "cats"}}
    first = openai_server.bodies()[0]
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert set(tools) == {"demo_search", "demo_lookup"}
    assert tools["demo_lookup"]["strict"] is True
    assert tools["demo_search"].get("strict") in (None, False)  # `tags` has no item type
    assert tools["demo_search"]["parameters"]["properties"]["tags"]["anyOf"][1]["items"] == {}
    for function in tools.values():
        parameters = function["parameters"]
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert parameters["required"] == list(parameters["properties"])
        assert not {"anyOf", "oneOf", "allOf"} & set(parameters)


# --- configuration ---------------------------------------------------------------------


def test_filesystem_config_becomes_the_servers_arguments(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    tool = McpTool(
        name="fs",
        server="@modelcontextprotocol/server-filesystem@2025.8.21",
        config={"allowed_directories": ["docs", str(tmp_path)]},
    )
    (server,) = mcp_toolset([tool], tmp_path, {"PATH": "/usr/bin"})._servers
    assert server.launch.command == "npx"
    assert server.launch.args == (
        "-y",
        "@modelcontextprotocol/server-filesystem@2025.8.21",
        str((tmp_path / "docs").resolve()),
        str(tmp_path.resolve()),
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"command": "python", "config": {"x": 1}},
            "only understood for @modelcontextprotocol/server-filesystem",
        ),
        ({"url": "http://127.0.0.1:1/mcp", "config": {"x": 1}}, "for stdio servers only"),
        (
            {"server": "@modelcontextprotocol/server-filesystem", "config": {"roots": ["."]}},
            "unknown `config` key(s) roots",
        ),
        (
            {
                "server": "@modelcontextprotocol/server-filesystem",
                "config": {"allowed_directories": "nowhere"},
            },
            "allowed directory not found",
        ),
        (
            {
                "server": "@modelcontextprotocol/server-filesystem",
                "config": {"allowed_directories": [3]},
            },
            "must be a directory or a list",
        ),
        (
            {"url": "http://127.0.0.1:1/${NOT_SET}"},
            "`url` http://127.0.0.1:1/${NOT_SET} still hold",
        ),
        (
            {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k${KEY}"}},
            "header `X-Key` still hold",
        ),
    ],
)
def test_settings_that_would_do_nothing_are_refused(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    source = tmp_path / "agent.yaml"
    with pytest.raises(ToolLoadError) as caught:
        mcp_toolset([McpTool(name="s", **fields)], tmp_path, {}, source)
    assert message in str(caught.value) and str(caught.value).startswith(
        f"{source}: MCP server `s`"
    )


def test_the_docs_examples_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ```yaml block of docs/mcp.md starts with `# <file>`; together they form an
    agent.yaml agent and an image, which load and whose servers are accepted."""
    monkeypatch.setenv("SEARCH_API_TOKEN", "t")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    blocks = re.findall(
        r"^```yaml\n(.*?)^```$", (REPO / "docs" / "mcp.md").read_text("utf-8"), re.M | re.S
    )
    assert len(blocks) >= 3
    for block in blocks:
        first = block.splitlines()[0]
        assert first.startswith("# "), first
        target = tmp_path / first[2:].strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block, encoding="utf-8")
    (tmp_path / "yaml-agent" / "data").mkdir(parents=True)
    (tmp_path / "image" / "AGENTS.md").write_text("You help.\n", encoding="utf-8")
    for root in (tmp_path / "yaml-agent", tmp_path / "image"):
        spec = load_agent(root)
        mcp = [t for t in spec.tools if isinstance(t, McpTool)]
        assert mcp
        mcp_toolset(mcp, spec.root, dict(os.environ), spec.source)


# --- the npm filesystem server ---------------------------------------------------------


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
async def test_the_npm_filesystem_server(write: Write, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("keep out", encoding="utf-8")
    fs = {
        "type": "mcp",
        "name": "fs",
        "server": "@modelcontextprotocol/server-filesystem",
        "config": {"allowed_directories": ["notes"]},
        "startup_timeout": 120,
    }
    root = write({"agent.yaml": agent_yaml(fs), "notes/todo.md": "buy milk\n"})
    inside = (root / "notes" / "todo.md").resolve()
    script = Script(
        [
            ("fs_read_text_file", {"path": str(inside), "head": None, "tail": None}),
            ("fs_read_text_file", {"path": str(outside), "head": None, "tail": None}),
            ("fs_list_allowed_directories", {}),
        ],
        "done",
    )
    async with build(root, script.model()) as agent:
        events = await turn(agent)
        assert _processes_mentioning(str(inside.parent))  # running while the agent is open
    offered = script.offered[0]
    assert {"fs_read_text_file", "fs_list_directory", "fs_write_file", "fs_search_files"} <= set(
        offered
    )
    assert all(TOOL_NAME.fullmatch(n) for n in offered)
    assert all(t.strict is None for t in offered.values())  # every schema strict-compatible
    by_id = {e.call_id: e for e in events if isinstance(e, ToolCallFinished)}
    read, refused, allowed = (by_id[f"call1_{i}"] for i in range(3))
    assert read.result == {"content": "buy milk\n"}
    assert refused.error is not None and "Access denied" in refused.error
    assert "outside allowed directories" in refused.error
    assert str(inside.parent) in json.dumps(allowed.result)
    await until(lambda: not _processes_mentioning(str(inside.parent)))  # nothing left behind


async def test_closing_an_agent_stops_its_sub_agents_servers(write: Write) -> None:
    """A sub-agent's MCP server is stopped by the parent's aclose(), not left to exit."""
    root = write(
        {
            "agent.yaml": agent_yaml({"type": "agent", "name": "worker", "path": "worker"}),
            "worker/agent.yaml": agent_yaml(demo(tools=["whoami"])),
        }
    )
    agent = build(root)
    events = await turn(agent, '/call worker {"task": "who? /call demo_whoami"}')
    found = next(e for e in events if isinstance(e, ToolCallFinished) and e.name == "demo_whoami")
    assert found.agent == "worker"
    pid = found.result["pid"]
    assert not gone(pid)
    await agent.aclose()
    assert gone(pid)


def test_a_root_that_refers_to_itself_becomes_an_open_object() -> None:
    """Found by the property test: `{"$ref": "#"}` left an `anyOf` at the root."""
    result = model_schema({"$ref": "#", "additionalProperties": None})
    assert result.schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf", "not", "enum"} & set(result.schema)
    assert sent_to_openai(result).strict is False
