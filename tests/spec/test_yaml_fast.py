"""The fast YAML reader gives exactly the round-trip parser's data and positions."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holodeck.spec.diagnostics import SpecError
from holodeck.spec.yaml._fast import parse_fast
from holodeck.spec.yaml._roundtrip import parse_roundtrip
from holodeck.spec.yaml.source import parse_yaml

# the round-trip parser warns about a redefined anchor, which one case makes on purpose
pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    path
    for folder in ("examples", "docs/examples", "src/holodeck/templates")
    for pattern in ("*.yaml", "*.yml")
    for path in (ROOT / folder).rglob(pattern)
)
DIFF = settings(
    max_examples=int(os.environ.get("YAML_DIFF_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def shape(value: Any) -> Any:
    """`value` with every type spelled out: 1 == 1.0 == True and 0.0 == -0.0 must not hide."""
    if isinstance(value, dict):
        return ("dict", [(shape(k), shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [shape(v) for v in value])
    return (type(value).__name__, repr(value))


def outcome(parse: Any, text: str) -> Any:
    try:
        doc = parse(text, Path("agent.yaml"))
    except SpecError as exc:
        return ("error", [(d.message, d.line, d.column, d.hint) for d in exc.diagnostics])
    return ("ok", shape(doc.data), list(doc.positions.items()))


def assert_same(text: str) -> None:
    assert outcome(parse_yaml, text) == outcome(parse_roundtrip, text)


def test_examples_are_found() -> None:
    assert len(EXAMPLES) > 30


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_yaml_reads_the_same(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert_same(text)
    if "yaml-syntax" not in str(path) and "{{" not in text:  # templates are Jinja source
        assert parse_fast(text) is not None, "plain config must not need the slow parser"


PLAIN = [
    # YAML 1.2 as the round-trip parser reads it: these stay strings
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Yes",
    "NO",
    "On",
    "OFF",
    # booleans and nulls
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    "tRUE",
    "null",
    "Null",
    "NULL",
    "~",
    "nULL",
    "",
    # numbers in every notation, and near misses
    "0",
    "-0",
    "+0",
    "7",
    "+7",
    "-7",
    "12345678901234567890",
    "007",
    "08",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "1.5",
    "-1.5",
    "+1.5",
    "0.0",
    "-0.0",
    "1.",
    "1.0e+20",
    "1e3",
    "1E-3",
    ".5",
    "-.5",
    ".inf",
    "-.Inf",
    ".NaN",
    "1.5.6",
    "1,000",
    "1:30",
    "190:20:30",
    "0.1_2",
    "12e",
    "- 1",
    "1 2",
    "1.0e+400",
    "-1.5e-400",
    "0.30000000000000004",
    # timestamps and special keys
    "2024-01-31",
    "2024-1-3",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10",
    "2024-13-45",
    "<<",
    "=",
    "<<x",
    # strings that start like one of the above
    "nothing",
    "fast",
    "truely",
    "~x",
    "-x",
    "+x",
    ".x",
    "0a",
    "v1.0",
]


@pytest.mark.parametrize("scalar", PLAIN)
def test_plain_scalars_are_typed_as_before(scalar: str) -> None:
    for text in (f"value: {scalar}\n", f"- {scalar}\n", f"{scalar}: v\n", f"[{scalar}]"):
        assert_same(text)


def test_yaml_1_1_booleans_stay_strings() -> None:
    doc = parse_yaml("a: yes\nb: on\nc: no\nd: true\n")
    assert doc.data == {"a": "yes", "b": "on", "c": "no", "d": True}


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, {b: 2}]\nc: *x\nd: [*x, *x]\n",
        "- &s text\n- *s\n- {k: *s}\n",
        "a: &o\n  b: &i [1, 2]\n  c: *i\nd: *o\n",
        "a: &x [*x]\n",  # refers to itself
        "a: *nope\n",
        "a: &x 1\nb: &x 2\nc: *x\n",  # anchor redefined
        "base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n",
        "a: !!str 1\nb: !tag text\nc: !!binary aGk=\nd: !!set {x}\ne: !!omap [{a: 1}]\n",
        "%YAML 1.1\n---\na: yes\n",
        "a: 1\n---\nb: 2\n",
        "a: 1\na: 2\n",
        "1: a\n'1': b\n1.0: c\n",
        "1: a\n'1': b\n",
        "true: a\n1: b\n",
        "null: a\n~: b\n",
        "? [a, b]\n: c\n",
        "? a\n: b\n",
        "a:\n\tb: 1\n",
        "a: [1,\nb: 2\n",
        "a: b: c\n",
        "a: 'it''s'\nb: \"tab\\there\\u00e9\"\nc: |\n  line\n  two\nd: >-\n  folded\n  text\n",
        "# only a comment\n",
        "--- \n...\n",
        "{a: 1, b: [x, {c: d}]}",
        "- - - deep\n    - er\n",
        "é: ü\nkey with spaces: value with: colon\n",
        "a: 1\r\nb:\r\n  - 2\r\n",
        "a: 1\rb: 2\r",
        "a: \x85b\n",
        "a: x\u2028y\n",
        "\ufeffa: 1\n",
        "a: \x00\n",
        "[" * 50 + "]" * 50,
    ],
)
def test_edge_cases_read_the_same(text: str) -> None:
    assert_same(text)


def test_flow_nesting_past_libyamls_own_limit_is_refused_at_ours() -> None:
    # libyaml stops at 1000 levels while scanning ahead; the round-trip parser, asked
    # directly, would recurse for seconds
    with pytest.raises(SpecError, match="nest more than 100 levels") as refused:
        parse_yaml("x: " + "[" * 5000)
    assert refused.value.diagnostics[0].line == 1


def test_alias_bomb_is_still_refused() -> None:
    layers = ["a: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 7):
        layers.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    text = "\n".join(layers)
    with pytest.raises(SpecError, match="expands to more than 200000 values"):
        parse_fast(text)  # at the alias past the limit, before copying it
    assert_same(text)  # the round-trip parser, asked directly, refuses it the same way


def test_a_document_of_too_many_values_is_refused_as_before() -> None:
    text = "".join(f"- {i}\n" for i in range(200_001))
    with pytest.raises(SpecError, match="expands to more than"):
        parse_yaml(text)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(PLAIN),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(PLAIN)), inner, max_size=4),
    ),
    max_leaves=20,
)


def dump(data: Any, flow: bool | None, indent: int) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow
    yaml.indent(mapping=indent, sequence=indent + 2, offset=indent)
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


@DIFF
@given(values, st.sampled_from([False, True, None]), st.integers(2, 4))
def test_generated_documents_read_the_same(data: Any, flow: bool | None, indent: int) -> None:
    assert_same(dump(data, flow, indent))


@DIFF
@given(values, st.sampled_from([False, True, None]))
def test_generated_documents_with_anchors_read_the_same(data: Any, flow: bool | None) -> None:
    text = dump({"shared": data, "again": [data, {"k": data}]}, flow, 2)
    # the same object twice: the dumper writes an anchor and aliases
    shared = {"shared": data}
    text = dump([shared, shared, {"x": shared}], flow, 2) if isinstance(data, dict) else text
    assert_same(text)


yamlish = st.lists(
    st.sampled_from([*"ab1-:#&*!|>'\"[]{},?%@`~.0 \n\t", "\n  ", "\n- ", ": ", "yes", "<<"]),
    max_size=40,
).map("".join)


@DIFF
@given(yamlish)
def test_yaml_like_text_reads_the_same(text: str) -> None:
    assert_same(text)


@DIFF
@given(st.text(max_size=200))
def test_random_text_reads_the_same(text: str) -> None:
    assert_same(text)
