"""Session stores on database servers (Redis, PostgreSQL), against real servers: the
contract of the other stores, locks across processes and store objects, leases renewed
while held and run out when the holder crashed, and errors that never show a password."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis.asyncio

import holodeck
from conftest import Write
from db_servers import free_port
from holodeck.runtime import stored_session
from holodeck.sessions import (
    MemorySessionStore,
    PostgresSessionStore,
    RedisSessionStore,
    SessionBusy,
    SessionStore,
    SessionStoreError,
    SqliteSessionStore,
)
from test_sessions import Clock, agent_with, prompts

pytestmark = pytest.mark.anyio


@dataclass
class Place:
    """Where a test's stores keep their sessions: a server (or SQLite file), and a prefix
    or table of the test's own, so tests sharing a server never meet."""

    kind: str
    url: str
    name: str

    def store(self, **options: Any) -> SessionStore:
        if self.kind == "redis":
            return RedisSessionStore(self.url, prefix=f"{self.name}:", **options)
        if self.kind == "postgres":
            return PostgresSessionStore(self.url, table=self.name, **options)
        if self.kind == "memory":
            return MemorySessionStore(**options)
        return SqliteSessionStore(self.url, **options)


@pytest.fixture(params=["redis", "postgres"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    kind: str = request.param
    url = str(tmp_path / "s.db") if kind in ("sqlite", "memory") else ""
    if kind in ("redis", "postgres"):
        url = request.getfixturevalue(f"{kind}_url")
    return Place(kind, url, f"t{uuid.uuid4().hex[:12]}")


every_shared_store = pytest.mark.parametrize(
    "place", ["sqlite", "redis", "postgres"], indirect=True
)


# --- the contract of every store ---------------------------------------------------------


@pytest.mark.parametrize("place", ["memory", "sqlite", "redis", "postgres"], indirect=True)
async def test_save_load_delete_and_expire(place: Place) -> None:
    clock = Clock()
    async with place.store(ttl_s=60, clock=clock) as store:
        assert await store.load("a") is None
        await store.save("a", b"one")
        await store.save("a", b"two")
        assert await store.load("a") == b"two"
        clock.now += 59
        assert await store.load("a") == b"two"
        clock.now += 2
        assert await store.load("a") is None  # not saved for longer than its ttl
        await store.save("b", b"x")
        assert await store.delete("b") is True
        assert await store.delete("b") is False
        assert await store.load("b") is None


async def test_stores_of_one_server_share_its_sessions(place: Place) -> None:
    async with place.store() as first:
        await first.save("kept", b"\x00binary\xff")
    async with place.store() as second:  # as another process (or a restart) would
        assert await second.load("kept") == b"\x00binary\xff"


async def test_concurrent_turns_of_one_session_run_in_order(place: Place, write: Write) -> None:
    agent = agent_with(write)
    # two store objects stand for two server processes: only the server's lock orders them
    async with place.store() as one, place.store() as two:

        async def turn(store: SessionStore, n: int) -> None:
            async with stored_session(agent, store, "shared") as session:
                await session.answer(f"message {n}")

        await asyncio.gather(*(turn((one, two)[n % 2], n) for n in range(8)))
        async with stored_session(agent, one, "shared") as session:
            said = prompts(session)
    # every turn saw the one before it: none lost, none interleaved
    assert sorted(said) == [f"message {n}" for n in range(8)]
    assert len(session.messages) == 16


async def test_a_lock_held_too_long_says_the_session_is_busy(place: Place) -> None:
    async with place.store() as store, place.store() as other, store.lock("s"):
        for waiting in (store, other):  # a turn of this process, or of another
            with pytest.raises(SessionBusy, match="session s is busy"):
                async with waiting.lock("s", wait_s=0.05):
                    pass
        async with other.lock("t", wait_s=0.05):  # other sessions are free
            pass


async def test_a_crashed_holders_lock_runs_out(place: Place) -> None:
    clock = Clock()
    # PostgreSQL's leases end by the store's clock, as SQLite's; Redis's by Redis's own
    lease_s = 0.5 if place.kind == "redis" else 30
    crashed = place.store(clock=clock, lease_s=lease_s)
    assert await crashed._acquire("s")  # type: ignore[attr-defined]
    await crashed.aclose()  # gone without giving the lock back
    async with place.store(clock=clock, lease_s=lease_s) as store:
        with pytest.raises(SessionBusy):
            async with store.lock("s", wait_s=0.05):
                pass
        clock.now += 31
        async with store.lock("s", wait_s=10):
            pass


# --- leases renewed while held -----------------------------------------------------------


def renewals() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("holodeck-lease")]


@every_shared_store
async def test_a_lock_held_past_its_lease_is_renewed(place: Place) -> None:
    async with place.store(lease_s=0.3) as holder, place.store(lease_s=0.3) as other:
        async with holder.lock("s"):
            assert len(renewals()) == 1
            with pytest.raises(SessionBusy):  # tried for three leases: still held
                async with other.lock("s", wait_s=1.0):
                    pass
        assert renewals() == []  # renewing stopped with the release
        async with other.lock("s", wait_s=0.5):  # given back, so taken at once
            pass


HOLDER = """
import asyncio, sys
from holodeck.sessions import PostgresSessionStore, RedisSessionStore, SqliteSessionStore

async def main() -> None:
    kind, url, name = sys.argv[1:]
    store = {
        "redis": lambda: RedisSessionStore(url, prefix=name + ":", lease_s=0.3),
        "postgres": lambda: PostgresSessionStore(url, table=name, lease_s=0.3),
        "sqlite": lambda: SqliteSessionStore(url, lease_s=0.3),
    }[kind]()
    async with store, store.lock("shared"):
        print("held", flush=True)
        await asyncio.to_thread(sys.stdin.readline)  # until told to let go; renewing meanwhile

asyncio.run(main())
"""


@every_shared_store
async def test_a_lock_holds_across_processes_past_its_lease(place: Place) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), place.kind, place.url, place.name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        try:
            assert holder.stdout.readline().strip() == "held"
            async with place.store() as store:
                with pytest.raises(SessionBusy):  # the holder renews its 0.3 s lease meanwhile
                    async with store.lock("shared", wait_s=1.0):
                        pass
                holder.stdin.write("go\n")
                holder.stdin.flush()
                async with store.lock("shared", wait_s=30):  # taken once the other lets go
                    assert holder.wait(timeout=30) == 0
        finally:
            holder.kill()


# --- what each server adds ---------------------------------------------------------------


async def test_redis_expires_stale_sessions_itself(redis_url: str) -> None:
    raw = redis.asyncio.Redis.from_url(redis_url)
    async with raw, RedisSessionStore(redis_url, prefix="expiring:", ttl_s=0.2) as store:
        await store.save("s", b"data")
        assert 0 < await raw.pttl("expiring:session:s") <= 200
        deadline = time.monotonic() + 60
        while await raw.exists("expiring:session:s"):  # gone without any load or save
            assert time.monotonic() < deadline, "Redis kept a stale session"
            await asyncio.sleep(0.02)
        async with RedisSessionStore(redis_url, prefix="expiring:") as keeping:
            await store.save("t", b"data")
            await keeping.save("t", b"data")  # saved without a ttl: kept until deleted
            assert await raw.pttl("expiring:session:t") == -1


async def test_postgres_drops_expired_sessions_as_others_are_saved(postgres_url: str) -> None:
    clock = Clock()
    async with PostgresSessionStore(postgres_url, table="expiring", ttl_s=60, clock=clock) as store:
        await store.save("old", b"data")
        clock.now += 61
        await store.save("new", b"data")
    async with await psycopg.AsyncConnection.connect(postgres_url) as db:
        rows = await (await db.execute("SELECT id FROM expiring")).fetchall()
    assert rows == [("new",)]


# --- failures ----------------------------------------------------------------------------


def store_at(kind: str, url: str) -> SessionStore:
    return RedisSessionStore(url) if kind == "redis" else PostgresSessionStore(url)


def says_without_password(error: SessionStoreError, password: str) -> None:
    shown = f"{error}\n{error.render()}\n{error!r}"
    assert password not in shown
    assert "***" in error.message and error.hint and error.exit_code == 3


@pytest.mark.parametrize(
    ("kind", "url"),
    [
        ("redis", "redis://:pw-s3cret@127.0.0.1:{port}/0"),
        ("redis", "redis://user:pw-s3cret@127.0.0.1:{port}/0?password=pw-s3cret"),
        ("postgres", "postgresql://holodeck:pw-s3cret@127.0.0.1:{port}/postgres"),
        ("postgres", "host=127.0.0.1 port={port} user=holodeck password=pw-s3cret"),
    ],
)
async def test_a_server_out_of_reach_says_which_without_its_password(kind: str, url: str) -> None:
    port = free_port()  # nothing listens there
    async with store_at(kind, url.format(port=port)) as store:
        with pytest.raises(
            SessionStoreError, match=rf"(?i){kind}\w* session store .*{port}\b"
        ) as caught:
            await store.load("s")
    says_without_password(caught.value, "pw-s3cret")
    assert caught.value.__cause__ is None  # no client's traceback behind it


async def test_a_wrong_postgres_password_is_not_shown(postgres_url: str) -> None:
    password = postgres_url.split(":")[2].split("@")[0]
    wrong = postgres_url.replace(password, "pw-wrong")
    async with PostgresSessionStore(wrong) as store:
        with pytest.raises(SessionStoreError, match="password authentication failed") as caught:
            await store.save("s", b"x")
    says_without_password(caught.value, "pw-wrong")


async def test_a_wrong_redis_password_is_not_shown(redis_url: str) -> None:
    async with redis.asyncio.Redis.from_url(redis_url) as raw:  # a user with a password
        await raw.acl_setuser("tester", enabled=True, passwords=["+pw-right"], keys="*")
    wrong = redis_url.replace("//", "//tester:pw-wrong@")
    async with RedisSessionStore(wrong) as store:
        with pytest.raises(
            SessionStoreError, match=r"Redis session store .*(?i:password)"
        ) as caught:
            await store.load("s")
    says_without_password(caught.value, "pw-wrong")


@pytest.mark.parametrize(
    ("kind", "packages", "extra"),
    [("redis", ["redis"], "redis"), ("postgres", ["psycopg", "psycopg_pool"], "postgres")],
)
async def test_a_missing_client_package_names_the_extra(
    kind: str, packages: list[str], extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in packages] + packages:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed: import fails
    async with store_at(kind, f"{kind}://127.0.0.1:1/") as store:
        with pytest.raises(SessionStoreError, match="not installed") as caught:
            await store.load("s")
    assert caught.value.hint == f"pip install 'holodeck-agents[{extra}]'"


def test_the_client_packages_are_imported_on_first_use_only() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, holodeck, holodeck.sessions; "
            "holodeck.RedisSessionStore, holodeck.PostgresSessionStore; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'redis', 'psycopg', 'psycopg_pool'}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"
    assert holodeck.RedisSessionStore is RedisSessionStore
    assert holodeck.PostgresSessionStore is PostgresSessionStore


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:p%40ss@host:6379/0", "redis://:***@host:6379/0"),
        ("redis://host:6379/0", "redis://host:6379/0"),
        (
            "postgresql://me:secret@db/app?sslmode=require",
            "postgresql://me:***@db/app?sslmode=require",
        ),
        ("postgresql://me@db/app?password=secret", "postgresql://me@db/app?password=***"),
        ("host=db password='se cret' user=me", "host=db password=*** user=me"),
    ],
)
def test_a_store_shows_its_url_without_the_password(url: str, shown: str) -> None:
    assert repr(RedisSessionStore(url)) == f"RedisSessionStore({shown!r})"
