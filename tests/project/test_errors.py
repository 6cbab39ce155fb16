"""One error family: every user-facing error is a HoloDeckError with an exit code and a hint,
and the command line prints it once, without a traceback unless --debug is given."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import MINIMAL_AGENT, Write
from holodeck.cli.main import cli
from holodeck.errors import (
    EXIT_CONFIG,
    EXIT_EXECUTION,
    MEANINGS,
    ConfigurationError,
    ExecutionError,
    HoloDeckError,
    InputRefused,
    ModelOutputError,
    SessionError,
    meaning_of,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "holodeck"


def _public_exception_classes() -> list[type[BaseException]]:
    """Every class named without a leading `_` in src/holodeck that is an exception."""
    found: list[type[BaseException]] = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and node.bases
        ]
        if not names:
            continue
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        module = importlib.import_module(".".join(p for p in parts if p != "__init__"))
        for name in names:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                found.append(value)
    return found


PUBLIC_ERRORS = _public_exception_classes()


def test_the_family_is_found() -> None:
    names = {cls.__name__ for cls in PUBLIC_ERRORS}
    expected = {
        "HoloDeckError",
        "ConfigurationError",
        "ExecutionError",
        "SpecError",
        "UnknownProviderError",
        "ProviderError",
        "CassetteError",
        "CassetteMiss",
        "ToolLoadError",
        "TypeScriptToolError",
        "NodeProcessError",
        "BuiltinToolError",
        "WebFetchError",
        "WebSearchError",
        "McpServerError",
        "McpToolError",
        "RunLookupError",
        "MetricError",
        "ScaffoldError",
        "ProjectExistsError",
        "ModelOutputError",
        "InputRefused",
        "DefinitionError",
        "InputError",
        "RequestError",
        "ModelError",
        "ToolError",
        "StoreError",
        "BusyError",
        "SessionBusy",
        "SessionStoreError",
        "ApiError",
        "SessionError",
        "ToolTimeout",
        "ReportFormatError",
    }
    assert expected <= names, expected - names


@pytest.mark.parametrize("cls", PUBLIC_ERRORS, ids=lambda cls: cls.__qualname__)
def test_every_public_error_has_a_row_in_the_table_and_no_builtin_parent(
    cls: type[BaseException],
) -> None:
    assert issubclass(cls, HoloDeckError), f"{cls.__module__}.{cls.__name__}"
    group = next(c for c in cls.__mro__ if c in MEANINGS)
    # grouped by meaning, not also by a builtin a caller might catch instead
    builtins = [c for c in cls.__mro__ if c.__module__ == "builtins"]
    assert builtins == [Exception, BaseException, object], cls
    if cls is not HoloDeckError:
        assert group is not HoloDeckError, f"{cls.__name__}: in no group of the table"
    assert cls.exit_code == MEANINGS[group].exit_code  # the class says what the table says


def test_the_table_gives_each_group_its_exit_code_and_status() -> None:
    rows = {cls.__name__: (m.exit_code, m.status, m.kind) for cls, m in MEANINGS.items()}
    assert rows["DefinitionError"] == (EXIT_CONFIG, 422, "invalid_agent")
    assert rows["InputRefused"] == (EXIT_CONFIG, 422, "input_refused")
    assert rows["ConfigurationError"][1] == 500  # the server's own settings: not the client's
    assert rows["ModelError"] == (EXIT_EXECUTION, 502, "model_error")
    assert rows["SessionError"][0] == EXIT_EXECUTION  # exit and status agree on whose fault
    assert rows["StoreError"][1] == 503 and rows["BusyError"][1] == 409
    assert all(400 <= status < 600 for _, status, _ in rows.values())


def test_the_model_failing_is_not_blamed_on_the_client() -> None:
    from holodeck.llm.errors import ProviderError
    from holodeck.server._errors import from_holodeck_error
    from holodeck.sessions import SessionBusy

    unusable = from_holodeck_error(ModelOutputError("the model's output was unusable"))
    assert (unusable.status, unusable.kind) == (502, "model_error")
    provider = from_holodeck_error(ProviderError("openai", "gpt-4o", "rate limited", "wait"))
    assert (provider.status, provider.kind) == (502, "model_error")
    busy = from_holodeck_error(SessionBusy("answering"))
    assert (busy.status, busy.headers) == (409, {"Retry-After": "1"})
    damaged = from_holodeck_error(SessionError("damaged"))
    assert (damaged.status, damaged.kind) == (500, "session_damaged")
    assert SessionError("damaged").exit_code == EXIT_EXECUTION  # the same fault on the CLI
    assert meaning_of(HoloDeckError("x", exit_code=EXIT_CONFIG)).exit_code == EXIT_CONFIG


def test_errors_module_is_the_lowest_layer() -> None:
    tree = ast.parse((SRC / "errors.py").read_text(encoding="utf-8"))
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert not [name for name in imported if name.startswith("holodeck")]


def test_message_hint_and_exit_code() -> None:
    error = ConfigurationError("agent.yaml: no model", hint="add a `model:` block")
    assert error.exit_code == EXIT_CONFIG
    assert str(error) == "agent.yaml: no model (add a `model:` block)"
    assert error.render() == "error: agent.yaml: no model\nhint: add a `model:` block"
    assert ExecutionError("boom").render() == "error: boom"
    assert str(ExecutionError("boom")) == "boom"
    assert ConfigurationError("x", exit_code=7).exit_code == 7
    assert ConfigurationError.exit_code == EXIT_CONFIG  # the override is per instance


def test_provider_errors_keep_their_one_line_form() -> None:
    from holodeck.llm.errors import ProviderError

    error = ProviderError("openai", "gpt-4o", "the API key was refused (401/403)", "Check it")
    assert str(error) == "openai/gpt-4o: the API key was refused (401/403). Check it"
    assert error.hint == "Check it"
    assert error.exit_code == EXIT_EXECUTION


def test_spec_errors_render_every_diagnostic() -> None:
    from holodeck.spec.diagnostics import Diagnostic, SpecError

    error = SpecError([Diagnostic("first", Path("a.yaml"), 1), Diagnostic("second", hint="fix")])
    assert error.exit_code == EXIT_CONFIG
    assert error.render().splitlines() == [
        "a.yaml:1: error: first",
        "<input>: error: second (fix)",
    ]


# --- the command line ------------------------------------------------------------------


def holodeck(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holodeck", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_validate_a_missing_file(tmp_path: Path) -> None:
    done = holodeck("validate", str(tmp_path / "nope.yaml"))
    assert done.returncode == EXIT_CONFIG
    assert "error: no such file or directory" in done.stderr
    assert "holodeck init NAME" in done.stderr  # the hint
    assert "Traceback" not in done.stderr


def test_pack_a_missing_directory(tmp_path: Path) -> None:
    done = holodeck("pack", str(tmp_path / "nope"))
    assert done.returncode == EXIT_CONFIG
    (line,) = done.stderr.splitlines()
    assert "error: image directory does not exist" in line
    assert "(pass a directory that contains config.yaml)" in line
    assert done.stdout == ""


def test_pack_to_an_unwritable_place_is_an_execution_error(tmp_path: Path) -> None:
    image = tmp_path / "image"
    image.mkdir()
    (image / "config.yaml").write_text("spec_version: 1\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    target = tmp_path / "a-file" / "image.tar.gz"
    code, _, err = invoke("pack", str(image), "-o", str(target))
    assert code == EXIT_EXECUTION
    message, hint = err.splitlines()
    assert message.startswith(f"error: cannot write {target}: ")
    assert hint.startswith("hint: ")


def test_init_into_an_existing_project(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "notes.txt").write_text("mine", encoding="utf-8")
    done = holodeck("init", "demo", cwd=tmp_path)
    assert done.returncode == EXIT_CONFIG
    assert done.stderr.splitlines() == [
        "error: demo already exists and is not empty",
        "hint: choose another NAME, or pass --force to overwrite the template's files "
        "(your other files are kept)",
    ]
    assert done.stdout == ""


@pytest.mark.parametrize("command", ["test", "chat"])
def test_a_bad_model_option(command: str, write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT})
    code, out, err = invoke(command, str(root), "--model", "gpt4")
    assert code == EXIT_CONFIG
    assert err.splitlines() == [
        "error: --model 'gpt4' is not a model",
        "hint: use `test` or `provider/name`, e.g. openai/gpt-4o-mini, "
        "google/gemini-2.5-flash, groq/llama-3.3-70b-versatile",
    ]
    assert out == ""


def test_debug_shows_the_traceback_of_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "notes.txt").write_text("mine", encoding="utf-8")
    done = holodeck("--debug", "init", "demo", cwd=tmp_path)
    assert done.returncode == EXIT_CONFIG
    assert "Traceback (most recent call last)" in done.stderr
    assert "ProjectExistsError" in done.stderr
    assert done.stderr.rstrip().endswith("(your other files are kept)")  # the hint, last


RAISE_UNEXPECTED = """
import sys
import holodeck.config.loader
from holodeck.cli.main import main

def explode(*args, **kwargs):
    raise RuntimeError("disk on fire")

holodeck.config.loader.load_agent = explode
main(sys.argv[1:])
"""


def test_unexpected_errors_are_one_line_unless_debug(write: Write) -> None:
    root = str(write({"agent.yaml": MINIMAL_AGENT}))
    quiet = subprocess.run(
        [sys.executable, "-c", RAISE_UNEXPECTED, "validate", root],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert quiet.returncode == EXIT_EXECUTION
    assert quiet.stderr.splitlines() == [
        "error: RuntimeError: disk on fire",
        "(run with --debug for the traceback)",
    ]
    loud = subprocess.run(
        [sys.executable, "-c", RAISE_UNEXPECTED, "--debug", "validate", root],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loud.returncode != 0
    assert "Traceback (most recent call last)" in loud.stderr
    assert "RuntimeError: disk on fire" in loud.stderr


def test_the_runtime_guides_table_is_the_errors_table() -> None:
    text = (SRC.parent.parent / "docs" / "runtime.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (\d) \| (\d{3}) \| `(\w+)` \|", text, flags=re.M)
    documented = {name: (int(code), int(status), kind) for name, code, status, kind in rows}
    table = {
        cls.__name__: (m.exit_code, m.status, m.kind)
        for cls, m in MEANINGS.items()
        if cls not in (HoloDeckError, InputRefused)
    }
    assert documented == table
