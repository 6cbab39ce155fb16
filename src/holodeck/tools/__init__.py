"""Tools an agent can call: Python functions, prompt templates, TypeScript functions,
skills, sub-agents and builtins (`web_fetch`, `web_search`), all observed the same way
(events, timing, errors). Search tools over the agent's own files (`vectorstore`,
`hierarchical_document`) are a feature of their own: `holodeck.search`."""
