"""Settings of the processes HoloDeck runs as a program (the `holodeck` command and the
server's worker processes). They are process-wide, so the library never makes them: a
program that imports HoloDeck keeps its own logging and its own libraries' defaults."""

from __future__ import annotations

import logging
import os


def quiet_program() -> None:
    """pydantic-ai greets terminals with a banner, pypdf logs every PDF it repairs ("EOF
    marker not found") and transformers draws a bar while the offline embedding model
    loads; in chat, a test report or a server log all are noise (an unreadable PDF is
    reported once, as an ingestion problem). The variables are read when those libraries
    are imported or run, so nothing is imported here."""
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def leave_quickly() -> None:
    """Spare the interpreter its last garbage collections on the way out. They walk every
    object the run made (pydantic-ai and the provider SDKs alone are hundreds of
    thousands) only to free memory the process is returning anyway: seconds of exit on a
    busy machine (`bench/cli_startup.py` measures it). Nothing waits on them: what HoloDeck
    opens is closed by its owner before this, and files still flush as the interpreter
    ends. Only for the program itself: in a caller's process it would keep all garbage."""
    import gc

    gc.freeze()
