"""An AG-UI thread's state (`RunAgentInput.state`, the page's shared state): kept per
thread in the agent's session store, beside the session, and returned in each run's
STATE_SNAPSHOT with what the server adds (session, agent, the agent that answered, model,
usage, request id).

A run that sends a non-empty state object replaces the thread's; one that sends none
(`{}`, as a page that has just loaded does) gets the thread's back. The keys the server
adds are its own: the page's values of them are not kept."""

from __future__ import annotations

import json
from typing import Any

from holodeck.server._errors import ApiError
from holodeck.server._registry import ServedAgent
from holodeck.server._turns import session_key

SERVERS_KEYS = frozenset({"session_id", "agent", "answered_by", "model", "usage", "request_id"})
_STATE = "agui/state/"  # `/` is no session id's: the key is never a session's


async def thread_state(
    served: ServedAgent, owner: str | None, thread_id: str, sent: Any
) -> dict[str, Any]:
    """The thread's state for this run: `sent`, kept, or the one kept before."""
    if sent is not None and not isinstance(sent, dict):
        raise ApiError(
            422,
            "invalid_request",
            f"state: a JSON object, not {type(sent).__name__}",
            hint="send the page's state as an object ({} for none)",
        )
    key = session_key(served, owner, _STATE + thread_id)
    page = {k: v for k, v in (sent or {}).items() if k not in SERVERS_KEYS}
    if page:
        await served.store.save(key, json.dumps(page, ensure_ascii=False).encode())
        return page
    kept = await served.store.load(key)
    if kept is None:
        return {}
    try:
        loaded = json.loads(kept)
    except ValueError:
        return {}  # a damaged record is no state, not a failed run
    return loaded if isinstance(loaded, dict) else {}
