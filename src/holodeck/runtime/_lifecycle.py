"""`Lifecycle`: which event loop an agent (or a `Run`) lives on, what opened it, and
whether it has ended.

Its servers, connections and the futures of its tool calls belong to the loop that first
used it, until it is closed; opening it while it is open, or using it from another loop,
is a `LifecycleError` rather than servers quietly rebound to a loop they were not
started on. Closed is final, as an httpx client's is: opening it again is an error
saying to make a new one."""

from __future__ import annotations

import asyncio

from holodeck.errors import LifecycleError


class Lifecycle:
    __slots__ = ("_by", "_loop", "ended", "holder", "what")

    def __init__(self, what: str) -> None:
        self.what = what  # "agent weather", "this Run": how errors name it
        self._loop: asyncio.AbstractEventLoop | None = None
        self.holder: object | None = None  # what opened it (`async with`, a Run)
        self._by = ""
        self.ended = False  # closed: never opened again

    @property
    def is_open(self) -> bool:
        return self.holder is not None

    def claim(self) -> None:
        """Tie it to the running event loop until `closed()`; raises on another loop."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise LifecycleError(
                f"{self.what} is in use on another event loop",
                hint="use it within one event loop (one `asyncio.run`); on another loop, "
                "use a new one",
            )

    def refuse_if_ended(self) -> None:
        """A `LifecycleError` once it has closed: it is not opened again."""
        if self.ended:
            raise LifecycleError(
                f"{self.what} is closed; a closed agent or Run is not opened again",
                hint="make a new one for another run: `Agent(spec, options)` (and a new "
                "`Run(agent)` around it)",
            )

    def hold(self, holder: object, by: str = "") -> None:
        """Mark it open by `holder` (`by` says where, in the error of a second opening)."""
        self.refuse_if_ended()
        if self.holder is not None:
            raise LifecycleError(
                f"{self.what} is already open{self._by}",
                hint="open it once (`async with`, or one Run), and use it inside that block",
            )
        self.claim()
        self.holder, self._by = holder, by

    def closing(self) -> None:
        """About to close: only on its own loop, unless that loop has ended already."""
        if self._loop is not None and not self._loop.is_closed():
            self.claim()

    def closed(self) -> None:
        """Closed, for good."""
        self._loop = None
        self.ended = True

    def released(self, holder: object) -> None:
        """`holder` has let go of it."""
        if self.holder is holder:
            self.holder, self._by = None, ""
