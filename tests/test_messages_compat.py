"""Messages met on real files: each says what is wrong, where, in our own words.

- union alternatives read as one sentence, never pydantic's "Input should be ...";
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import MINIMAL_AGENT, Write
from holodeck.config.loader import load_agent
from holodeck.spec import SpecError
from holodeck.spec.diagnostics import Diagnostic

PYDANTIC_WORDS = (
    "Input should",
    "valid dictionary",
    "instance of",
    "should have",
    "a valid string",
    "a valid list",
    "a valid number",
    "a valid integer",
)


def diagnostics_of(path: Path, **kwargs: object) -> list[Diagnostic]:
    try:
        spec = load_agent(path, **kwargs)  # type: ignore[arg-type]
    except SpecError as exc:
        return list(exc.diagnostics)
    return list(spec.warnings)


def rendered(path: Path, **kwargs: object) -> list[str]:
    return [d.render() for d in diagnostics_of(path, **kwargs)]


# --- union and type errors in our own words --------------------------------------------


@pytest.mark.parametrize(
    ("builtins", "message", "hint"),
    [
        (
            "[web_serch]",
            "`web_serch` is not allowed; expected `web_search`, `web_fetch` "
            "or a mapping with `name`",
            "did you mean `web_search`?",
        ),
        (
            "[42]",
            "`42` is not allowed; expected `web_search`, `web_fetch` or a mapping with `name`",
            None,
        ),
        (
            "[[web_search]]",
            "expected `web_search`, `web_fetch` or a mapping with `name`, not a list",
            None,
        ),
        (
            "[null]",
            "expected `web_search`, `web_fetch` or a mapping with `name`, not an empty value",
            None,
        ),
        ("web_search", "expected a list, not `web_search`", None),
        (
            "[{name: web_serch}]",
            "`web_serch` is not allowed; expected `web_search` or `web_fetch`",
            "did you mean `web_search`?",
        ),
    ],
)
def test_builtin_tool_forms_read_as_one_sentence(
    write: Write, builtins: str, message: str, hint: str | None
) -> None:
    root = write({"config.yaml": f"spec_version: 1\ntools:\n  builtins: {builtins}\n"})
    (found,) = diagnostics_of(root)
    assert (found.message, found.hint) == (message, hint)
    assert found.field.startswith("tools.builtins")


@pytest.mark.parametrize(
    ("patch", "field", "message"),
    [
        ("response_format: 5", "response_format", "expected a mapping or text, not `5`"),
        ('response_format: ""', "response_format", "must not be empty"),
        ("name: ", "name", "expected text, not an empty value"),
        ("instructions: be nice", "instructions", "expected a mapping with `file` or `inline`"),
        (
            "test_cases: [{input: hi, expected_tools: [5]}]",
            "test_cases[0].expected_tools[0]",
            "expected text or a mapping with `name`, not `5`",
        ),
        (
            "tools: [{type: vectorstore, name: v, description: d, source: s, database: 5}]",
            "tools[0].database",
            "expected text or a mapping with `provider` and `connection_string`, not `5`",
        ),
        (
            "tools: [{type: vectorstore, name: v, description: d, source: s, vector_field: 5}]",
            "tools[0].vector_field",
            "expected text or a list, not `5`",
        ),
        (
            "tools: [{type: function, name: f, file: a.py, function: f, timeout: soon}]",
            "tools[0].timeout",
            "expected a number, not `soon`",
        ),
        (
            "tools: [{type: function, name: f, file: a.py, function: f, timeout: -1}]",
            "tools[0].timeout",
            "must be greater than 0, not `-1`",
        ),
        (
            "tools: [{type: mcp, name: m, command: x, transport: stdio, scope: 5}]",
            "tools[0].scope",
            "`5` is not allowed; expected `agent` or `session`",
        ),
        ("logging: {log_level: debug}", "logging.log_level", "`debug` is not allowed"),
    ],
)
def test_agent_yaml_unions_and_types_read_as_our_sentences(
    write: Write, patch: str, field: str, message: str
) -> None:
    agent = yaml.safe_load(MINIMAL_AGENT) | yaml.safe_load(patch)
    root = write({"agent.yaml": yaml.safe_dump(agent, sort_keys=False)})
    found = [d for d in diagnostics_of(root) if d.field == field]
    assert found, rendered(root)
    assert message in found[0].message
    assert not any(words in found[0].message for words in PYDANTIC_WORDS)


def test_a_tool_that_is_not_a_mapping_lists_the_tool_types(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "tools:\n  - get_weather\n"})
    (found,) = diagnostics_of(root)
    assert found.message == "expected a mapping, not `get_weather`"
    assert found.hint is not None and "function, prompt, vectorstore, mcp, agent" in found.hint


def test_a_case_only_near_miss_gets_a_hint(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "logging:\n  log_level: debug\n"})
    (found,) = diagnostics_of(root)
    assert found.hint == "did you mean `DEBUG`?"


def test_no_pydantic_phrasing_on_the_broken_examples() -> None:
    broken = Path(__file__).resolve().parent.parent / "examples" / "broken"
    for case in sorted(p for p in broken.iterdir() if p.is_dir()):
        for line in rendered(case):
            assert not any(words in line for words in PYDANTIC_WORDS), line
