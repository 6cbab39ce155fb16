"""What every route reads from the app: the agents, the admission slots, the options,
and what the middleware learnt of the request (its id, its key's name)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from holodeck.server._guards import TurnSlots
from holodeck.server._keys import Keys
from holodeck.server._options import ServeOptions
from holodeck.server._registry import Registry


@dataclass
class ServerState:
    options: ServeOptions
    registry: Registry
    slots: TurnSlots
    keys: Keys


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.holodeck
    return state


def request_id_of(request: Request) -> str:
    request_id: str = request.state.request_id
    return request_id


def key_name_of(request: Request) -> str | None:
    """The name of the key the request came with; None on a server without keys."""
    name: str | None = getattr(request.state, "key_name", None)
    return name
