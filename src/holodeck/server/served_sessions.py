"""A served session read from the store its deployment keeps sessions in, outside the
server: what `holodeck test capture AGENT --session ID` makes a test case of.

The server's ownership rule holds here as it does over HTTP: a session lives in the store
under the name of the API key that started it (`agent:key-name/id`; `agent:id` on a server
without keys), so only that key finds it; a session another key started is refused."""

from __future__ import annotations

import hmac
from pathlib import Path

from holodeck.errors import ConfigurationError, InputError
from holodeck.server._options import ServeOptions
from holodeck.server._stores import open_store, store_identity
from holodeck.spec.models.agent_spec import AgentSpec

KEY_VARIABLE = "HOLODECK_API_KEY"


class ServedSessionError(InputError):
    """The session asked for is not there, or not the key's."""


def store_key(agent: str, owner: str | None, session_id: str) -> str:
    """Where the server keeps session `session_id` of key `owner`, as its turns'
    `session_key` names it."""
    return f"{agent}:{session_id if owner is None else f'{owner}/{session_id}'}"


def key_owner(spec: AgentSpec, api_key: str | None) -> str | None:
    """The name of `api_key` among the deployment's keys (None when it has none)."""
    keys = ServeOptions.from_settings((str(spec.source),), spec.deployment).keys
    if not keys:
        return None
    if not api_key:
        raise ConfigurationError(
            f"{spec.name} is served with API keys: a session is read with the key that started it",
            hint=f"set {KEY_VARIABLE} (or give --key) to the key the client used",
        )
    found = None
    for name, key in keys:  # every key compared: the time taken says nothing
        if hmac.compare_digest(api_key.encode(), key.encode()):
            found = name
    if found is None:
        raise ConfigurationError(
            f"the API key is not one of {spec.name}'s keys (deployment.auth.api_keys)",
            hint=f"give the key the client used, in {KEY_VARIABLE} or --key",
        )
    return found


async def read_served_session(
    spec: AgentSpec, session_id: str, api_key: str | None, state_dir: Path
) -> bytes:
    """The saved session `session_id` of `spec`'s agent that `api_key` started, from the
    store `spec.memory` names (a SQLite store without a url lives in `state_dir`, as
    `holodeck deploy` keeps it). Raises `ServedSessionError` or `ConfigurationError`."""
    owner = key_owner(spec, api_key)
    memory = spec.memory
    if memory.store == "memory":
        raise ConfigurationError(
            f"{spec.name} keeps its sessions in the server's memory (memory.store: memory): "
            "they end with the server, and no other process can read them",
            hint="set `memory: {store: sqlite}` (or redis or postgres with a url) and serve "
            "again; then capture from that store",
        )
    identity = store_identity(memory, spec, state_dir)
    kind, where, _ = identity
    if kind == "sqlite" and not Path(where).is_file():
        raise ServedSessionError(
            f"no session store at {where}: {spec.name} has not been served from here",
            hint="run the command in the directory `holodeck deploy` ran in, or give "
            "--state-dir (the server's state directory, default .holodeck/server)",
        )
    async with open_store(identity) as store:
        data = await store.load(store_key(spec.name, owner, session_id))
        if data is not None:
            return data
        others = ServeOptions.from_settings((str(spec.source),), spec.deployment).keys
        for name, _ in others:
            if name != owner and await store.load(store_key(spec.name, name, session_id)):
                raise ServedSessionError(
                    f"session {session_id!r} of {spec.name} belongs to another API key",
                    hint="a session is captured with the key that started it",
                )
    shown = where if kind == "sqlite" else kind
    raise ServedSessionError(
        f"no session {session_id!r} of {spec.name} in its store ({shown}); it may have "
        "expired (memory.ttl_seconds) or been deleted",
        hint="the session id is the `session_id` a /v1/chat answer returned "
        "(the request log lists them)",
    )
