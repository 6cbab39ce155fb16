"""A test case's memories live under a user made for that case; when the case ends, the
user's collection goes whole: in PostgreSQL its tables and its entry in the collections
list, in Redis its index and keys (the embedded store removes its folder). A team testing
against its shared memory store is left no table per case run. Real servers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cli_invoke import invoke
from yaml_dump import dump

CASE = {
    "name": "keeps bees",
    "input": "What do I keep?",
    "memories": ["The user keeps bees in Lyon."],
    "expected_memories": {"contains": ["bees"]},
}


def agent(root: Path, database: dict[str, str]) -> Path:
    root.mkdir()
    spec: dict[str, Any] = {
        "name": "keeper",
        "model": {"provider": "openai", "name": "gpt-4o-mini"},
        "instructions": {"inline": "Help the user."},
        "memory": {"long_term": {"database": database, "extract": {"auto": False}}},
        "test_cases": [CASE],
    }
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    return root


async def postgres_collections(url: str) -> set[str]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
        listed = await db.execute("SELECT to_regclass('holodeck_vector_collections') IS NOT NULL")
        exists = await listed.fetchone()
        if not exists or not exists[0]:
            return set()
        names = await (await db.execute("SELECT name FROM holodeck_vector_collections")).fetchall()
        tables = await (
            await db.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'hd_mem_%'")
        ).fetchall()
    return {row[0] for row in names} | {row[0] for row in tables}


async def redis_collections(url: str) -> set[str]:
    from redis.asyncio import Redis

    client = Redis.from_url(url, protocol=2)
    try:
        indexes = await client.execute_command("FT._LIST")
        keys = [key async for key in client.scan_iter(match="holodeck:vectors:mem_*")]
    finally:
        await client.aclose()
    return {str(i) for i in indexes if "mem_" in str(i)} | {str(k) for k in keys}


@pytest.mark.parametrize("provider", ["postgres", "redis"])
def test_a_cases_user_leaves_no_collection_in_a_shared_store(
    tmp_path: Path, provider: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue(
        "pgvector_url" if provider == "postgres" else "redis_stack_url"
    )
    listed = postgres_collections if provider == "postgres" else redis_collections
    before = asyncio.run(listed(url))
    root = agent(tmp_path / "keeper", {"provider": provider, "connection_string": url})

    result = invoke("test", str(root), "--model", "test")

    assert result.exit_code == 0, result.output
    assert asyncio.run(listed(url)) == before
