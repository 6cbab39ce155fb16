"""The command line: help, version, validate, schema, exit codes, start-up imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from conftest import MINIMAL_AGENT, Write
from holodeck import __version__
from holodeck.cli.main import COMMANDS, cli, main
from holodeck.spec.json_schema import agent_yaml_schema
from holodeck.spec.yaml.source import read_yaml

REPO = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_version_and_help() -> None:
    code, out, _ = run("--version")
    assert (code, out.strip()) == (0, f"holodeck, version {__version__}")
    code, out, _ = run("--help")
    assert code == 0
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_has_help_with_an_example(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0
    assert "Example" in out
    assert f"holodeck {command}" in out


def test_unknown_command_suggests_the_closest() -> None:
    code, _, err = run("validat")
    assert code == 2
    assert "Did you mean `validate`?" in err


def test_help_and_version_import_no_heavy_library() -> None:
    heavy = {"pydantic", "pydantic_ai", "openai", "anthropic", "mcp", "torch", "ruamel"}
    for args in (["--help"], ["--version"]):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "holodeck", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        imported = {ln.rsplit("|", 1)[-1].strip().split(".")[0] for ln in done.stderr.splitlines()}
        assert not imported & heavy, imported & heavy


def test_validate_ok_and_failures(write: Write) -> None:
    good = write({"agent.yaml": MINIMAL_AGENT})
    bad = write({"agent.yaml": MINIMAL_AGENT.replace("name: gpt-4o-mini", "nme: gpt-4o-mini")})
    code, out, _ = run("validate", str(good))
    assert code == 0
    assert f"OK {good} (agent.yaml: demo, 0 tools" in out
    code, out, err = run("validate", str(good), str(bad))
    assert code == 2
    assert f"{bad / 'agent.yaml'}:4:3: error: model.nme: unknown field `nme`" in err
    assert "did you mean `name`?" in err
    assert f"FAILED {bad}: 1 error(s)" in err
    assert "Traceback" not in out + err


def test_validate_json_output(write: Write) -> None:
    bad = write({"agent.yaml": "name: x\nmodel: {provider: openai, name: m}\n"})
    code, out, _ = run("validate", "--json", str(bad))
    assert code == 2
    (result,) = json.loads(out)
    assert result["ok"] is False
    (diagnostic,) = result["diagnostics"]
    assert diagnostic["field"] == "instructions"
    assert diagnostic["line"] == 1
    assert diagnostic["severity"] == "error"


def test_validate_strict_and_no_env(write: Write) -> None:
    image = write(
        {
            "config.yaml": "spec_version: 1\nautosave: {every: 5}\n",
            "tools/mcp/m.yaml": "name: m\ntransport: http\nurl: ${MCP_URL_NOT_SET}\n",
        }
    )
    code, _, err = run("validate", str(image))
    assert code == 2 and "`MCP_URL_NOT_SET` is not set" in err
    code, out, _ = run("validate", "--no-env", str(image))
    assert code == 0
    assert "warning: autosave: ignored: `autosave` is not part of spec_version 1" in out
    code, _, err = run("validate", "--no-env", "--strict", str(image))
    assert code == 2 and "error: autosave: `autosave` is not part of spec_version 1" in err


def test_unexpected_errors_print_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], write: Write
) -> None:
    import holodeck.cli.validate

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(holodeck.cli.validate, "load_agent", explode)
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(write({"agent.yaml": MINIMAL_AGENT}))])
    assert exited.value.code == 3
    err = capsys.readouterr().err
    assert "error: RuntimeError: disk on fire" in err
    assert "Traceback" not in err


def test_schema_is_written_and_committed_copy_is_current(tmp_path: Path) -> None:
    target = tmp_path / "agent.schema.json"
    code, out, _ = run("schema", "-o", str(target))
    assert code == 0 and str(target) in out
    generated = json.loads(target.read_text(encoding="utf-8"))
    assert generated == agent_yaml_schema()
    committed = json.loads((REPO / "schema" / "agent.schema.json").read_text(encoding="utf-8"))
    assert committed == generated, "run `holodeck schema -o schema/agent.schema.json`"


def test_json_schema_agrees_with_the_loader(write: Write) -> None:
    validator = jsonschema.Draft202012Validator(agent_yaml_schema())
    good = read_yaml(write({"agent.yaml": MINIMAL_AGENT}) / "agent.yaml").data
    assert list(validator.iter_errors(good)) == []
    typo = dict(good, temprature=1)
    assert any("temprature" in e.message for e in validator.iter_errors(typo))
    examples = sorted((REPO / "examples").glob("*/agent.yaml"))
    for path in examples:
        data = read_yaml(path).data
        assert list(validator.iter_errors(data)) == [], path
