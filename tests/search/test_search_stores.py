"""The vector store contract, on every backend: the embedded default and real servers
(PostgreSQL + pgvector, Redis with search, Chroma's server, and Chroma in a directory;
Qdrant in qdrant-client's local mode, its server being on no registry). Each test uses collections of its own."""

from __future__ import annotations

import sys
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from holodeck.errors import ConfigurationError, ExecutionError
from holodeck.search._bm25 import bm25_rank
from holodeck.search._types import Chunk, SourceFile
from holodeck.search.stores import StoreLocation, VectorStore, open_store

pytestmark = pytest.mark.anyio

# chromadb: Chroma's server; chromadb-path: Chroma in a directory (no server)
BACKENDS = ["embedded", "postgres", "redis", "chromadb", "chromadb-path", "qdrant"]
DIMS = 8
Opener = Callable[..., VectorStore]


@pytest.fixture(params=BACKENDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """`opener(name, dimensions)`: that collection of this backend, not yet open; names
    get a suffix of this test's own, so tests sharing a server do not meet."""
    backend = request.param
    url = {
        "postgres": lambda: request.getfixturevalue("pgvector_url"),
        "redis": lambda: request.getfixturevalue("redis_stack_url"),
        "chromadb": lambda: request.getfixturevalue("chroma_url"),
    }.get(backend, lambda: None)()
    provider = backend.removesuffix("-path")
    location = StoreLocation(provider, tmp_path / backend, url=url)
    suffix = uuid.uuid4().hex[:8]

    def open_(name: str = "docs", dimensions: int | None = DIMS) -> VectorStore:
        return open_store(location, f"{name}-{suffix}", dimensions)

    return open_


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[: len(values)] = values
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def chunk(source: str, position: int, text: str, **fields: object) -> Chunk:
    return Chunk(
        id=f"{source}#{position}",
        text=text,
        source=source,
        position=position,
        content_hash=f"h{position}",
        **fields,  # type: ignore[arg-type]
    )


def file(path: str, digest: str = "v1") -> SourceFile:
    return SourceFile(path, digest)


async def test_replace_delete_and_the_manifest(opener: Opener) -> None:
    async with opener() as store:
        assert await store.files() == {} and await store.count() == 0
        await store.replace_file(
            file("a.md"),
            [chunk("a.md", 0, "alpha one"), chunk("a.md", 1, "alpha two")],
            np.stack([unit(1), unit(1, 1)]),
        )
        await store.replace_file(file("b.md"), [chunk("b.md", 0, "beta")], np.stack([unit(0, 1)]))
        assert await store.files() == {"a.md": "v1", "b.md": "v1"}
        assert await store.count() == 3

        # a new version replaces every old chunk of the file, and only those
        await store.replace_file(
            file("a.md", "v2"), [chunk("a.md", 0, "alpha new")], np.stack([unit(1)])
        )
        assert await store.files() == {"a.md": "v2", "b.md": "v1"}
        assert await store.count() == 2
        texts = {hit.chunk.text for hit in await store.nearest(unit(1), 10)}
        assert texts == {"alpha new", "beta"}

        # a file that became empty keeps its place in the manifest, with no chunks
        await store.replace_file(file("a.md", "empty"), [], None)
        assert await store.files() == {"a.md": "empty", "b.md": "v1"}
        assert await store.count() == 1

        await store.delete_file("a.md")
        assert await store.files() == {"b.md": "v1"}
        assert [hit.chunk.text for hit in await store.nearest(unit(1), 10)] == ["beta"]
        assert await store.keyword("alpha", 5) == []


async def test_a_file_stored_in_parts_is_pending_until_its_last_part(opener: Opener) -> None:
    async with opener() as store:
        await store.replace_file(file("a.md"), [chunk("a.md", 0, "old")], np.stack([unit(1)]))
        await store.replace_file(file("b.md"), [chunk("b.md", 0, "beta")], np.stack([unit(0, 1)]))
        parts = [
            [chunk("a.md", 0, "part zero"), chunk("a.md", 1, "part one")],
            [chunk("a.md", 2, "part two")],
        ]
        await store.replace_file(
            file("a.md", "v2"), parts[0], np.stack([unit(1), unit(1, 1)]), complete=False
        )
        # the old chunks are gone with the first part; the hash matches no content yet
        assert (await store.files())["a.md"] not in ("v1", "v2")
        assert await store.count() == 3
        await store.replace_file(
            file("a.md", "v2"), parts[1], np.stack([unit(1, 0, 1)]), start=2, complete=False
        )
        await store.replace_file(file("a.md", "v2"), [], None, start=3, complete=True)
        assert await store.files() == {"a.md": "v2", "b.md": "v1"}
        assert await store.count() == 4
        hits = await store.nearest(unit(1, 0, 1), 1)
        assert [hit.chunk.text for hit in hits] == ["part two"]
        texts = {hit.chunk.text for hit in await store.nearest(unit(1), 10)}
        assert texts == {"part zero", "part one", "part two", "beta"}


async def test_nearest_is_ordered_by_cosine_keeps_ties_and_honours_k(opener: Opener) -> None:
    vectors = [
        unit(1),
        unit(1, 0.2),
        unit(1, 0.5),
        unit(1, 0.5),
        unit(1, 0.5),
        unit(0, 1),
        unit(-1),
    ]
    chunks = [chunk("f.md", i, f"text {i}") for i in range(len(vectors))]
    async with opener() as store:
        await store.replace_file(file("f.md"), chunks, np.stack(vectors))
        query = unit(1)
        hits = await store.nearest(query, 3)
        # 0 and 1 first; 2, 3 and 4 are the same vector: tied with the third, all kept
        assert [hit.chunk.position for hit in hits[:2]] == [0, 1]
        assert sorted(hit.chunk.position for hit in hits[2:]) == [2, 3, 4]
        assert hits[2].score == hits[3].score == hits[4].score
        expected = [float(np.dot(query, v)) for v in vectors]
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.chunk.position], abs=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert [hit.chunk.position for hit in await store.nearest(query, 1)] == [0]
        everything = await store.nearest(query, 100)
        assert len(everything) == 7 and everything[-1].chunk.position == 6
        assert everything[-1].score == pytest.approx(-1.0, abs=1e-5)
        assert await store.nearest(query, 0) == []


async def test_keyword_ranks_by_bm25_and_takes_any_query(opener: Opener) -> None:
    texts = [
        "The kiwi is a flightless bird of New Zealand.",
        "Kiwi kiwi kiwi: the kiwi bird, the kiwi egg, kiwi chicks.",
        "Penguins are flightless birds of the south.",
        "A note on weather, unrelated to anything here.",
    ]
    async with opener() as store:
        await store.replace_file(
            file("birds.md"),
            [chunk("birds.md", i, t) for i, t in enumerate(texts)],
            np.stack([unit(1, i) for i in range(len(texts))]),
        )
        hits = await store.keyword("kiwi", 10)
        assert [hit.chunk.position for hit in hits] == [1, 0]
        assert hits[0].score > hits[1].score > 0
        # a chunk matching both words beats one matching either
        both = await store.keyword("flightless zealand", 10)
        assert both[0].chunk.position == 0
        assert {hit.chunk.position for hit in both} == {0, 2}
        assert len(await store.keyword("kiwi flightless", 1)) == 1
        for query in [
            '"kiwi',
            "kiwi AND",
            "NEAR(kiwi",
            "kiwi* OR -",
            "col:kiwi",
            "(kiwi",
            "@text:{kiwi}",
            "'; DROP TABLE x; --",
            "^kiwi$",
            'kiwi""',
            "",
        ]:
            hits = await store.keyword(query, 5)
            assert all(hit.score > 0 for hit in hits)
            if "kiwi" in query:
                assert hits and hits[0].chunk.position == 1, query
        assert await store.keyword("zebra", 5) == []


async def test_metadata_and_structure_round_trip_exactly(opener: Opener) -> None:
    original = Chunk(
        id="data/items.json#r-7:2",
        text='Ünïcode text — with "quotes" and\nlines',
        source="data/items.json",
        position=2,
        content_hash="abc123",
        record_id="r-7",
        record_index=7,
        page=3,
        heading_path=("Guide", "Install"),
        metadata={
            "count": 3,
            "ratio": 0.5,
            "whole_float": 2.0,
            "yes": True,
            "no": False,
            "nothing": None,
            "tags": ["a", 1, 2.5, True, None],
            "empty": [],
            "name": "x",
        },
        record='{"id": "r-7", "name": "x"}',
    )
    async with opener() as store:
        await store.replace_file(file("data/items.json"), [original], np.stack([unit(1)]))
        [hit] = await store.nearest(unit(1), 1)
        assert hit.chunk == original
        assert type(hit.chunk.metadata["count"]) is int
        assert type(hit.chunk.metadata["whole_float"]) is float
        assert type(hit.chunk.metadata["yes"]) is bool
        [found] = await store.keyword("quotes", 1)
        assert found.chunk == original


async def test_record_chunks_gives_one_records_chunks_in_order(opener: Opener) -> None:
    chunks = [
        chunk("items.csv", 1, "r1 second part", record_id="1", record_index=0),
        chunk("items.csv", 0, "r1 first part", record_id="1", record_index=0),
        chunk("items.csv", 0, "r2 only part", record_id="2", record_index=1),
        chunk("other.csv", 0, "other r1", record_id="1", record_index=0),
    ]
    async with opener() as store:
        await store.replace_file(file("items.csv"), chunks[:3], np.stack([unit(1)] * 3))
        await store.replace_file(file("other.csv"), chunks[3:], np.stack([unit(0, 1)]))
        found = await store.record_chunks("items.csv", "1")
        assert [c.text for c in found] == ["r1 first part", "r1 second part"]
        assert [c.text for c in await store.record_chunks("items.csv", "2")] == ["r2 only part"]
        assert await store.record_chunks("items.csv", "3") == []
        assert await store.record_chunks("missing.csv", "1") == []


async def test_a_reopened_collection_keeps_everything(opener: Opener) -> None:
    async with opener() as store:
        await store.replace_file(
            file("a.md", "h-a"), [chunk("a.md", 0, "persisted words")], np.stack([unit(1, 2)])
        )
    async with opener() as store:
        assert await store.files() == {"a.md": "h-a"}
        [hit] = await store.nearest(unit(1, 2), 3)
        assert hit.chunk.text == "persisted words" and hit.score == pytest.approx(1.0, abs=1e-5)
        assert [h.chunk.text for h in await store.keyword("persisted", 3)] == ["persisted words"]


async def test_a_keyword_only_collection_needs_no_vectors(opener: Opener) -> None:
    async with opener("plain", None) as store:
        await store.replace_file(file("a.md"), [chunk("a.md", 0, "grep for this word")], None)
        assert await store.count() == 1
        assert [h.chunk.text for h in await store.keyword("word", 3)] == ["grep for this word"]
        assert await store.nearest(unit(1), 3) == []
        assert await store.files() == {"a.md": "v1"}
    with pytest.raises(ConfigurationError, match="keywords only"):
        async with opener("plain", DIMS):
            pass


async def test_two_collections_do_not_see_each_other(opener: Opener) -> None:
    async with opener("one") as one, opener("two") as two:
        await one.replace_file(
            file("a.md", "in-one"), [chunk("a.md", 0, "apple")], np.stack([unit(1)])
        )
        await two.replace_file(
            file("b.md", "in-two"), [chunk("b.md", 0, "banana")], np.stack([unit(1)])
        )
        assert await one.files() == {"a.md": "in-one"}
        assert await two.files() == {"b.md": "in-two"}
        assert [h.chunk.text for h in await one.nearest(unit(1), 5)] == ["apple"]
        assert await two.keyword("apple", 5) == []
        await one.delete_file("a.md")
        assert await two.count() == 1


async def test_two_openings_of_one_collection_agree(opener: Opener) -> None:
    """As two machines sharing one database: the manifest and chunks live in the store."""
    async with opener("shared") as first, opener("shared") as second:
        await first.replace_file(
            file("a.md", "h1"), [chunk("a.md", 0, "written by one")], np.stack([unit(1)])
        )
        assert await second.files() == {"a.md": "h1"}
        assert [h.chunk.text for h in await second.nearest(unit(1), 3)] == ["written by one"]
        await second.delete_file("a.md")
        assert await first.files() == {}
        assert await first.nearest(unit(1), 3) == []


async def test_reopening_with_another_width_is_a_clear_error(opener: Opener) -> None:
    async with opener("sized") as store:
        await store.replace_file(file("a.md"), [chunk("a.md", 0, "x")], np.stack([unit(1)]))
    with pytest.raises(ConfigurationError, match=r"8-dimension.*16-dimension") as raised:
        async with opener("sized", 16):
            pass
    assert raised.value.hint and "embedding model" in raised.value.hint


async def test_vectors_that_do_not_fit_are_refused(opener: Opener) -> None:
    async with opener() as store:
        with pytest.raises(ExecutionError, match="width 8"):
            await store.replace_file(
                file("a.md"), [chunk("a.md", 0, "x")], np.ones((1, 4), dtype=np.float32)
            )
        with pytest.raises(ExecutionError, match="1 chunks came with 2 vectors"):
            await store.replace_file(
                file("a.md"), [chunk("a.md", 0, "x")], np.ones((2, DIMS), dtype=np.float32)
            )
        assert await store.files() == {}


@pytest.mark.parametrize(
    ("provider", "url", "store"),
    [
        ("postgres", "postgresql://me:s3cret-pw@127.0.0.1:{port}/db", "PostgreSQL"),
        ("redis", "redis://:s3cret-pw@127.0.0.1:{port}/0", "Redis"),
        ("chromadb", "http://127.0.0.1:{port}", "ChromaDB"),
        ("qdrant", "http://127.0.0.1:{port}", "Qdrant"),
    ],
)
async def test_an_unreachable_server_is_named_without_its_password(
    provider: str, url: str, store: str, tmp_path: Path
) -> None:
    from db_servers import free_port

    address = url.format(port=free_port())  # nothing listens there
    location = StoreLocation(provider, tmp_path, url=address, options={"api_key": "k3y"})  # type: ignore[arg-type]
    with pytest.raises(ExecutionError) as raised:
        async with open_store(location, "docs", DIMS):
            pass
    message = str(raised.value)
    assert store in message and "127.0.0.1" in message
    assert "s3cret-pw" not in message and "k3y" not in message


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://qdrant.example:6333", True),
        ("https://qdrant.example:6333", False),
        ("http://127.0.0.1:6333", False),
        ("http://localhost:6333", False),
        ("http://[::ffff:127.0.0.1]:6333", False),
    ],
)
async def test_a_qdrant_key_sent_in_clear_to_another_machine_is_one_line_of_warning(
    url: str, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    from holodeck.search.stores._qdrant import server_client

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # qdrant-client's own warning would raise here
        client = server_client(url, "k3y")
    await client.close()
    said = [r.getMessage() for r in caplog.records if r.name == "holodeck.search"]
    if warned:
        assert said == [
            "Qdrant vector store at http://qdrant.example:6333: its api_key goes over "
            "plain http; use an https:// url"
        ]
    else:
        assert said == []
    assert "k3y" not in caplog.text


@pytest.mark.parametrize(
    ("provider", "module", "extra"),
    [
        ("postgres", "pgvector.psycopg", "pgvector"),
        ("redis", "redis.asyncio", "redis"),
        ("chromadb", "chromadb", "chromadb"),
        ("qdrant", "qdrant_client", "qdrant"),
    ],
)
async def test_a_missing_client_package_names_the_extra_to_install(
    provider: str, module: str, extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing fails
    location = StoreLocation(provider, tmp_path, url="http://127.0.0.1:1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError) as raised:
        async with open_store(location, "docs", DIMS):
            pass
    assert raised.value.hint == f"pip install 'holodeck-agents[{extra}]'"


def test_a_missing_url_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="needs a url"):
        open_store(StoreLocation("postgres", tmp_path), "docs", DIMS)


# -- the embedded store's own promises


async def test_embedded_replace_appends_without_rewriting_other_files(tmp_path: Path) -> None:
    location = StoreLocation("embedded", tmp_path)
    async with open_store(location, "docs", DIMS) as store:
        for name in ("a", "b", "c"):
            await store.replace_file(
                file(f"{name}.md"), [chunk(f"{name}.md", 0, name)], np.stack([unit(1, ord(name))])
            )
        [vectors] = list(tmp_path.rglob("vectors-*.f32"))
        before = vectors.read_bytes()
        await store.replace_file(
            file("b.md", "v2"), [chunk("b.md", 0, "b2")], np.stack([unit(0, 1)])
        )
        after = vectors.read_bytes()
        assert after[: len(before)] == before  # earlier rows untouched: one row appended
        assert len(after) == len(before) + DIMS * 4
        assert [h.chunk.text for h in await store.nearest(unit(0, 1), 1)] == ["b2"]


async def test_embedded_compacts_once_dead_rows_dominate(tmp_path: Path) -> None:
    location = StoreLocation("embedded", tmp_path)
    rows = np.stack([unit(1, i / 5000) for i in range(5000)])
    many = [chunk("big.md", i, f"row {i}") for i in range(5000)]
    async with open_store(location, "docs", DIMS) as store:
        await store.replace_file(
            file("keep.md"), [chunk("keep.md", 0, "kept")], np.stack([unit(0, 1)])
        )
        await store.replace_file(file("big.md"), many, rows)
        await store.delete_file("big.md")
        await store.replace_file(
            file("small.md"), [chunk("small.md", 0, "small")], np.stack([unit(0, 0, 1)])
        )
        [vectors] = list(tmp_path.rglob("vectors-*.f32"))
        assert vectors.name == "vectors-1.f32"
        assert vectors.stat().st_size == 2 * DIMS * 4
        assert [h.chunk.text for h in await store.nearest(unit(0, 1), 1)] == ["kept"]
    async with open_store(location, "docs", DIMS) as store:
        assert [h.chunk.text for h in await store.nearest(unit(0, 0, 1), 1)] == ["small"]


async def test_embedded_sees_what_another_opening_wrote(tmp_path: Path) -> None:
    location = StoreLocation("embedded", tmp_path)
    async with open_store(location, "docs", DIMS) as reader:
        assert await reader.nearest(unit(1), 1) == []
        async with open_store(location, "docs", DIMS) as writer:
            await writer.replace_file(
                file("a.md"), [chunk("a.md", 0, "fresh")], np.stack([unit(1)])
            )
        assert [h.chunk.text for h in await reader.nearest(unit(1), 1)] == ["fresh"]


# -- the in-process BM25 (Chroma's and Qdrant's keyword ranking)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6), st.text(max_size=40))
def test_bm25_takes_any_text(texts: list[str], query: str) -> None:
    ranked = bm25_rank(texts, query)
    assert all(score > 0 and 0 <= index < len(texts) for index, score in ranked)
    assert [score for _, score in ranked] == sorted((s for _, s in ranked), reverse=True)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_embedded_keyword_takes_any_typed_query(
    tmp_path_factory: pytest.TempPathFactory, query: str
) -> None:
    """FTS5 query syntax typed by a user (quotes, NEAR, *, ^, column filters) never fails."""
    import asyncio

    root = tmp_path_factory.getbasetemp() / "fts-any-query"

    async def search() -> None:
        async with open_store(StoreLocation("embedded", root), "docs", None) as store:
            if not await store.files():
                await store.replace_file(file("a.md"), [chunk("a.md", 0, "some words here")], None)
            hits = await store.keyword(query, 3)
            assert all(hit.score > 0 for hit in hits)

    asyncio.run(search())
