"""The HTTP service behind `holodeck deploy`: agents served over `/v1/chat` (JSON or
Server-Sent Events), the OpenAI-compatible `/v1/chat/completions`, sessions kept in a
`SessionStore`, AG-UI at `/awp`, MCP at `/mcp` (and over stdio: `serve_mcp_stdio`),
agent images uploaded over HTTP, and a chat page at `/`.

`create_app(ServeOptions(paths=(...,)))` gives the ASGI app (FastAPI); `serve(options)`
runs it under uvicorn. Its modules are private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports

if TYPE_CHECKING:
    from holodeck.server._app import create_app as create_app
    from holodeck.server._options import ServeOptions as ServeOptions
    from holodeck.server._serve import serve as serve
    from holodeck.server.mcp import serve_mcp_stdio as serve_mcp_stdio

_EXPORTS = {
    "create_app": "holodeck.server._app",
    "ServeOptions": "holodeck.server._options",
    "serve": "holodeck.server._serve",
    "serve_mcp_stdio": "holodeck.server.mcp",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
