"""How an agent's tools work: Python tool modules and the threads their calls run in,
MCP server connections (`mcp`), the Node.js process of TypeScript tools (`typescript`),
the A2A client (`a2a`), builtins (`web_fetch`, `web_search`) and tool middleware. The
runtime offers them to the model and observes every call (`holodeck.runtime.toolsets`).
Search tools over the agent's own files (`vectorstore`, `hierarchical_document`) are a
feature of their own: `holodeck.search`."""
