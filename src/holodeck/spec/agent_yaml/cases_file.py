"""agent.yaml `test_cases_file:`: test cases kept in their own file, relative to agent.yaml.

Formats, by extension:

- `.yaml` / `.yml`: a list of test cases, or a mapping `{test_cases: [...]}` (the two forms
  earlier HoloDeck releases read);
- `.json`: the same two forms, as JSON;
- `.jsonl`: one test case (a JSON object) per line; blank lines are skipped;
- `.csv`: a header row, then one test case per row (columns in `CSV_COLUMNS`).

Every case goes through the same model and checks as an inline case, and a problem is
reported at the file and line of the case (`cases.jsonl:812`). `${VAR}` references are
expanded as in agent.yaml. The returned document carries positions keyed like an
agent.yaml's (`("test_cases", index, ...)`), so diagnostics read the same for both.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from pydantic import Field

from holodeck.spec.diagnostics import Diagnostic, SpecError
from holodeck.spec.load_context import LoadContext
from holodeck.spec.models.base import Strict
from holodeck.spec.models.cases import TestCase
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.document import Position, YamlDocument
from holodeck.spec.yaml.limits import TEST_CASES, LimitError, too_deep
from holodeck.spec.yaml.source import parse_yaml, read_text

__all__ = ["CSV_COLUMNS", "FORMATS", "TestCasesFile", "load_test_cases_file"]

FORMATS = (".yaml", ".yml", ".json", ".jsonl", ".csv")
KEY = "test_cases"

# column -> how a cell becomes the field: "text" as written; "list" a JSON array, or
# items separated by `;` (a `files` item is a path, or a URL when it starts with http:// or
# https://); "json" a JSON value. An empty cell leaves the field out.
CSV_COLUMNS: dict[str, str] = {
    "name": "text",
    "input": "text",
    "ground_truth": "text",
    "expected_tools": "list",
    "tool_order": "text",
    "files": "list",
    "retrieval_context": "list",
    "turns": "json",
    "evaluations": "json",
    "approve": "list",
    "deny": "list",
}


class TestCasesFile(Strict):
    """What a test cases file holds (a bare list is read as `{test_cases: [...]}`)."""

    __test__ = False

    test_cases: list[TestCase] = Field(default_factory=list)


def load_test_cases_file(path: Path, ctx: LoadContext) -> tuple[list[TestCase], YamlDocument]:
    """The cases of `path` and the document their diagnostics point into.

    Problems go to `ctx.collector`; a file that cannot be read at all raises `SpecError`."""
    suffix = path.suffix.lower()
    text = read_text(path, TEST_CASES)
    if suffix in (".yaml", ".yml"):
        doc = _rekeyed(parse_yaml(text, path, TEST_CASES))
    elif suffix == ".json":
        doc = _json(text, path)
    elif suffix == ".jsonl":
        doc = _jsonl(text, path)
    else:
        doc = _csv(text, path)
    if not isinstance(doc.data, dict | list):
        if doc.data is None:  # an empty file: no cases
            return [], doc
        raise SpecError(
            [
                doc.diagnostic(
                    (),
                    "a test cases file holds a list of test cases",
                    hint="write `- input: ...` items, or `test_cases: [...]`",
                )
            ]
        )
    # walking 10,000 cases for `${` costs more than parsing them: skip it when there is none
    data = ctx.expand(doc) if "${" in text else doc.data
    parsed = validate(TestCasesFile, data, doc, ctx.collector)
    return (list(parsed.test_cases) if parsed else []), doc


def _rekeyed(doc: YamlDocument) -> YamlDocument:
    """A bare list becomes `{test_cases: [...]}`, its positions moved under `test_cases`."""
    if not isinstance(doc.data, list):
        return doc
    positions = {(KEY, *path): pos for path, pos in doc.positions.items()}
    return YamlDocument({KEY: doc.data}, doc.file, positions)


def _json(text: str, path: Path) -> YamlDocument:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(
            [Diagnostic(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno, column=exc.colno)]
        ) from None
    except RecursionError:
        raise too_deep(path) from None
    try:
        # JSON is YAML: its reader gives the line of every case and field (and checks
        # the limits on values and nesting)
        doc = parse_yaml(text, path, TEST_CASES)
    except LimitError:
        raise
    except SpecError:
        doc = YamlDocument(data, path)
    return _rekeyed(YamlDocument(data, path, doc.positions))


def _jsonl(text: str, path: Path) -> YamlDocument:
    cases: list[Any] = []
    positions: dict[tuple[str | int, ...], Position] = {}
    problems: list[Diagnostic] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except RecursionError:
            raise too_deep(path, number) from None
        except json.JSONDecodeError as exc:
            problems.append(
                Diagnostic(
                    f"invalid JSON: {exc.msg}",
                    file=path,
                    line=number,
                    column=exc.colno,
                    hint="each line holds one test case as a JSON object",
                )
            )
            continue
        positions[(KEY, len(cases))] = Position(number, 1)
        cases.append(case)
    if problems:
        raise SpecError(problems)
    return YamlDocument({KEY: cases}, path, positions)


def _csv(text: str, path: Path) -> YamlDocument:
    reader = csv.reader(text.splitlines(keepends=True))
    header = next(reader, None)
    if header is None:
        return YamlDocument({KEY: []}, path)
    columns = [c.strip() for c in header]
    problems = [
        Diagnostic(
            f"unknown column `{column}`",
            file=path,
            line=1,
            hint="columns: " + ", ".join(CSV_COLUMNS),
        )
        for column in columns
        if column not in CSV_COLUMNS
    ]
    if not problems and "input" not in columns and "turns" not in columns:
        problems.append(
            Diagnostic("no `input` (or `turns`) column", file=path, line=1, hint="add one")
        )
    if problems:
        raise SpecError(problems)
    kinds = [CSV_COLUMNS[column] for column in columns]
    cases: list[dict[str, Any]] = []
    positions: dict[tuple[str | int, ...], Position] = {}
    line = reader.line_num + 1
    for row in reader:
        if any(cell.strip() for cell in row):
            case: dict[str, Any] = {}
            for column, kind, cell in zip(columns, kinds, row, strict=False):
                if kind == "text":
                    if cell and not cell.isspace():
                        case[column] = cell
                elif cell.strip():
                    case[column] = _cell(cell, kind, column, path, line)
            positions[(KEY, len(cases))] = Position(line, 1)
            cases.append(case)
        line = reader.line_num + 1  # a quoted cell may span lines
    return YamlDocument({KEY: cases}, path, positions)


def _cell(cell: str, kind: str, column: str, path: Path, line: int) -> Any:
    stripped = cell.strip()
    if kind == "list" and not stripped.startswith("["):
        items = [item.strip() for item in stripped.split(";") if item.strip()]
        if column != "files":
            return items
        return [{"url" if _is_url(item) else "path": item} for item in items]
    try:
        return json.loads(stripped)
    except RecursionError:
        raise too_deep(path, line) from None
    except json.JSONDecodeError as exc:
        raise SpecError(
            [
                Diagnostic(
                    f"column `{column}`: invalid JSON: {exc.msg}",
                    file=path,
                    line=line,
                    hint='e.g. ["get_weather"] or [{"name": "get_weather", "args": {}}]',
                )
            ]
        ) from None


def _is_url(item: str) -> bool:
    return item.lower().startswith(("http://", "https://"))
