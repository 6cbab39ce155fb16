"""Terminals: named, persistent shells an agent opens, writes to and reads from, each a
sandboxed process, all closed with the session that owns them.

    async with Terminals(sandbox) as terminals:
        await terminals.open("build")
        await terminals.write("build", "cd src && make")
        print(await terminals.read("build", wait=5))
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from types import TracebackType

from holodeck.sandbox import CappedText, Sandbox, stop
from holodeck.tools.workspace._errors import WorkspaceError

MAX_TERMINALS = 4
QUIET = 0.15  # seconds without output after which a read returns early


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    limit: int
    pending: CappedText = field(init=False)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    reader: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self.pending = CappedText(self.limit)

    async def pump(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.pending.add(chunk)
            self.changed.set()
        self.changed.set()

    def take(self) -> str:
        text = self.pending.text()
        self.pending = CappedText(self.limit)
        return text


class Terminals:
    """The terminals of one session, in `sandbox` (a shell each: `shell`)."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        shell: tuple[str, ...] = ("sh",),
        max_terminals: int = MAX_TERMINALS,
    ) -> None:
        self.sandbox = sandbox
        self.shell = shell
        self.max_terminals = max_terminals
        self._open: dict[str, _Terminal] = {}

    def _get(self, name: str) -> _Terminal:
        terminal = self._open.get(name)
        if terminal is None:
            known = ", ".join(sorted(self._open)) or "none"
            raise WorkspaceError(f"no terminal named {name!r} (open: {known}); open it first")
        return terminal

    async def open(self, name: str) -> str:
        """Start a shell named `name` in the workspace."""
        if name in self._open:
            raise WorkspaceError(f"terminal {name!r} is already open")
        if len(self._open) >= self.max_terminals:
            raise WorkspaceError(
                f"{self.max_terminals} terminals are open; close one before opening another"
            )
        process = await self.sandbox.start(self.shell)
        terminal = _Terminal(process, self.sandbox.limits.max_output_chars)
        terminal.reader = asyncio.create_task(terminal.pump())
        self._open[name] = terminal
        return f"opened terminal {name!r}"

    async def write(self, name: str, text: str, enter: bool = True) -> str:
        """Send `text` to the terminal's shell (with a line break when `enter`)."""
        terminal = self._get(name)
        stdin = terminal.process.stdin
        if stdin is None or terminal.process.returncode is not None:
            raise WorkspaceError(f"terminal {name!r} has exited; close it and open another")
        data = text + ("\n" if enter and not text.endswith("\n") else "")
        try:
            stdin.write(data.encode("utf-8"))
            await stdin.drain()
        except ConnectionError:
            raise WorkspaceError(
                f"terminal {name!r} has exited; close it and open another"
            ) from None
        return f"sent {len(data)} characters to {name!r}"

    async def read(self, name: str, wait: float = 1.0) -> str:
        """The output since the last read, waiting up to `wait` seconds for it to start and
        settle."""
        terminal = self._get(name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(wait, 0.0)
        while terminal.process.returncode is None:
            terminal.changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                break
            got = terminal.pending.total > 0
            try:
                async with asyncio.timeout(min(left, QUIET) if got else left):
                    await terminal.changed.wait()
            except TimeoutError:
                if got:
                    break  # output came and has gone quiet
        text = terminal.take()
        if terminal.process.returncode is not None:
            text += f"\n[terminal exited with code {terminal.process.returncode}]"
        return text or "(no output)"

    async def close(self, name: str) -> str:
        """Stop the terminal's shell and everything it started."""
        terminal = self._get(name)
        del self._open[name]
        await self._stop(terminal)
        return f"closed terminal {name!r}"

    @staticmethod
    async def _stop(terminal: _Terminal) -> None:
        await stop(terminal.process)
        if terminal.reader is not None:
            terminal.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await terminal.reader

    async def aclose(self) -> None:
        """Close every terminal (the session ends)."""
        while self._open:
            _, terminal = self._open.popitem()
            await self._stop(terminal)

    async def __aenter__(self) -> Terminals:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
