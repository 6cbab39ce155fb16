"""Middleware around tool calls, from Python files named in agent.yaml `middleware:`.

A middleware file defines any of these functions (sync or async):

    def before_tool(call: ToolCall) -> dict | None
        Return new arguments, or None to keep them.
    def after_tool(call: ToolCall, result) -> object
        Return the result the model should see.
    def on_tool_error(call: ToolCall, error: Exception, retry) -> object
        Return a result to use instead of the error (a fallback), `await retry()` /
        `retry(args)` to call the tool again, or raise to pass the error on.

Files run in the order listed. An error no middleware handles is logged and the
model receives an empty string, so a failing tool never stops the turn.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holodeck.tools.errors import ToolLoadError
from holodeck.tools.python_modules import load_module

HOOKS = ("before_tool", "after_tool", "on_tool_error")

Retry = Callable[..., Awaitable[Any]]


@dataclass
class ToolCall:
    """What middleware sees of a call."""

    name: str
    args: dict[str, Any]
    agent: str = ""
    attempt: int = 1


@dataclass(frozen=True)
class Middleware:
    before: tuple[Callable[..., Any], ...] = ()
    after: tuple[Callable[..., Any], ...] = ()
    on_error: tuple[Callable[..., Any], ...] = ()
    files: tuple[Path, ...] = field(default=())

    @classmethod
    def load(cls, files: list[Path]) -> Middleware:
        before, after, on_error = [], [], []
        for path in files:
            module = load_module(path)
            hooks = {name: getattr(module, name, None) for name in HOOKS}
            if not any(callable(h) for h in hooks.values()):
                raise ToolLoadError("defines none of " + ", ".join(HOOKS), path)
            if callable(hooks["before_tool"]):
                before.append(hooks["before_tool"])
            if callable(hooks["after_tool"]):
                after.append(hooks["after_tool"])
            if callable(hooks["on_tool_error"]):
                on_error.append(hooks["on_tool_error"])
        return cls(tuple(before), tuple(after), tuple(on_error), tuple(files))

    async def run_before(self, call: ToolCall) -> None:
        for hook in self.before:
            replaced = await _maybe_await(hook(call))
            if replaced is not None:
                call.args = dict(replaced)

    async def run_after(self, call: ToolCall, result: Any) -> Any:
        for hook in self.after:
            result = await _maybe_await(hook(call, result))
        return result

    async def recover(self, call: ToolCall, error: Exception, retry: Retry) -> tuple[bool, Any]:
        """(True, result) when some middleware produced a result; (False, error) otherwise."""
        for hook in self.on_error:
            try:
                return True, await _maybe_await(hook(call, error, retry))
            except Exception as again:  # passed on, possibly as a new error
                error = again
        return False, error


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
