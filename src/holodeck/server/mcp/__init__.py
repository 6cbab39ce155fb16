"""MCP: each served agent as a tool of an MCP server (`_server`), over streamable HTTP
at `/mcp` (`http_endpoint`) and over stdio for `holodeck mcp serve` (`_stdio`)."""

from holodeck.server.mcp._server import http_endpoint as http_endpoint
from holodeck.server.mcp._server import mcp_server as mcp_server
from holodeck.server.mcp._stdio import serve_mcp_stdio as serve_mcp_stdio

__all__ = ["http_endpoint", "mcp_server", "serve_mcp_stdio"]
