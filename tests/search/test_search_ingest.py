"""Ingestion (US 6.1): files and records of a vectorstore source become chunks."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import time
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holodeck.search.ingest import (
    IngestError,
    IngestOptions,
    check_mapping,
    chunk_file,
    ingest,
    rebuild_record,
    source_files,
)
from search_files import make_pdf, options, with_outline

TOKEN = re.compile(r"\w+|[^\w\s]")  # the documented token: a word or a punctuation mark


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def sentences(count: int, start: int = 0) -> str:
    return " ".join(
        f"Sentence number {n} talks about topic {n}." for n in range(start, start + count)
    )


# --- unstructured sources ------------------------------------------------------------


def test_markdown_file_is_chunked_with_stable_ids_and_hashes(tmp_path: Path) -> None:
    write(tmp_path / "data/faqs.md", "# FAQ\n\nHow do I reset my password? Use the link.\n")
    first = ingest(options(tmp_path, "data/faqs.md"))
    again = ingest(options(tmp_path, "data/faqs.md"))
    assert [chunk.text for chunk in first.chunks] == [
        "# FAQ\n\nHow do I reset my password? Use the link."
    ]
    chunk = first.chunks[0]
    assert chunk.source == "data/faqs.md"
    assert chunk.content_hash == hashlib.sha256(chunk.text.encode()).hexdigest()
    assert [c.id for c in first.chunks] == [c.id for c in again.chunks]
    assert (
        first.files[0].content_hash
        == hashlib.sha256((tmp_path / "data/faqs.md").read_bytes()).hexdigest()
    )
    assert rebuild_record(chunk) is None and chunk.record_id is None


def test_directory_loads_every_supported_file_sorted_and_skips_the_rest(tmp_path: Path) -> None:
    docs = tmp_path / "data/docs"
    write(docs / "b.txt", "Plain text about billing.")
    write(docs / "a.md", "# Accounts\n\nOpening an account.")
    write(docs / "nested/c.pdf", make_pdf([["Refunds take five days."]]))
    write(docs / "nested/d.csv", "title,body\nShipping,Ships in two days\n")
    write(docs / "e.json", json.dumps([{"title": "Returns", "body": "Return within 30 days"}]))
    write(docs / "f.jsonl", '{"body": "Line one"}\n{"body": "Line two"}\n')
    write(docs / ".hidden.md", "secret")
    write(docs / ".git/config.md", "not data")
    write(docs / "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    files = source_files(options(tmp_path, "data/docs"))
    assert [file.path for file in files] == [
        "data/docs/a.md",
        "data/docs/b.txt",
        "data/docs/e.json",
        "data/docs/f.jsonl",
        "data/docs/nested/c.pdf",
        "data/docs/nested/d.csv",
    ]
    seen: list[str] = []
    ingested = ingest(options(tmp_path, "data/docs"), on_file=lambda file: seen.append(file.path))
    assert seen == [file.path for file in files]
    texts = {chunk.source: chunk.text for chunk in ingested.chunks}
    assert texts["data/docs/nested/c.pdf"] == "Refunds take five days."
    assert texts["data/docs/nested/d.csv"] == "Shipping\nShips in two days"
    assert texts["data/docs/e.json"] == "Returns\nReturn within 30 days"
    assert ingested.issues == []


def test_missing_or_empty_source_is_a_clear_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as missing:
        ingest(options(tmp_path, "data/nope.md"))
    assert "data/nope.md" in missing.value.message and "does not exist" in missing.value.message
    assert missing.value.hint and missing.value.exit_code == 2
    write(tmp_path / "empty/.keep", "")
    write(tmp_path / "empty/photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
    with pytest.raises(IngestError, match="holds no supported file") as empty:
        source_files(options(tmp_path, "empty"))
    assert ".md" in (empty.value.hint or "")


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_impossible_chunk_sizes_are_rejected(tmp_path: Path, size: int, overlap: int) -> None:
    write(tmp_path / "a.txt", "Some text.")
    with pytest.raises(IngestError, match="chunk"):
        ingest(options(tmp_path, "a.txt", chunk_size=size, chunk_overlap=overlap))


def test_pdf_chunks_know_their_page(tmp_path: Path) -> None:
    pages = [[sentences(3, start=page * 10)] for page in range(3)]
    write(tmp_path / "manual.pdf", make_pdf(pages))
    chunks = ingest(options(tmp_path, "manual.pdf", chunk_size=24, chunk_overlap=0)).chunks
    by_page = {chunk.page: chunk.text for chunk in chunks}
    assert set(by_page) == {1, 2, 3}
    assert "Sentence number 10 " in by_page[2] and "number 20 " in by_page[3]
    for chunk in chunks:
        assert len(tokens(chunk.text)) <= 24


def test_chunks_respect_size_and_prefer_paragraph_then_sentence_cuts(tmp_path: Path) -> None:
    short = "Alpha beta gamma. Delta epsilon."  # 7 tokens
    long_paragraph = sentences(6)  # 6 sentences of 8 tokens
    write(tmp_path / "a.txt", f"{short}\n\n{short}\n\n{long_paragraph}")
    chunks = ingest(options(tmp_path, "a.txt", chunk_size=20, chunk_overlap=0)).chunks
    texts = [chunk.text for chunk in chunks]
    assert texts[0] == f"{short}\n\n{short}"  # two whole paragraphs, not a piece of the third
    for text in texts[1:]:  # the long paragraph is cut between sentences
        assert text.startswith("Sentence") and text.endswith(".")
    assert all(len(tokens(text)) <= 20 for text in texts)
    assert [chunk.position for chunk in chunks] == list(range(len(chunks)))
    assert len({chunk.id for chunk in chunks}) == len(chunks)


def test_a_sentence_longer_than_a_chunk_is_cut_between_words(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", " ".join(f"word{n}" for n in range(50)))
    chunks = ingest(options(tmp_path, "a.txt", chunk_size=20, chunk_overlap=0)).chunks
    assert [len(tokens(chunk.text)) for chunk in chunks] == [20, 20, 10]


def test_overlap_repeats_the_tail_of_the_previous_chunk(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", sentences(20))
    chunks = ingest(options(tmp_path, "a.txt", chunk_size=30, chunk_overlap=8)).chunks
    assert len(chunks) > 3
    for before, after in pairwise(chunks):
        assert tokens(after.text)[:8] == tokens(before.text)[-8:]
        tail = before.text[[m.start() for m in TOKEN.finditer(before.text)][-8] :]
        assert after.text.startswith(tail)  # the very text, spacing included
    rebuilt = tokens(chunks[0].text) + [t for c in chunks[1:] for t in tokens(c.text)[8:]]
    assert rebuilt == tokens(sentences(20))


# --- structure-aware documents ----------------------------------------------------------

GUIDE = """Preface text.

# Guide

Welcome to the guide.

## Install

```bash
# not a heading
pip install thing
```

### Linux

Use the package manager.

Windows
-------

Use the installer.

## Use

Run it.
"""


def test_markdown_headings_give_each_chunk_its_heading_path(tmp_path: Path) -> None:
    write(tmp_path / "guide.md", GUIDE)
    chunks = ingest(options(tmp_path, "guide.md", structure="headings")).chunks
    paths = [(chunk.heading_path, chunk.text.splitlines()[0]) for chunk in chunks]
    assert paths == [
        ((), "Preface text."),
        (("Guide",), "# Guide"),
        (("Guide", "Install"), "## Install"),
        (("Guide", "Install", "Linux"), "### Linux"),
        (("Guide", "Windows"), "Windows"),  # a `---` underline is a level-2 heading
        (("Guide", "Use"), "## Use"),
    ]
    assert "# not a heading" in chunks[2].text  # fenced code stays in its section
    assert chunks[3].id == "guide.md#Guide/Install/Linux:3"
    plain = ingest(options(tmp_path, "guide.md")).chunks
    assert len(plain) == 1 and plain[0].heading_path == ()


def test_long_sections_are_chunked_within_the_section(tmp_path: Path) -> None:
    write(tmp_path / "g.md", f"# One\n\n{sentences(10)}\n\n# Two\n\n{sentences(10, start=50)}\n")
    chunks = ingest(
        options(tmp_path, "g.md", structure="headings", chunk_size=25, chunk_overlap=5)
    ).chunks
    one = [chunk for chunk in chunks if chunk.heading_path == ("One",)]
    two = [chunk for chunk in chunks if chunk.heading_path == ("Two",)]
    assert len(one) > 2 and len(two) > 2 and len(one) + len(two) == len(chunks)
    assert all("number 5" + "0" not in chunk.text for chunk in one)  # nothing of section Two
    assert all("# One" not in chunk.text for chunk in two)
    assert all(len(tokens(chunk.text)) <= 25 for chunk in chunks)


def test_pdf_headings_come_from_the_outline(tmp_path: Path) -> None:
    pdf = make_pdf(
        [
            ["Overview", "The product in brief."],
            ["Getting started", "Create an account first."],
            ["Billing", "Invoices are monthly."],
        ]
    )
    outline = [("Overview", 0, 1), ("Getting started", 1, 2), ("Billing", 2, 1)]
    write(tmp_path / "book.pdf", with_outline(pdf, outline))
    chunks = ingest(options(tmp_path, "book.pdf", structure="headings")).chunks
    found = [(chunk.heading_path, chunk.page, chunk.text.split("\n")[0]) for chunk in chunks]
    assert found == [
        (("Overview",), 1, "Overview"),
        (("Overview", "Getting started"), 2, "Getting started"),
        (("Billing",), 3, "Billing"),
    ]


def test_pdf_without_outline_finds_heading_like_lines(tmp_path: Path) -> None:
    pdf = make_pdf(
        [
            ["1 INTRODUCTION", "This manual explains the tool.", "2 Setup", "Install it."],
            ["2.1 Linux steps", "Use apt to install it.", "3. Usage notes", "Run the tool."],
        ]
    )
    write(tmp_path / "m.pdf", pdf)
    chunks = ingest(options(tmp_path, "m.pdf", structure="headings")).chunks
    assert [(chunk.heading_path, chunk.page) for chunk in chunks] == [
        (("1 INTRODUCTION",), 1),
        (("2 Setup",), 1),
        (("2 Setup", "2.1 Linux steps"), 2),
        (("3. Usage notes",), 2),
    ]


# --- structured sources: CSV ----------------------------------------------------------

PRODUCTS = [
    [
        "id",
        "name",
        "category",
        "description",
        "specs",
        "reviews",
        "price",
        "stock",
        "active",
        "note",
    ],
    [
        "1",
        "Kettle",
        "kitchen",
        "Boils water fast",
        "1.7 litres",
        "Great kettle",
        "12",
        "3.5",
        "true",
        "",
    ],
    ["2", "Lamp", "home", "Warm reading light", "E27 socket", "Cosy", "30", "0.5", "false", "new"],
]


def write_products(root: Path) -> None:
    (root / "data").mkdir(exist_ok=True)
    with (root / "data/products.csv").open("w", newline="") as stream:
        csv.writer(stream).writerows(PRODUCTS)


def test_csv_vector_field_embeds_only_that_column(tmp_path: Path) -> None:
    write_products(tmp_path)
    chunks = ingest(options(tmp_path, "data/products.csv", vector_fields=("description",))).chunks
    assert [chunk.text for chunk in chunks] == ["Boils water fast", "Warm reading light"]
    assert chunks[0].metadata == {
        "id": 1,
        "name": "Kettle",
        "category": "kitchen",
        "specs": "1.7 litres",
        "reviews": "Great kettle",
        "price": 12,
        "stock": 3.5,
        "active": True,
        "note": None,
    }
    assert chunks[1].metadata["active"] is False and chunks[1].record_id == "1"
    assert chunks[0].id == "data/products.csv#0:0" and chunks[0].record_index == 0


def test_csv_several_vector_fields_make_one_text_per_row(tmp_path: Path) -> None:
    write_products(tmp_path)
    chosen = ("description", "specs", "reviews")
    chunks = ingest(options(tmp_path, "data/products.csv", vector_fields=chosen)).chunks
    assert [chunk.text for chunk in chunks] == [
        "Boils water fast\n1.7 litres\nGreat kettle",
        "Warm reading light\nE27 socket\nCosy",
    ]
    joined = ingest(
        options(tmp_path, "data/products.csv", vector_fields=chosen, field_separator=" | ")
    ).chunks
    assert joined[1].text == "Warm reading light | E27 socket | Cosy"


def test_csv_meta_fields_and_id_field_choose_metadata_and_ids(tmp_path: Path) -> None:
    write_products(tmp_path)
    chunks = ingest(
        options(
            tmp_path,
            "data/products.csv",
            vector_fields=("description",),
            meta_fields=("id", "name", "category"),
            id_field="name",
        )
    ).chunks
    assert [chunk.metadata for chunk in chunks] == [
        {"id": 1, "name": "Kettle", "category": "kitchen"},
        {"id": 2, "name": "Lamp", "category": "home"},
    ]
    assert [chunk.id for chunk in chunks] == [
        "data/products.csv#Kettle:0",
        "data/products.csv#Lamp:0",
    ]
    assert rebuild_record(chunks[1]) == {
        "id": 2,
        "name": "Lamp",
        "category": "home",
        "description": "Warm reading light",
        "specs": "E27 socket",
        "reviews": "Cosy",
        "price": 30,
        "stock": 0.5,
        "active": False,
        "note": "new",
    }


def test_csv_without_vector_field_embeds_every_text_column(tmp_path: Path) -> None:
    write_products(tmp_path)
    chunk = ingest(options(tmp_path, "data/products.csv")).chunks[0]
    assert chunk.text == "Kettle\nkitchen\nBoils water fast\n1.7 litres\nGreat kettle"
    assert chunk.metadata == {"id": 1, "price": 12, "stock": 3.5, "active": True, "note": None}


def test_csv_dialect_is_sniffed(tmp_path: Path) -> None:
    write(tmp_path / "semi.csv", "title;body;score\nFirst;Hello there, friend;4\nSecond;Bye;5\n")
    chunks = ingest(options(tmp_path, "semi.csv", vector_fields=("body",))).chunks
    assert [(chunk.text, chunk.metadata["score"]) for chunk in chunks] == [
        ("Hello there, friend", 4),
        ("Bye", 5),
    ]


# --- structured sources: JSON ---------------------------------------------------------


def test_json_flat_list_embeds_the_vector_field_of_each_object(tmp_path: Path) -> None:
    articles = [
        {"id": "a1", "title": "Tea", "content": "Green tea is light.", "views": 10},
        {"id": "a2", "title": "Coffee", "content": "Coffee is strong.", "views": 7},
    ]
    write(tmp_path / "data/articles.json", json.dumps(articles))
    chunks = ingest(
        options(tmp_path, "data/articles.json", vector_fields=("content",), id_field="id")
    ).chunks
    assert [(chunk.record_id, chunk.text) for chunk in chunks] == [
        ("a1", "Green tea is light."),
        ("a2", "Coffee is strong."),
    ]
    assert chunks[0].metadata == {"id": "a1", "title": "Tea", "views": 10}
    assert [rebuild_record(chunk) for chunk in chunks] == articles


NESTED = {
    "version": 3,
    "owner": {"team": "docs", "contact": {"email": "d@x.io"}},
    "data": {
        "updated": "2024-05-01",
        "records": [
            {"description": "First item", "details": {"color": "red", "size": 2}},
            {"description": "Second item", "details": {"color": "blue", "size": 5}},
        ],
    },
    "items": [{"description": "Top item", "rank": 1}],
}


def test_json_record_path_selects_the_records_array(tmp_path: Path) -> None:
    write(tmp_path / "n.json", json.dumps(NESTED))
    chunks = ingest(
        options(tmp_path, "n.json", record_path="items", vector_fields=("description",))
    ).chunks
    assert [(chunk.text, chunk.metadata) for chunk in chunks] == [("Top item", {"rank": 1})]


def test_json_dotted_record_path_meta_and_prefixes(tmp_path: Path) -> None:
    write(tmp_path / "n.json", json.dumps(NESTED))
    opts = options(
        tmp_path,
        "n.json",
        record_path="data.records",
        meta=("version", "data.updated"),
        record_prefix="record_",
        meta_prefix="meta_",
        vector_fields=("record_description",),
    )
    chunks = ingest(opts).chunks
    assert [chunk.text for chunk in chunks] == ["First item", "Second item"]
    assert chunks[1].metadata == {
        "record_details.color": "blue",
        "record_details.size": 5,
        "meta_version": 3,
        "meta_data.updated": "2024-05-01",
    }
    # As in pandas, a meta path of two parts is read one step down record_path (from
    # "data"), so "owner.team" is not found there: pandas raises, ingestion reports it.
    odd = ingest(replace(opts, meta=("owner.team",)))
    assert [chunk.metadata["meta_owner.team"] for chunk in odd.chunks] == [None, None]
    assert len(odd.issues) == 1 and "'owner.team'" in odd.issues[0].message
    assert rebuild_record(chunks[1]) == NESTED["data"]["records"][1]  # type: ignore[index]


def test_json_meta_fields_are_metadata_never_embedded(tmp_path: Path) -> None:
    posts = [
        {"id": "p1", "category": "news", "tags": ["a", "b"], "author": "Ann", "body": "Big news."},
        {"id": "p2", "category": "blog", "tags": [], "author": "Bob", "body": "A blog post."},
    ]
    write(tmp_path / "posts.json", json.dumps(posts))
    chunks = ingest(
        options(tmp_path, "posts.json", meta=("id", "category", "tags", "author"))
    ).chunks
    assert [chunk.text for chunk in chunks] == ["Big news.", "A blog post."]
    assert chunks[0].metadata == {
        "id": "p1",
        "category": "news",
        "tags": ["a", "b"],
        "author": "Ann",
    }


def test_json_without_vector_field_combines_text_and_keeps_other_types_as_metadata(
    tmp_path: Path,
) -> None:
    record = {
        "title": "Router",
        "summary": "Fast wifi router.",
        "price": 49.9,
        "count": 3,
        "in_stock": True,
        "discontinued": None,
        "ports": [1, 2],
        "vendor": {"name": "Acme", "founded": 1990},
    }
    write(tmp_path / "r.json", json.dumps([record]))
    chunk = ingest(options(tmp_path, "r.json")).chunks[0]
    assert chunk.text == "Router\nFast wifi router.\nAcme"
    assert chunk.metadata == {
        "price": 49.9,
        "count": 3,
        "in_stock": True,
        "discontinued": None,
        "ports": [1, 2],
        "vendor.founded": 1990,
    }


def test_json_lines_are_records(tmp_path: Path) -> None:
    write(tmp_path / "q.jsonl", '{"q": "How?", "n": 1}\n\n{"q": "Why?", "n": 2}\n')
    chunks = ingest(options(tmp_path, "q.jsonl", vector_fields=("q",))).chunks
    assert [(c.text, c.record_index, c.metadata) for c in chunks] == [
        ("How?", 0, {"n": 1}),
        ("Why?", 1, {"n": 2}),
    ]


# --- pandas.json_normalize semantics --------------------------------------------------

STATES = [
    {
        "state": "Florida",
        "shortname": "FL",
        "info": {"governor": "Rick Scott"},
        "counties": [
            {"name": "Dade", "population": 12345},
            {"name": "Broward", "population": 40000},
            {"name": "Palm Beach", "population": 60000},
        ],
    },
    {
        "state": "Ohio",
        "shortname": "OH",
        "info": {"governor": "John Kasich"},
        "counties": [
            {"name": "Summit", "population": 1234},
            {"name": "Cuyahoga", "population": 1337},
        ],
    },
]
# pandas.json_normalize(STATES, "counties", ["state", "shortname", ["info", "governor"]]),
# as pandas' documentation shows it: one row per county, the state's fields repeated.
STATES_ROWS = [
    {
        "name": "Dade",
        "population": 12345,
        "state": "Florida",
        "shortname": "FL",
        "info.governor": "Rick Scott",
    },
    {
        "name": "Broward",
        "population": 40000,
        "state": "Florida",
        "shortname": "FL",
        "info.governor": "Rick Scott",
    },
    {
        "name": "Palm Beach",
        "population": 60000,
        "state": "Florida",
        "shortname": "FL",
        "info.governor": "Rick Scott",
    },
    {
        "name": "Summit",
        "population": 1234,
        "state": "Ohio",
        "shortname": "OH",
        "info.governor": "John Kasich",
    },
    {
        "name": "Cuyahoga",
        "population": 1337,
        "state": "Ohio",
        "shortname": "OH",
        "info.governor": "John Kasich",
    },
]
PEOPLE = [
    {"id": 1, "name": {"first": "Coleen", "last": "Volk"}},
    {"name": {"given": "Mark", "family": "Regner"}},
    {"id": 2, "name": "Faye Raker"},
]
# pandas.json_normalize(PEOPLE): nested objects flattened with "."; missing columns absent.
PEOPLE_ROWS = [
    {"id": 1, "name.first": "Coleen", "name.last": "Volk"},
    {"name.given": "Mark", "name.family": "Regner"},
    {"id": 2, "name": "Faye Raker"},
]


def normalized(root: Path, data: Any, **fields: Any) -> list[dict[str, Any]]:
    """Each record's fields as ingestion sees them (embedded text fields and metadata)."""
    write(root / "d.json", json.dumps(data))
    found: list[dict[str, Any]] = []
    for chunk in ingest(options(root, "d.json", field_separator="\x00", **fields)).chunks:
        row = dict(chunk.metadata)
        row.update({f"text{n}": text for n, text in enumerate(chunk.text.split("\x00"))})
        found.append(row)
    return found


def test_normalisation_matches_pandas_documented_examples(tmp_path: Path) -> None:
    rows = normalized(
        tmp_path,
        STATES,
        record_path="counties",
        meta=("state", "shortname", "info.governor"),
        meta_fields=("name", "population"),
    )
    assert [
        {k: v for k, v in row.items() if not k.startswith("text")} for row in rows
    ] == STATES_ROWS
    people = normalized(
        tmp_path,
        PEOPLE,
        meta_fields=("id", "name", "name.first", "name.last", "name.given", "name.family"),
    )
    assert [
        {k: v for k, v in row.items() if v is not None and not k.startswith("text")}
        for row in people
    ] == PEOPLE_ROWS


LIBRARY = {
    "library": "Central",
    "shelves": [
        {"label": "A", "books": [{"title": "Dune"}, {"title": "Emma"}]},
        {"label": "B", "books": [{"title": "Ulysses"}]},
    ],
}
# pandas.json_normalize(LIBRARY, ["shelves", "books"], [["library"], ["shelves", "label"]])
LIBRARY_ROWS = [
    {"title": "Dune", "library": "Central", "shelves.label": "A"},
    {"title": "Emma", "library": "Central", "shelves.label": "A"},
    {"title": "Ulysses", "library": "Central", "shelves.label": "B"},
]


def test_record_path_walks_through_lists_and_reads_meta_per_level(tmp_path: Path) -> None:
    rows = normalized(
        tmp_path,
        LIBRARY,
        record_path="shelves.books",
        meta=("library", "shelves.label"),
        vector_fields=("title",),
    )
    assert [{"title": row.pop("text0"), **row} for row in rows] == LIBRARY_ROWS


def test_normalisation_equals_pandas(tmp_path: Path) -> None:
    import pandas  # the reference (dev extra)

    frame = pandas.json_normalize(STATES, "counties", ["state", "shortname", ["info", "governor"]])
    assert frame.to_dict("records") == STATES_ROWS
    frame = pandas.json_normalize(
        LIBRARY, ["shelves", "books"], [["library"], ["shelves", "label"]]
    )
    assert frame.to_dict("records") == LIBRARY_ROWS
    frame = pandas.json_normalize(PEOPLE)
    assert [
        {k: v for k, v in row.items() if v == v} for row in frame.to_dict("records")
    ] == PEOPLE_ROWS


# --- format detection ------------------------------------------------------------------


def test_format_is_detected_from_content_without_a_known_extension(tmp_path: Path) -> None:
    write(tmp_path / "data/structured_data", json.dumps({"items": [{"text": "From JSON"}]}))
    write(tmp_path / "data/rows.data", "name,text\nx,From CSV\n")
    write(tmp_path / "data/lines", '{"text": "From JSON lines 1"}\n{"text": "From JSON lines 2"}\n')
    write(tmp_path / "data/notes", "Just some notes, written freely.\nNothing structured here.\n")
    write(tmp_path / "data/doc.bin", make_pdf([["From PDF"]]))
    ingested = ingest(options(tmp_path, "data", record_path=None, vector_fields=None))
    texts = sorted(chunk.text for chunk in ingested.chunks)
    assert "From CSV" in "".join(texts) and "From PDF" in texts
    assert "From JSON lines 1" in texts and "From JSON lines 2" in texts
    assert "Just some notes, written freely.\nNothing structured here." in texts
    structured = ingest(options(tmp_path, "data/structured_data", record_path="items"))
    assert [chunk.text for chunk in structured.chunks] == ["From JSON"]


# --- records chunked, bad records ------------------------------------------------------


def test_long_record_text_is_chunked_and_every_chunk_carries_the_record(tmp_path: Path) -> None:
    records = [
        {"sku": "K-1", "description": sentences(12), "summary": "Short summary.", "price": 5},
        {"sku": "K-2", "description": "Tiny.", "summary": "Also tiny.", "price": 7},
    ]
    write(tmp_path / "p.json", json.dumps(records))
    chunks = ingest(
        options(
            tmp_path,
            "p.json",
            vector_fields=("description", "summary"),
            id_field="sku",
            chunk_size=30,
            chunk_overlap=10,
        )
    ).chunks
    first = [chunk for chunk in chunks if chunk.record_id == "K-1"]
    assert len(first) > 3
    assert [chunk.position for chunk in first] == list(range(len(first)))
    assert [chunk.id for chunk in first] == [f"p.json#K-1:{n}" for n in range(len(first))]
    assert all(chunk.metadata == {"sku": "K-1", "price": 5} for chunk in first)
    assert all(rebuild_record(chunk) == records[0] for chunk in first)
    assert first[-1].text.endswith("Short summary.")
    for before, after in pairwise(first):
        assert tokens(after.text)[:10] == tokens(before.text)[-10:]
    assert [chunk.text for chunk in chunks if chunk.record_id == "K-2"] == ["Tiny.\nAlso tiny."]


def test_bad_and_mixed_records_are_reported_with_their_index(tmp_path: Path) -> None:
    records: list[Any] = [
        {"id": 1, "body": "Fine record."},
        {"id": 2, "title": "no body"},
        {"id": 3, "body": 42},
        "just a string",
        {"id": 5, "body": ""},
        {"id": 6, "body": "Also fine."},
    ]
    write(tmp_path / "mixed.json", json.dumps(records))
    ingested = ingest(options(tmp_path, "mixed.json", vector_fields=("body",)))
    assert [chunk.record_index for chunk in ingested.chunks] == [0, 5]
    reported = {(issue.record_index, issue.source) for issue in ingested.issues}
    assert reported == {(1, "mixed.json"), (2, "mixed.json"), (3, "mixed.json"), (4, "mixed.json")}
    messages = {issue.record_index: issue.message for issue in ingested.issues}
    assert "'body'" in messages[1] and "42" in messages[2] and "not an object" in messages[3]
    assert "empty" in messages[4]


def test_bad_json_lines_and_rows_are_reported_and_the_rest_ingested(tmp_path: Path) -> None:
    write(tmp_path / "l.jsonl", '{"t": "one"}\n{"t": broken\n{"t": "three"}\n')
    ingested = ingest(options(tmp_path, "l.jsonl"))
    assert [(chunk.text, chunk.record_index) for chunk in ingested.chunks] == [
        ("one", 0),
        ("three", 2),
    ]
    assert [(issue.record_index, "line 2" in issue.message) for issue in ingested.issues] == [
        (1, True)
    ]
    write(tmp_path / "r.csv", "a,b\nx,y\nonly-one\nz,w,extra\n")
    rows = ingest(options(tmp_path, "r.csv"))
    assert [chunk.text for chunk in rows.chunks] == ["x\ny", "only-one", "z\nw"]
    assert [issue.record_index for issue in rows.issues] == [1, 2]


def test_broken_files_give_issues_not_tracebacks(tmp_path: Path) -> None:
    write(tmp_path / "d/bad.json", '{"items": [1, 2')
    write(tmp_path / "d/bad.pdf", b"%PDF-1.4\nthis is not really a pdf")
    write(tmp_path / "d/path.json", json.dumps({"data": {"rows": []}}))
    write(tmp_path / "d/latin.txt", "caf\xe9 au lait".encode("latin-1"))
    ingested = ingest(options(tmp_path, "d", record_path="data.records"))
    by_file = {issue.source: issue.message for issue in ingested.issues}
    assert "not valid JSON" in by_file["d/bad.json"] and "line 1" in by_file["d/bad.json"]
    assert "PDF" in by_file["d/bad.pdf"]
    assert "'records'" in by_file["d/path.json"] and "rows" in by_file["d/path.json"]
    assert "UTF-8" in by_file["d/latin.txt"]
    assert [chunk.text for chunk in ingested.chunks] == ["caf\ufffd au lait"]


def test_duplicate_record_ids_keep_chunk_ids_unique(tmp_path: Path) -> None:
    write(tmp_path / "d.csv", "kind,text\nfaq,One\nfaq,Two\n")
    ingested = ingest(options(tmp_path, "d.csv", id_field="kind", vector_fields=("text",)))
    assert [chunk.record_id for chunk in ingested.chunks] == ["faq", "faq"]
    assert len({chunk.id for chunk in ingested.chunks}) == 2
    assert [issue.record_index for issue in ingested.issues] == [1]


def test_records_with_the_same_text_stay_separate_chunks(tmp_path: Path) -> None:
    write(tmp_path / "same.csv", "sku,text\nA,Same words\nB,Same words\n")
    chunks = ingest(options(tmp_path, "same.csv", id_field="sku", vector_fields=("text",))).chunks
    assert [chunk.id for chunk in chunks] == ["same.csv#A:0", "same.csv#B:0"]
    assert chunks[0].content_hash == chunks[1].content_hash  # embedded once, found twice
    assert [chunk.metadata for chunk in chunks] == [{"sku": "A"}, {"sku": "B"}]


def test_chunk_file_reads_one_file_of_the_source(tmp_path: Path) -> None:
    write(tmp_path / "d/a.txt", "Alpha.")
    write(tmp_path / "d/b.txt", "Beta.")
    opts = options(tmp_path, "d")
    files = source_files(opts)
    chunks, issues = chunk_file(files[1], opts)
    assert [chunk.text for chunk in chunks] == ["Beta."] and issues == []


# --- scale ---------------------------------------------------------------------------


def test_twenty_thousand_rows_and_two_hundred_pages_chunk_quickly(tmp_path: Path) -> None:
    lines = ["id,name,description,price"]
    lines += [f"{n},Item {n},{sentences(3, start=n)},{n % 97}.5" for n in range(20_000)]
    write(tmp_path / "rows.csv", "\n".join(lines))
    pages = "\n\n".join(f"# Page {p}\n\n{sentences(40, start=p)}" for p in range(200))
    write(tmp_path / "book.md", pages)
    started = time.perf_counter()
    rows = ingest(options(tmp_path, "rows.csv", vector_fields=("description",)))
    book = ingest(options(tmp_path, "book.md", structure="headings"))
    elapsed = time.perf_counter() - started
    assert len(rows.chunks) == 20_000 and len(book.chunks) >= 200
    assert elapsed < 8, f"{elapsed:.2f}s"  # a few hundred ms unloaded; quadratic work takes minutes


# --- random input ----------------------------------------------------------------------

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
pieces = st.one_of(
    st.sampled_from(["word", "Über", "x1", "42", "naïve", "日本語", "e.g", "a-b", "don't"]),
    st.sampled_from([" ", "  ", "\n", "\n\n", "\t", ". ", "! ", "? ", ", ", "...", "(", ")", '"']),
    st.text(max_size=6),
)
texts = st.lists(pieces, max_size=120).map("".join)


def rebuilt_tokens(chunks: list[str], overlap: int) -> list[str]:
    """The text's tokens again: each chunk after the first minus the tail it repeats."""
    rebuilt: list[str] = []
    for index, chunk in enumerate(chunks):
        found = tokens(chunk)
        repeated = 0 if index == 0 else min(overlap, len(rebuilt))
        assert found[:repeated] == rebuilt[len(rebuilt) - repeated :]
        rebuilt.extend(found[repeated:])
    return rebuilt


@FUZZ
@given(text=texts, size=st.integers(1, 40), overlap_share=st.floats(0, 0.95))
def test_random_text_never_loses_a_word(
    tmp_path: Path, text: str, size: int, overlap_share: float
) -> None:
    overlap = min(int(size * overlap_share), size - 1)
    write(tmp_path / "random.txt", text)
    chunks = ingest_or_empty(
        options(tmp_path, "random.txt", chunk_size=size, chunk_overlap=overlap)
    )
    assert all(len(tokens(chunk)) <= size for chunk in chunks)
    assert all(chunk in text for chunk in chunks)
    assert rebuilt_tokens(chunks, overlap) == tokens(text)


def ingest_or_empty(opts: IngestOptions) -> list[str]:
    """The chunk texts, or none when the file holds no text at all (a blank file)."""
    ingested = ingest(opts)
    if not ingested.chunks:
        assert [issue.message for issue in ingested.issues] == [f"{opts.source.name} holds no text"]
    return [chunk.text for chunk in ingested.chunks]


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["items", "data", "records", "a", "b", "t", ""]), inner, max_size=4
        ),
    ),
    max_leaves=16,
)
names = st.sampled_from(["a", "b", "t", "items", "a.b", "data.records", "x"])


@FUZZ
@given(
    data=json_values,
    record_path=st.none() | st.sampled_from(["items", "data.records", "a", "a.b"]),
    vector_fields=st.none() | st.lists(names, max_size=2).map(tuple),
    meta=st.none() | st.lists(names, max_size=2).map(tuple),
    prefixes=st.sampled_from([(None, None), ("r_", "m_"), ("", "")]),
    id_field=st.none() | names,
    kind=st.sampled_from(["json", "jsonl", "data"]),
)
def test_random_json_never_crashes_ingest_or_check_mapping(
    tmp_path: Path,
    data: Any,
    record_path: str | None,
    vector_fields: tuple[str, ...] | None,
    meta: tuple[str, ...] | None,
    prefixes: tuple[str | None, str | None],
    id_field: str | None,
    kind: str,
) -> None:
    for old in tmp_path.glob("source.*"):
        old.unlink()
    if kind == "jsonl":
        items = data if isinstance(data, list) else [data]
        content = "\n".join(json.dumps(item) for item in items)
    else:
        content = json.dumps(data)
    write(tmp_path / f"source.{kind}", content)
    opts = options(
        tmp_path,
        f"source.{kind}",
        record_path=record_path,
        vector_fields=vector_fields,
        meta=meta,
        record_prefix=prefixes[0],
        meta_prefix=prefixes[1],
        id_field=id_field,
        chunk_size=8,
        chunk_overlap=2,
    )
    problems = check_mapping(opts)
    assert all(problem.field and problem.message for problem in problems)
    try:
        ingested = ingest(opts)
    except IngestError as error:  # only a file with nothing readable in it
        assert "binary" in error.message
        return
    assert len({chunk.id for chunk in ingested.chunks}) == len(ingested.chunks)
    for chunk in ingested.chunks:  # a bare scalar in `source.data` is read as text
        assert isinstance(rebuild_record(chunk), dict) == (chunk.record is not None)
        json.dumps(chunk.metadata)


@FUZZ
@given(data=st.binary(max_size=300), name=st.sampled_from(["blob", "x.data", "y.csv", "z.pdf"]))
def test_random_bytes_never_crash_ingest(tmp_path: Path, data: bytes, name: str) -> None:
    for old in tmp_path.iterdir():
        old.unlink()
    write(tmp_path / name, data)
    try:
        ingested = ingest(options(tmp_path, name, chunk_size=16, chunk_overlap=4))
    except IngestError as error:
        assert "binary" in error.message
        return
    assert all(chunk.source == name for chunk in ingested.chunks)


def _random_document() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(st.integers(0, 9), st.sampled_from(["x", "y"]))
    nested = st.dictionaries(st.sampled_from(["a", "b"]), leaf, max_size=2)
    inner = st.dictionaries(st.sampled_from(["a", "b", "c"]), leaf | nested, min_size=1, max_size=3)
    item = st.builds(
        lambda base, sub, label: {**base, "sub": sub, "lbl": label},
        inner,
        st.lists(inner, max_size=2),
        st.sampled_from(["p", "q"]),
    )
    return st.fixed_dictionaries(
        {"m": inner, "top": st.integers(0, 5), "items": st.lists(item, min_size=1, max_size=3)}
    )


@FUZZ
@given(
    document=_random_document(),
    record_path=st.sampled_from([("items",), ("items", "sub")]),
    meta=st.lists(
        st.sampled_from([("top",), ("m", "a"), ("items", "lbl")]), max_size=2, unique=True
    ),
    prefixes=st.sampled_from([(None, None), ("r_", None), (None, "m_"), ("r_", "m_")]),
)
def test_random_documents_normalise_as_pandas_does(
    tmp_path: Path,
    document: dict[str, Any],
    record_path: tuple[str, ...],
    meta: list[tuple[str, ...]],
    prefixes: tuple[str | None, str | None],
) -> None:
    import pandas  # the reference (dev extra)

    try:
        frame = pandas.json_normalize(
            document,
            list(record_path),
            [list(path) for path in meta],
            record_prefix=prefixes[0],
            meta_prefix=prefixes[1],
        )
    except (KeyError, TypeError, ValueError):
        frame = None  # pandas refuses (a missing key, a name clash): ingestion reports it
    write(tmp_path / "doc.json", json.dumps(document))
    ingested = ingest(
        options(
            tmp_path,
            "doc.json",
            record_path=".".join(record_path),
            meta=tuple(".".join(path) for path in meta),
            record_prefix=prefixes[0],
            meta_prefix=prefixes[1],
            field_separator="\x00",
        )
    )
    if frame is None:
        assert ingested.issues
        return
    assert ingested.issues == [] or all(i.record_index is not None for i in ingested.issues)
    meta_names = [f"{prefixes[1] or ''}{'.'.join(path)}" for path in meta]
    chunks = {chunk.record_index: chunk for chunk in ingested.chunks}
    for index, row in enumerate(frame.to_dict("records")):
        row = {name: value for name, value in row.items() if value == value}  # NaN: absent
        texts = [v for k, v in row.items() if isinstance(v, str) and k not in meta_names]
        others = {k: v for k, v in row.items() if k not in meta_names and k not in texts}
        others = {k: as_metadata(v) for k, v in others.items() if not isinstance(v, str)}
        if not texts:
            assert index not in chunks
            continue
        chunk = chunks[index]
        assert sorted(chunk.text.split("\x00")) == sorted(texts)
        assert chunk.metadata == {**others, **{name: as_metadata(row[name]) for name in meta_names}}


def as_metadata(value: Any) -> Any:
    """Metadata holds scalars and lists of scalars; deeper values as their JSON text."""
    if isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value)
    ):
        return json.dumps(value, ensure_ascii=False)
    return value
