"""Real database servers for the tests: `redis_url` and `postgres_url` start Debian's Redis
and PostgreSQL on a free loopback port in a temporary directory, once per test process
(each pytest-xdist worker starts its own), and stop them afterwards. Both are plain
connection URLs. When a server is not installed, the tests that need it are skipped,
saying how to install it (`make services` does, as root)."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

START_S = 60.0  # a server not answering by then has failed to start
INSTALL = "install it with `make services` (as root: apt-get install redis-server postgresql)"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_ready(
    server: subprocess.Popen[bytes], ready: Callable[[], bool], log: Path, what: str
) -> None:
    """Poll `ready` until it is true; fail, showing the server's log, when the server exits
    or `START_S` passes."""
    deadline = time.monotonic() + START_S
    pause = 0.01
    while not ready():
        if server.poll() is not None or time.monotonic() > deadline:
            output = log.read_text(errors="replace") if log.exists() else ""
            raise RuntimeError(f"{what} did not start (exit {server.poll()}):\n{output}")
        time.sleep(pause)  # polling a starting server: its readiness has no event to await
        pause = min(pause * 2, 0.2)


def start(
    command: Callable[[int], list[Any]], ready: Callable[[int], bool], log: Path, **options: Any
) -> tuple[subprocess.Popen[bytes], int]:
    """The server `command(port)` runs, once `ready(port)`; tried again on another port
    when the free port found was taken meanwhile (by the other test process)."""
    for attempt in range(3):
        port = free_port()
        with log.open("wb") as output:
            server = subprocess.Popen(
                command(port),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                **options,
            )
        try:
            wait_until_ready(server, partial(ready, port), log, Path(command(port)[0]).name)
            return server, port
        except RuntimeError:
            stop(server)
            if attempt == 2 or "already in use" not in log.read_text(errors="replace"):
                raise
    raise AssertionError("unreachable")


def stop(server: subprocess.Popen[bytes], how: signal.Signals = signal.SIGTERM) -> None:
    server.send_signal(how)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


# --- Redis -------------------------------------------------------------------------------


def redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


NO_DISK = ["--save", "", "--appendonly", "no"]  # a test server keeps nothing


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`redis://127.0.0.1:PORT/0` of a Redis server of this test process."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(f"redis-server is not installed: {INSTALL}")
    home = tmp_path_factory.mktemp("redis")
    server, port = start(
        lambda port: [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", home, *NO_DISK],
        redis_answers,
        home / "redis.log",
    )
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(server)


# --- PostgreSQL --------------------------------------------------------------------------

POSTGRES_USER = "holodeck"
INITDB = ["--auth=scram-sha-256", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C"]
# loopback only; a test server's durability is not worth the time
FAST = [
    "-h",
    "127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
]


def postgres_bin() -> Path | None:
    """Debian's PostgreSQL binaries (the newest installed version), or those on PATH."""

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", path.parent.parent.name))

    installed = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=version)
    if installed:
        return installed[-1].parent
    on_path = shutil.which("postgres")
    return Path(on_path).parent if on_path else None


def as_postgres_user() -> dict[str, Any]:
    """PostgreSQL refuses to run as root: as root, run it as the `postgres` system user."""
    if os.geteuid() != 0:
        return {}
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip(f"no `postgres` user to run PostgreSQL as (not as root): {INSTALL}")
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


def postgres_answers(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=1):
            return True
    except psycopg.OperationalError:
        return False


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """`postgresql://holodeck:PASSWORD@127.0.0.1:PORT/postgres` of a PostgreSQL server of
    this test process (password authentication, as a deployed one would have)."""
    bin_dir = postgres_bin()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        pytest.skip(f"PostgreSQL is not installed: {INSTALL}")
    user = as_postgres_user()
    # under /tmp rather than pytest's own temporary directory, which only root may enter
    home = Path(tempfile.mkdtemp(prefix="holodeck-postgres-"))
    try:
        yield from run_postgres(bin_dir, home, user)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run_postgres(bin_dir: Path, home: Path, user: dict[str, Any]) -> Iterator[str]:
    password = secrets.token_urlsafe(12)
    (home / "password").write_text(password)
    if user:
        os.chown(home, user["user"], user["group"])
        os.chown(home / "password", user["user"], user["group"])
    data = home / "data"
    made = subprocess.run(
        [
            bin_dir / "initdb",
            "-D",
            data,
            "-U",
            POSTGRES_USER,
            "--pwfile",
            home / "password",
            *INITDB,
        ],
        capture_output=True,
        text=True,
        cwd=home,  # a directory the postgres user may enter
        **user,
    )
    if made.returncode != 0:
        raise RuntimeError(f"initdb failed:\n{made.stdout}{made.stderr}")

    def url(port: int) -> str:
        return f"postgresql://{POSTGRES_USER}:{password}@127.0.0.1:{port}/postgres"

    server, port = start(
        lambda port: [bin_dir / "postgres", "-D", data, "-k", home, "-p", str(port), *FAST],
        lambda port: postgres_answers(url(port)),
        home / "postgres.log",
        cwd=home,
        **user,
    )
    try:
        yield url(port)
    finally:
        stop(server, signal.SIGINT)  # fast shutdown: clients still connected are let go
