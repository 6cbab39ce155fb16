"""What every route reads from the app: the agents, the admission slots, the options."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from holodeck.server._guards import KeyGuard, TurnSlots
from holodeck.server._options import ServeOptions
from holodeck.server._registry import Registry


@dataclass
class ServerState:
    options: ServeOptions
    registry: Registry
    slots: TurnSlots
    keys: KeyGuard


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.holodeck
    return state


def request_id_of(request: Request) -> str:
    request_id: str = request.state.request_id
    return request_id


async def guard(request: Request) -> None:
    """Dependency of every API route: a valid key, within its rate. (A coroutine: FastAPI
    would run a plain function in a thread for every request.)"""
    state_of(request).keys.check(request)
