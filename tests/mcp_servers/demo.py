"""A small MCP server for the tests, on the official `mcp` SDK.

    python demo.py                      stdio
    python demo.py http PORT            streamable HTTP on 127.0.0.1:PORT/mcp
    python demo.py sse PORT             SSE on 127.0.0.1:PORT/sse
    ... --exit-at-start                 print a complaint to stderr and exit 1
    ... --hang-at-start                 never answer (sleeps before serving)
    ... --linger                        stay alive after stdin closes (until killed)
    ... --slow-stop                     take 5 s to exit after stdin closes

DEMO_PID_FILE: a file to which each start appends its process id.
"""

from __future__ import annotations

import os

if __name__ == "__main__" and os.environ.get("DEMO_PID_FILE"):
    # before the slow imports: a start is recorded even when the client gives up on it
    with open(os.environ["DEMO_PID_FILE"], "a", encoding="utf-8") as out:  # noqa: PTH123
        out.write(f"{os.getpid()}\n")

import base64
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import EmbeddedResource, ResourceLink, TextContent, TextResourceContents
from mcp_types import Tool as MCPTool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

# What some servers publish (zod-to-json-schema, OpenAPI converters): the tests check
# that these reach the model in a form providers accept and that calls still work.
ADVERTISED: dict[str, dict[str, Any]] = {
    "search": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "What to find"},
            "site": {"$ref": "#/properties/query", "description": "Only this site"},
            "limit": {
                "type": ["integer", "null"],
                "default": 10,
                "exclusiveMinimum": True,
                "minimum": 0,
            },
            "tags": {"type": "array", "description": "Labels"},
            "link": {"type": "string", "format": "uri"},
        },
        "required": ["query"],
    },
    "lookup": {
        "type": "object",
        "anyOf": [
            {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "team": {"type": "string"}},
                "required": ["name"],
            },
        ],
    },
}


class DemoServer(MCPServer):
    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [
            t.model_copy(update={"input_schema": ADVERTISED[t.name]}) if t.name in ADVERTISED else t
            for t in tools
        ]

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return ADVERTISED.get(name) or super()._tool_input_schema(name)


app = DemoServer("demo")


@app.tool()
def echo(text: str) -> str:
    """Say `text` back."""
    return text


@app.tool()
def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


@app.tool()
def whoami() -> dict[str, Any]:
    """The server process: id, working directory, arguments and DEMO_GREETING."""
    return {
        "pid": os.getpid(),
        "cwd": str(Path.cwd()),
        "argv": sys.argv[1:],
        "greeting": os.environ.get("DEMO_GREETING", ""),
    }


@app.tool()
def header(name: str, ctx: Context) -> str:
    """An HTTP header of the request."""
    return (ctx.headers or {}).get(name.lower(), "")


@app.tool()
def crash() -> str:
    """Stop the server process at once."""
    os._exit(3)


@app.tool()
def crash_once(marker: str) -> str:
    """Stop the server the first time (creating `marker`); answer afterwards."""
    if not Path(marker).exists():
        Path(marker).write_text("crashed", encoding="utf-8")
        os._exit(3)
    return "survived"


@app.tool()
async def nap(seconds: float) -> str:
    """Sleep, then answer."""
    import anyio

    await anyio.sleep(seconds)
    return "rested"


@app.tool()
def refuse() -> str:
    """Always reports an error."""
    raise ToolError("not allowed here")


@app.tool()
def picture() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG, format="png")


@app.tool(structured_output=False)
def document() -> list[Any]:
    """Text, an embedded text resource and a link."""
    return [
        TextContent(type="text", text="the report"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="file:///report.md", mime_type="text/markdown", text="# Report"
            ),
        ),
        ResourceLink(
            type="resource_link", uri="file:///data.csv", name="data", mime_type="text/csv"
        ),
    ]


@app.tool()
def search(
    query: str,
    site: str | None = None,
    limit: int | None = None,
    tags: list[str] | None = None,
    link: str | None = None,
) -> dict[str, Any]:
    """Search (the arguments it received come back)."""
    given = {"query": query, "site": site, "limit": limit, "tags": tags, "link": link}
    return {"received": {k: v for k, v in given.items() if v is not None}}


@app.tool()
def lookup(
    id: str | None = None, name: str | None = None, team: str | None = None
) -> dict[str, Any]:
    """Find a person by id, or by name (and team)."""
    given = {"id": id, "name": name, "team": team}
    return {"received": {k: v for k, v in given.items() if v is not None}}


@app.tool(name="files.list")
def files_list() -> list[str]:
    """A dotted tool name."""
    return ["a.txt"]


@app.tool(name="summarise_the_quarterly_report_with_every_detail_the_board_asked_for")
def long_name() -> str:
    """A name longer than providers accept once prefixed."""
    return "summary"


def main() -> None:
    args = sys.argv[1:]
    if "--exit-at-start" in args:
        print("demo: cannot start: DEMO_API_KEY is not set", file=sys.stderr, flush=True)
        sys.exit(1)
    if "--hang-at-start" in args:
        time.sleep(600)
    mode = args[0] if args and not args[0].startswith("--") else "stdio"
    if mode == "stdio":
        app.run()
        if "--linger" in args:  # a server that ignores its stdin closing
            time.sleep(600)
        if "--slow-stop" in args:  # a server with a long clean-up
            time.sleep(5)
    else:
        transport = "streamable-http" if mode == "http" else "sse"
        app.run(transport, host="127.0.0.1", port=int(args[1]))  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
