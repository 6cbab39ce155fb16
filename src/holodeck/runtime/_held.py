"""`Held`: a toolset that keeps something running (MCP servers, Node.js, search indexes,
sub-agents, terminals) as an async context manager, counted.

The agent enters each of its toolsets when it opens and leaves them when it closes;
pydantic-ai enters them again around every run. What they keep running starts with the
first holder and stops when the last leaves, so it lives from the agent's opening to its
closing, not from one turn to the next. A session's own toolsets are entered by its
`SessionScope` the same way."""

from __future__ import annotations

from typing import Any, Self


class Held:
    """Mixed into a toolset with `start()` (may do nothing) and `aclose()`."""

    _holders = 0

    async def start(self) -> None:
        """Start what the toolset runs (by default nothing: it starts on first use)."""

    async def aclose(self) -> None:
        """Stop what the toolset runs."""

    async def __aenter__(self) -> Self:
        self._holders += 1
        if self._holders == 1:
            try:
                await self.start()
            except BaseException:
                self._holders -= 1
                raise
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        self._holders = max(0, self._holders - 1)
        if self._holders == 0:
            await self.aclose()
        return None
