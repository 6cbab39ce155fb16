from __future__ import annotations

from pathlib import Path

import pytest

from holodeck.spec.diagnostics import SpecError
from holodeck.spec.yaml.source import parse_yaml, read_yaml


def test_values_are_plain_and_every_field_has_its_line() -> None:
    doc = parse_yaml("a: 1\nb:\n  - x: 2.5\n    y: [true, null]\n  - !tag text\n")
    assert doc.data == {"a": 1, "b": [{"x": 2.5, "y": [True, None]}, "text"]}
    assert type(doc.data["b"][0]["x"]) is float
    assert doc.position(("b", 0, "y")).line == 4  # type: ignore[union-attr]
    assert doc.position(("b", 1)).line == 5  # type: ignore[union-attr]
    # a path that does not exist falls back to its nearest located ancestor
    assert doc.position(("b", 0, "missing")).line == 3  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("a: [1,\nb: 2\n", 3, 1, "flow sequence started at line 1"),
        ("a: 1\na: 2\n", 2, 1, "duplicate key"),
        ("a:\n\tb: 1\n", 2, 1, "'\\t'"),
        ("a: b: c\n", 1, 5, "mapping values are not allowed"),
    ],
)
def test_syntax_errors_give_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_yaml(text, Path("agent.yaml"))
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert words in diagnostic.message
    assert diagnostic.render().startswith(f"agent.yaml:{line}:{column}: error:")


def test_tab_indentation_gets_a_hint() -> None:
    with pytest.raises(SpecError) as caught:
        parse_yaml("a:\n\tb: 1\n")
    assert caught.value.diagnostics[0].hint == "indent with spaces, not tabs"


def test_alias_bomb_is_refused() -> None:
    layers = ["a: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 7):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        layers.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(SpecError, match="expands to more than"):
        parse_yaml("\n".join(layers))


def test_unreadable_files_are_diagnostics(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        read_yaml(tmp_path / "nope.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        read_yaml(binary)
