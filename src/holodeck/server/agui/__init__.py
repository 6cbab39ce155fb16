"""AG-UI at `POST /awp` and `POST /awp/{agent}`: a run's input in, the turn's AG-UI
events out (`_routes`), built from the runtime's events (`_events`), with the page's own
tools (`_page_tools`) and the thread's shared state (`_state`)."""

from holodeck.server.agui._routes import router as router

__all__ = ["router"]
