"""A2A (Agent2Agent) at `POST /a2a/{agent}` and the agents' cards (`_routes`, `_card`).
The a2a-sdk's JSON-RPC dispatcher answers the protocol; `_handler` runs its methods on
HoloDeck turns: sending a message (`_sending`, from what the message asks for,
`_messages`), the task operations (`_task_operations`) on the task records kept in the
session store (`_task_records`). `_refusals` answers and logs malformed requests."""

from holodeck.server.a2a._routes import router as router

__all__ = ["router"]
