"""The agent image format: config.yaml, AGENTS.md, skills, Python and TypeScript tools,
MCP servers, inline agents and tests, in a directory."""
