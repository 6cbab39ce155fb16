"""The shell and code tools: one command, or one Python snippet in a fresh interpreter,
run in the sandbox with a timeout, the output capped and the exit code kept.

    commands = CommandTools(Sandbox(Path("work")))
    print(await commands.shell("pytest -q"))
"""

from __future__ import annotations

from holodeck.sandbox import Sandbox


class CommandTools:
    """`shell` and `run_python` in `sandbox`; `python` is the interpreter's name or path as
    the sandbox sees it (the user's home is hidden there, so an interpreter installed
    under it is not found)."""

    def __init__(self, sandbox: Sandbox, *, python: str = "python3") -> None:
        self.sandbox = sandbox
        self.python = python

    async def shell(self, command: str, timeout: float | None = None) -> str:
        """Run `command` with `sh -c` in the workspace; the exit code, stdout and stderr."""
        result = await self.sandbox.shell(command, timeout=timeout)
        return result.for_model()

    async def run_python(self, code: str, timeout: float | None = None) -> str:
        """Run `code` in a fresh Python interpreter in the workspace (isolated mode: no
        user site-packages, no PYTHON* variables)."""
        result = await self.sandbox.run(
            [self.python, "-I", "-"], stdin=code.encode("utf-8"), timeout=timeout
        )
        return result.for_model()
