"""HoloDeck's own chat protocol: `POST /v1/chat` (a message in, the answer out, as JSON or
Server-Sent Events; `_chat`) and the sessions it keeps (`GET` and `DELETE
/v1/sessions/{id}`, and the approvals a paused turn waits for; `_sessions`). The served
turn itself (`server/_turns.py`) is shared with the other protocols."""

from holodeck.server.chat._chat import router as router
from holodeck.server.chat._sessions import router as sessions_router

__all__ = ["router", "sessions_router"]
