"""Tools an agent can call: Python functions, prompt templates, TypeScript functions,
skills, sub-agents and builtins, all observed the same way (events, timing, errors)."""
