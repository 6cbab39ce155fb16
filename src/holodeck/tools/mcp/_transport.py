"""A transport whose end (the server process exited) is noticed at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio


@asynccontextmanager
async def _watched(transport: Any, stop: asyncio.Event) -> AsyncIterator[Any]:
    """`transport`, with its end (the server process exited) setting `stop`."""
    async with transport as (read, write):
        yield _EndAware(read, stop.set), write


class _EndAware:
    def __init__(self, stream: Any, on_end: Callable[[], None]) -> None:
        self._stream, self._on_end = stream, on_end

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _EndAware:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndAware:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
