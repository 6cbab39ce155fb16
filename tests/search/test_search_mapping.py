"""Field mapping checks (US 6.1.2): wrong names are found before anything is ingested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holodeck.search.ingest import IngestError, MappingProblem, check_mapping, ingest
from search_files import options

PRODUCTS = "id,name,category,description,specs,price\n1,Kettle,kitchen,Boils water,1.7 l,12\n"
ARTICLES = {
    "source": "kb",
    "data": {
        "version": 2,
        "records": [
            {"id": 1, "content": "Tea", "author": {"name": "Ann"}, "views": 3},
            {"id": 2, "content": "Coffee", "author": {"name": "Bob"}, "views": 5},
        ],
    },
}


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def fields(problems: list[MappingProblem]) -> list[str]:
    return [problem.field for problem in problems]


def test_a_correct_csv_mapping_has_no_problem(tmp_path: Path) -> None:
    write(tmp_path / "data/products.csv", PRODUCTS)
    opts = options(
        tmp_path,
        "data/products.csv",
        vector_fields=("description", "specs"),
        meta_fields=("id", "name", "category"),
        id_field="id",
    )
    assert check_mapping(opts) == []


def test_unknown_csv_columns_are_named_with_the_columns_that_exist(tmp_path: Path) -> None:
    write(tmp_path / "data/products.csv", PRODUCTS)
    problems = check_mapping(
        options(
            tmp_path,
            "data/products.csv",
            vector_fields=("descripton",),
            meta_fields=("id", "colour"),
            id_field="sku",
        )
    )
    assert fields(problems) == ["vector_field", "meta_fields[1]", "id_field"]
    first = problems[0].message
    assert "'descripton'" in first and "data/products.csv" in first
    assert "id, name, category, description, specs, price" in first
    assert "did you mean `description`?" in first
    several = check_mapping(
        options(tmp_path, "data/products.csv", vector_fields=("description", "review"))
    )
    assert fields(several) == ["vector_fields[1]"]


def test_json_fields_are_those_of_the_records_after_path_and_prefixes(tmp_path: Path) -> None:
    write(tmp_path / "a.json", json.dumps(ARTICLES))
    good = options(
        tmp_path,
        "a.json",
        record_path="data.records",
        record_prefix="r_",
        meta=("source", "data.version"),
        meta_prefix="m_",
        vector_fields=("r_content",),
        meta_fields=("r_author.name", "r_views"),
        id_field="r_id",
    )
    assert check_mapping(good) == []
    unprefixed = check_mapping(
        options(
            tmp_path,
            "a.json",
            record_path="data.records",
            record_prefix="r_",
            vector_fields=("content",),
        )
    )
    assert fields(unprefixed) == ["vector_field"]
    assert "r_content" in unprefixed[0].message and "r_author.name" in unprefixed[0].message


def test_record_path_that_does_not_resolve_says_which_part_and_which_keys(
    tmp_path: Path,
) -> None:
    write(tmp_path / "a.json", json.dumps(ARTICLES))
    problems = check_mapping(
        options(tmp_path, "a.json", record_path="data.rows", vector_fields=("content",))
    )
    assert fields(problems) == ["record_path"]
    message = problems[0].message
    assert "'rows'" in message and "'data'" in message and "version, records" in message
    top = check_mapping(options(tmp_path, "a.json", record_path="items"))
    assert "'items'" in top[0].message and "the top level" in top[0].message
    assert "source, data" in top[0].message
    scalar = check_mapping(options(tmp_path, "a.json", record_path="source"))
    assert fields(scalar) == ["record_path"] and "not a list" in scalar[0].message


def test_meta_paths_are_checked_where_they_are_read(tmp_path: Path) -> None:
    write(tmp_path / "a.json", json.dumps(ARTICLES))
    problems = check_mapping(
        options(tmp_path, "a.json", record_path="data.records", meta=("source", "owner", "data.x"))
    )
    assert fields(problems) == ["meta[1]", "meta[2]"]
    assert "'owner'" in problems[0].message and "source, data" in problems[0].message
    assert "'x'" in problems[1].message and "version, records" in problems[1].message
    write(tmp_path / "b.json", json.dumps({"id": 9, "items": [{"id": 1, "t": "x"}]}))
    clash = check_mapping(options(tmp_path, "b.json", record_path="items", meta=("id",)))
    assert fields(clash) == ["meta[0]"] and "meta_prefix" in clash[0].message


def test_object_without_record_path_suggests_its_lists(tmp_path: Path) -> None:
    write(tmp_path / "o.json", json.dumps({"count": 2, "items": [{"text": "a"}], "tags": ["x"]}))
    problems = check_mapping(options(tmp_path, "o.json", vector_fields=("text",)))
    assert fields(problems) == ["vector_field"]
    assert "set record_path to one of its lists (items, tags)" in problems[0].message


def test_a_vector_field_holding_numbers_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "n.json", json.dumps([{"price": 3, "text": "a"}, {"price": 4.5}]))
    problems = check_mapping(options(tmp_path, "n.json", vector_fields=("price",)))
    assert fields(problems) == ["vector_field"] and "holds no text" in problems[0].message


def test_options_that_do_not_apply_are_reported(tmp_path: Path) -> None:
    write(tmp_path / "p.csv", PRODUCTS)
    csv_problems = check_mapping(
        options(tmp_path, "p.csv", record_path="items", meta_prefix="m_", vector_fields=("name",))
    )
    assert fields(csv_problems) == ["record_path", "meta_prefix"]
    assert "JSON" in csv_problems[0].message
    write(tmp_path / "docs/a.md", "# Doc\n\nText.")
    doc_problems = check_mapping(options(tmp_path, "docs", vector_fields=("body",), id_field="id"))
    assert fields(doc_problems) == ["vector_field", "id_field"]
    assert "docs holds none" in doc_problems[0].message
    write(tmp_path / "flat.json", json.dumps([{"t": "x"}]))
    flat = check_mapping(options(tmp_path, "flat.json", meta_prefix="m_"))
    assert fields(flat) == ["meta_prefix"]


def test_every_structured_file_of_a_directory_is_checked(tmp_path: Path) -> None:
    write(tmp_path / "d/a.csv", "title,body\nx,y\n")
    write(tmp_path / "d/b.jsonl", '{"title": "t", "text": "u"}\n{"title": "v", "text": "w"}\n')
    write(tmp_path / "d/c.md", "notes")
    problems = check_mapping(options(tmp_path, "d", vector_fields=("body",)))
    assert fields(problems) == ["vector_field"] and "d/b.jsonl" in problems[0].message
    assert "title, text" in problems[0].message


def test_missing_source_raises_as_ingestion_does(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="does not exist"):
        check_mapping(options(tmp_path, "nope.csv", vector_fields=("a",)))


def test_invalid_json_is_reported_with_its_position(tmp_path: Path) -> None:
    write(tmp_path / "bad.json", '[{"a": 1},\n {"a": ]')
    problems = check_mapping(options(tmp_path, "bad.json", vector_fields=("a",)))
    assert fields(problems) == ["source"] and "line 2" in problems[0].message


def test_large_files_are_checked_from_their_start_only(tmp_path: Path) -> None:
    row = {"id": 1, "title": "A title", "body": "Some body text " * 20}
    records = ",\n".join(json.dumps({**row, "id": n}) for n in range(30_000))
    # ~10 MB, and its end is cut off: only reading the start can find it fine
    write(tmp_path / "big.json", f'[{records},\n{{"id": ')
    write(tmp_path / "big.csv", "id,title,body\n" + "1,t,b\n" * 400_000 + '2,"unclosed')
    write(tmp_path / "big.jsonl", "\n".join(json.dumps(row) for _ in range(30_000)) + "\n{broken")
    for name in ("big.json", "big.csv", "big.jsonl"):
        opts = options(
            tmp_path, name, vector_fields=("body",), meta_fields=("title",), id_field="id"
        )
        assert check_mapping(opts) == [], name  # reading it to its end finds the cut


def test_problems_found_by_check_mapping_are_what_ingest_meets(tmp_path: Path) -> None:
    write(tmp_path / "a.json", json.dumps(ARTICLES))
    opts = options(tmp_path, "a.json", record_path="data.records", vector_fields=("body",))
    assert fields(check_mapping(opts)) == ["vector_field"]
    ingested = ingest(opts)
    assert ingested.chunks == []
    assert [issue.record_index for issue in ingested.issues] == [0, 1]
