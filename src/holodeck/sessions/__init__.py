"""Where conversations live between turns: a `SessionStore` keeps each session's JSON
(`Session.to_json()`) by id, and locks a session so two turns of it never interleave.

    >>> import asyncio
    >>> from holodeck.sessions import MemorySessionStore
    >>> async def main() -> bytes | None:
    ...     async with MemorySessionStore() as store:
    ...         async with store.lock("s1"):
    ...             await store.save("s1", b'{"format": "holodeck-session"}')
    ...         return await store.load("s1")
    >>> asyncio.run(main())
    b'{"format": "holodeck-session"}'

`MemorySessionStore` lives in the process; `SqliteSessionStore` in a file, so sessions
survive a restart and several processes on one machine share them; `RedisSessionStore`
and `PostgresSessionStore` on a database server, so processes on many machines share
them (`pip install 'holodeck-agents[redis]'` or `'holodeck-agents[postgres]'`; the client package is
imported on first use). The locks of the last three hold across processes: a lease,
renewed while a turn holds it, that a crashed holder loses when it runs out.

Stores also keep counters that turns of several processes draw on at once (an API
key's day): `take_hold` and `settle_hold` change them inside `update_counters`, which
each store makes atomic (a SQLite write transaction, Redis WATCH, a PostgreSQL lock).
"""

from holodeck.sessions._counters import Taken, settle_hold, take_hold, used_of
from holodeck.sessions._memory import MemorySessionStore
from holodeck.sessions._postgres import PostgresSessionStore
from holodeck.sessions._redis import RedisSessionStore
from holodeck.sessions._sqlite import SqliteSessionStore
from holodeck.sessions._store import (
    DEFAULT_LOCK_WAIT_S,
    SessionBusy,
    SessionStore,
    SessionStoreError,
)

__all__ = [
    "DEFAULT_LOCK_WAIT_S",
    "MemorySessionStore",
    "PostgresSessionStore",
    "RedisSessionStore",
    "SessionBusy",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "Taken",
    "settle_hold",
    "take_hold",
    "used_of",
]
