"""An MCP server that keeps notes as files `NAME.note` in DIR, for the tests of what the
offline model may call: `read_note` is annotated read-only and `delete_note` destructive
(`destructiveHint: true`).

    python notes.py DIR                 stdio
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

app = MCPServer("notes")
NOTES = Path(sys.argv[1])


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_note(name: str) -> str:
    """The text of a note."""
    return (NOTES / f"{name}.note").read_text(encoding="utf-8")


@app.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_note(name: str) -> str:
    """Delete a note for good."""
    (NOTES / f"{name}.note").unlink()
    return f"deleted {name}"


if __name__ == "__main__":
    app.run()
