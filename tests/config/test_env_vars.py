from __future__ import annotations

from pathlib import Path

from holodeck.config.env_vars import environment_for
from holodeck.spec.diagnostics import Collector
from holodeck.spec.env_references import substitute
from holodeck.spec.yaml.source import parse_yaml


def expand(text: str, env: dict[str, str]) -> tuple[object, Collector]:
    collector = Collector()
    doc = parse_yaml(text, Path("agent.yaml"))
    return substitute(doc, env, collector), collector


def test_values_are_substituted_after_parsing() -> None:
    text = (
        "# ${IN_COMMENT} is never read\n"
        "key: ${KEY}\n"
        "url: http://${HOST:-localhost}:${PORT:-8000}/v1\n"
        "literal: $${KEY}\n"
        "nested: [{x: '${KEY}'}]\n"
    )
    data, collector = expand(text, {"KEY": "a: b\n- c", "PORT": "9000"})
    assert not collector.diagnostics
    # the value may contain YAML syntax: it stays one string, the shape can't change
    assert data == {
        "key": "a: b\n- c",
        "url": "http://localhost:9000/v1",
        "literal": "${KEY}",
        "nested": [{"x": "a: b\n- c"}],
    }


def test_empty_variable_takes_the_default_but_counts_as_set_without_one() -> None:
    data, _ = expand("a: ${E:-fallback}\nb: ${E}\n", {"E": ""})
    assert data == {"a": "fallback", "b": ""}


def test_undefined_variables_are_reported_with_file_and_line() -> None:
    data, collector = expand("a: 1\nb: ${MISSING_ONE}\nc: x-${MISSING_TWO}\n", {})
    rendered = [d.render() for d in collector.diagnostics]
    assert rendered[0].startswith("agent.yaml:2:1: error: b: environment variable `MISSING_ONE`")
    assert rendered[1].startswith("agent.yaml:3:1: error: c: environment variable `MISSING_TWO`")
    assert "${MISSING_ONE:-value}" in (collector.diagnostics[0].hint or "")
    assert data == {"a": 1, "b": "${MISSING_ONE}", "c": "x-${MISSING_TWO}"}


def test_malformed_reference_is_reported() -> None:
    _, collector = expand("a: ${1BAD}\n", {})
    assert "not a valid variable reference" in collector.diagnostics[0].message


def test_dotenv_is_read_and_the_process_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("FROM_FILE=file\nBOTH=file\n# comment\n", encoding="utf-8")
    env = environment_for(tmp_path, {"BOTH": "process"})
    assert env["FROM_FILE"] == "file"
    assert env["BOTH"] == "process"
    assert environment_for(tmp_path / "missing", {}) == {}
