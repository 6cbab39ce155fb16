"""Children that a test interrupts with SIGINT, as Ctrl+C in a terminal would.

A shell's background jobs (`make test &`, `nohup ... &`) ignore SIGINT, and that is
inherited through fork and exec: a chat or test run started by such a suite ignores the
signal, as Unix intends for background work, and Python installs no KeyboardInterrupt
handler. A user's foreground command has the default disposition; `foreground` restores
it in the child before it starts."""

from __future__ import annotations

import signal


def foreground() -> None:
    """`preexec_fn` for a child that will be sent SIGINT: the default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
