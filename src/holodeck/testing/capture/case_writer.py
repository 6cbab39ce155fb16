"""Captured cases written where `holodeck test` finds them, or shown as YAML.

- A YAML file (`.yaml`, `.yml`) is read and written round-trip (ruamel.yaml): its
  comments, quoting, flow mappings and indentation stay as they were, and the cases go at
  the end of its list of cases: the file itself when it is a list, its `test_cases:` when
  it is a mapping (a cases file, or an agent.yaml), or the file its `test_cases_file:`
  names. A file that does not exist yet is made, holding a list.
- `.jsonl`: one line per case, added at the end. `.json`: its list (or `test_cases`)
  grows; the file is written again with two-space indentation.

A case whose name the file already holds is refused: two cases of one name would be one
for `--case`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from holodeck.atomic_write import write_atomically
from holodeck.errors import InputError

KEY = "test_cases"
WRITABLE = (".yaml", ".yml", ".json", ".jsonl")


class CaseFileError(InputError):
    """A captured case cannot be written to the file named."""


def cases_yaml(cases: Sequence[dict[str, Any]], comment: str | None = None) -> str:
    """`cases` as a YAML list, as they would be appended to a file."""
    yaml = _yaml()
    out = io.StringIO()
    yaml.dump(_commented(cases, comment), out)
    return out.getvalue()


def append_cases(path: Path, cases: Sequence[dict[str, Any]], comment: str | None = None) -> Path:
    """Add `cases` at the end of the cases in `path` (see the module's docstring); returns
    the file written, which is another when `path`'s `test_cases_file:` names one."""
    suffix = path.suffix.lower()
    if suffix not in WRITABLE:
        raise CaseFileError(
            f"{path}: cannot add a case to a {suffix or 'extensionless'} file",
            hint="write captured cases to a .yaml, .json or .jsonl file",
        )
    text = _read(path)
    if suffix == ".jsonl":
        return _jsonl(path, text, cases)
    if suffix == ".json":
        return _json(path, text, cases)
    return _yaml_file(path, text, cases, comment)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseFileError(f"{path}: cannot read it: {exc}") from None


def _yaml_file(path: Path, text: str, cases: Sequence[dict[str, Any]], comment: str | None) -> Path:
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    yaml = _yaml()
    try:
        # the file's own indentation, so what is added looks like what is there
        _, indent, offset = load_yaml_guess_indent(text) if text.strip() else (None, 2, 0)
        data = yaml.load(text) if text.strip() else None
        indent, offset = indent or 2, offset or 0  # None when the file shows no nesting
    except (YAMLError, ValueError) as exc:
        raise CaseFileError(
            f"{path}: not valid YAML ({str(exc).splitlines()[0]})",
            hint="fix the file (`holodeck validate` points at the line), or give another",
        ) from None
    if isinstance(data, dict) and isinstance(data.get("test_cases_file"), str):
        if KEY in data:
            raise CaseFileError(f"{path}: has both `test_cases` and `test_cases_file`")
        return append_cases(path.parent / data["test_cases_file"], cases, comment)
    if data is None:  # empty, or comments alone: they stay, and the list follows them
        head = text if not text or text.endswith("\n") else text + "\n"
        write_atomically(path, (head + cases_yaml(cases, comment)).encode())
        return path
    listed = _listed(path, data)
    _refuse_taken(path, [c.get("name") for c in listed if isinstance(c, dict)], cases)
    start = len(listed)
    from ruamel.yaml.comments import CommentedMap

    for case in cases:
        listed.append(CommentedMap(case))
    if comment:
        listed.yaml_set_comment_before_after_key(start, before=comment, indent=offset)
    yaml.indent(mapping=max(2, indent - offset), sequence=indent, offset=offset)
    out = io.StringIO()
    yaml.dump(data, out)
    write_atomically(path, out.getvalue().encode())
    return path


def _listed(path: Path, data: Any) -> Any:
    """The sequence the cases go into."""
    from ruamel.yaml.comments import CommentedSeq

    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        found = data.get(KEY)
        if found is None:
            data[KEY] = found = CommentedSeq()
        if isinstance(found, list):
            return found
    raise CaseFileError(
        f"{path}: holds neither a list of test cases nor `test_cases:`",
        hint="give a cases file (a list of cases) or an agent.yaml",
    )


def _jsonl(path: Path, text: str, cases: Sequence[dict[str, Any]]) -> Path:
    names = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            names.append(json.loads(line).get("name"))
        except (ValueError, AttributeError):
            raise CaseFileError(f"{path}:{number}: not a JSON object (a test case)") from None
    _refuse_taken(path, names, cases)
    lines = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases)
    if text and not text.endswith("\n"):
        lines = "\n" + lines
    write_atomically(path, (text + lines).encode())
    return path


def _json(path: Path, text: str, cases: Sequence[dict[str, Any]]) -> Path:
    try:
        data = json.loads(text) if text.strip() else []
    except ValueError as exc:
        raise CaseFileError(f"{path}: not valid JSON ({exc})") from None
    listed = data.get(KEY) if isinstance(data, dict) else data
    if not isinstance(listed, list):
        raise CaseFileError(f"{path}: holds neither a list of test cases nor `test_cases`")
    _refuse_taken(path, [c.get("name") for c in listed if isinstance(c, dict)], cases)
    listed.extend(cases)
    write_atomically(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    return path


def _refuse_taken(path: Path, names: list[Any], cases: Sequence[dict[str, Any]]) -> None:
    for case in cases:
        if case.get("name") in names:
            raise CaseFileError(
                f"{path}: already holds a case named {case['name']!r}",
                hint="give the captured case another name (--name)",
            )


def _commented(cases: Sequence[dict[str, Any]], comment: str | None) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    listed = CommentedSeq(CommentedMap(case) for case in cases)
    if comment:
        listed.yaml_set_start_comment(comment)
    return listed


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.width = 4096  # long lines stay as they were written
    return yaml
