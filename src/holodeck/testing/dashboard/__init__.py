"""The runs dashboard (`holodeck test view`): a page over the runs saved in a directory,
with their pass rates and metric averages over time, each run's cases, and runs compared
side by side. Its modules are private.

    app = create_dashboard(RunIndex(Path(".holodeck/runs")))  # an ASGI app for uvicorn
"""

from __future__ import annotations

from holodeck.testing.dashboard._app import create_dashboard
from holodeck.testing.dashboard._index import RunIndex

__all__ = ["RunIndex", "create_dashboard"]
