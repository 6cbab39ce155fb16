"""The runs dashboard (`holodeck test view`): a page over the runs saved in a directory,
with their pass rates and metric averages over time, each run's cases, and runs compared
side by side. Its modules are private; FastAPI is loaded when they are first used.

    app = create_dashboard(RunIndex(Path(".holodeck/runs")))  # an ASGI app for uvicorn
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck._lazy_exports import lazy_exports

if TYPE_CHECKING:
    from holodeck.testing.dashboard._app import create_dashboard as create_dashboard
    from holodeck.testing.dashboard._index import RunIndex as RunIndex

_EXPORTS = {
    "create_dashboard": "holodeck.testing.dashboard._app",
    "RunIndex": "holodeck.testing.dashboard._index",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
