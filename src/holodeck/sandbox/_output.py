"""A command's output, capped: the head and the tail are kept and the cut is said, so long
output never floods the model's context."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


class CappedText:
    """Bytes read from a stream, of which the first and last `limit // 2` are kept."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            # trim in large steps only, so a chatty command costs linear time
            if len(self.tail) > 2 * self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = bytes(self.tail[-self.half :]) if self.tail else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return head + tail.decode("utf-8", "replace")
        return (
            f"{head}\n[... {cut} bytes cut: {self.total} in all; the first and last "
            f"{self.half} are shown ...]\n{tail.decode('utf-8', 'replace')}"
        )


async def read_capped(stream: asyncio.StreamReader | None, into: CappedText) -> None:
    """Read `stream` to its end into `into`."""
    if stream is None:
        return
    while chunk := await stream.read(65536):
        into.add(chunk)


@dataclass(frozen=True)
class CommandResult:
    """What one command did: its exit code (negative: killed by that signal; None: killed
    at its timeout), its output kept apart, each capped."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    def for_model(self) -> str:
        """The result as the model reads it."""
        if self.timed_out:
            status = "timed out: the command and its children were stopped"
        else:
            status = f"exit code {self.exit_code}"
        parts = [status]
        if self.stdout:
            parts.append(f"stdout:\n{self.stdout}")
        if self.stderr:
            parts.append(f"stderr:\n{self.stderr}")
        return "\n".join(parts)
