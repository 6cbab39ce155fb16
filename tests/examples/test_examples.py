"""The examples load, the broken examples fail as listed, and the docs show real files.

- `examples/<name>/` (all but `broken/`) are valid agents needing no environment variables.
- `examples/broken/<case>/` each hold a broken definition and `expected.txt`: one expected
  diagnostic per line, `<relative file>:<line or ->: <substring of the message>`.
- The single ```yaml block of each page under docs/ is byte-for-byte a file under
  docs/examples/, and those files load.

"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from holodeck.cli.main import cli
from holodeck.config.credentials import resolve_model
from holodeck.config.loader import load_agent
from holodeck.config.settings import load_settings
from holodeck.spec import SpecError
from holodeck.spec.diagnostics import Diagnostic
from holodeck.spec.models.model_settings import ModelSettings

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BROKEN = EXAMPLES / "broken"
DOCS = REPO / "docs"
DOC_EXAMPLES = DOCS / "examples"

GOOD = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "broken")
CASES = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())

# Variables the broken cases must not find set.
UNSET = (
    "HOLODECK_BROKEN_EXAMPLE_KEY",
    "HOLODECK_BROKEN_EXAMPLE_TOKEN",
    "HOLODECK_BROKEN_EXAMPLE_REGION",
)
# Variables the documentation's examples read.
DOC_VARS = {
    "SUPPORT_API_KEY": "support-dev-key",
    "LIBRARY_API_TOKEN": "library-dev-token",
    "TEAM_ANTHROPIC_KEY": "sk-ant-dev-only",
    "HOLODECK_SERVICE_KEY": "service-dev-key",
}
OTHER_VARS = (
    "MCP_LOG_LEVEL",
    "GPU_BOX_TOKEN",
    "KB_DATABASE_URL",
    "SESSIONS_REDIS_URL",
    "OLLAMA_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
)


@pytest.fixture(autouse=True)
def environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOLODECK_HOME and none of the variables the examples mention."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOLODECK_HOME", str(home))
    for name in (*UNSET, *DOC_VARS, *OTHER_VARS):
        monkeypatch.delenv(name, raising=False)
    return home


def validate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["validate", *args])


def diagnostics_of(path: Path, **kwargs: Any) -> list[Diagnostic]:
    with pytest.raises(SpecError) as caught:
        load_agent(path, **kwargs)
    return caught.value.diagnostics


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return root


# --------------------------------------------------------------------------
# examples/<name>: valid, no warnings, no environment needed
# --------------------------------------------------------------------------


def test_there_are_examples_and_broken_cases() -> None:
    assert {"weather", "support-image", "research"} <= set(GOOD)
    assert len(CASES) >= 10


@pytest.mark.parametrize("name", GOOD)
def test_example_loads_without_errors_or_warnings(name: str, environment: Path) -> None:
    # only HOLODECK_HOME is visible: the example needs no other variable
    spec = load_agent(EXAMPLES / name, strict=True, environ={"HOLODECK_HOME": str(environment)})
    assert spec.warnings == ()
    assert spec.test_cases, "every example carries test cases"


@pytest.mark.parametrize("name", GOOD)
def test_example_passes_holodeck_validate(name: str) -> None:
    # with the keys its model needs set, as `validate --strict` wants them
    keys = {"OPENAI_API_KEY": "sk-set", "ANTHROPIC_API_KEY": "sk-set"}
    result = CliRunner().invoke(cli, ["validate", "--strict", str(EXAMPLES / name)], env=keys)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    assert result.output.startswith("OK ")


def test_weather_example_shape() -> None:
    spec = load_agent(EXAMPLES / "weather")
    assert spec.format == "agent.yaml"
    assert {t.type for t in spec.tools} == {"function"}
    assert spec.evaluations is not None
    for case in spec.test_cases:
        assert case.ground_truth and case.expected_tools


def test_weather_tool_is_an_offline_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # leave examples/ untouched
    path = EXAMPLES / "weather" / "tools" / "weather.py"
    module_spec = importlib.util.spec_from_file_location("example_weather_tool", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    assert module.get_weather("Lisbon") == {
        "city": "Lisbon",
        "temperature": "21 °C",
        "conditions": "sunny",
    }
    assert module.get_weather("Tokyo", "fahrenheit")["temperature"] == "77 °F"
    assert module.get_forecast("Oslo")["conditions"] == "rain"
    assert "error" in module.get_weather("Atlantis")
    spec = load_agent(EXAMPLES / "weather")
    truths = " ".join(c.ground_truth or "" for c in spec.test_cases)
    for answer in ("21 °C", "77 °F", "9 °C"):
        assert answer in truths


def test_support_image_shape() -> None:
    spec = load_agent(EXAMPLES / "support-image")
    assert spec.format == "image"
    assert spec.instructions_file is not None and spec.instructions_file.name == "AGENTS.md"
    tools = {t.name: t for t in spec.tools}
    # two public functions in orders.py, one in shipping_eta.py
    assert set(tools) == {"orders_status", "orders_history", "shipping_eta"}
    assert {tools["orders_status"].file, tools["shipping_eta"].file} == {
        "tools/python/orders.py",
        "tools/python/shipping_eta.py",
    }
    assert [s.name for s in spec.skills] == ["refund-requests"]
    assert list(spec.subagents) == ["billing"]
    assert spec.subagents["billing"].tool_names == ["invoices"]
    expected = {name for case in spec.test_cases for name in case.expected_tools or []}
    assert expected <= {*tools, "billing"}


def test_research_example_shape() -> None:
    spec = load_agent(EXAMPLES / "research")
    assert {t.type for t in spec.tools} == {"prompt", "vectorstore", "agent"}
    data = EXAMPLES / "research" / "data"
    assert {p.suffix for p in data.iterdir()} == {".md", ".csv", ".json"}
    assert [s.name for s in spec.skills] == ["literature-review"]
    assert spec.subagents["critic"].format == "image"


# --------------------------------------------------------------------------
# examples/broken/<case>: every expected diagnostic, at once
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    file: str
    line: int | None
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line or '-'}: {self.text}"


_EXPECTED_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+|-): (?P<text>.+)$")


def expected_of(case: str) -> list[Expected]:
    out = []
    for raw in (BROKEN / case / "expected.txt").read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        match = _EXPECTED_LINE.match(raw)
        assert match, f"{case}/expected.txt: bad line {raw!r}"
        line = match["line"]
        out.append(Expected(match["file"], None if line == "-" else int(line), match["text"]))
    assert out, f"{case}/expected.txt lists nothing"
    return out


def _matches(expected: Expected, diagnostic: Diagnostic, root: Path) -> bool:
    if diagnostic.file is None:
        return False
    same_file = Path(diagnostic.file).resolve() == (root / expected.file).resolve()
    return same_file and diagnostic.line == expected.line and expected.text in diagnostic.message


def _cases() -> list[Any]:
    return [case for case in CASES]


def test_every_broken_case_has_expectations() -> None:
    for case in CASES:
        expected_of(case)
    listed = re.findall(
        r"^\| `([^`]+)` \|", (BROKEN / "README.md").read_text(encoding="utf-8"), re.M
    )
    assert sorted(listed) == CASES, "examples/broken/README.md lists every case"


@pytest.mark.parametrize("case", _cases())
def test_broken_case_reports_every_expected_diagnostic(case: str) -> None:
    root = BROKEN / case
    diagnostics = diagnostics_of(root)
    missing = [
        str(e) for e in expected_of(case) if not any(_matches(e, d, root) for d in diagnostics)
    ]
    got = "\n".join(d.render() for d in diagnostics)
    assert not missing, f"missing: {missing}\ngot:\n{got}"


@pytest.mark.parametrize("case", _cases())
def test_broken_case_fails_holodeck_validate(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from inside the case, as a user would: files are shown relative to it."""
    monkeypatch.chdir(BROKEN / case)
    result = validate(".")
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    for expected in expected_of(case):
        where = expected.file
        where += f":{expected.line}:" if expected.line is not None else ": "
        assert any(line.startswith(where) and expected.text in line for line in lines), (
            f"{expected} not in output:\n{result.output}"
        )


# --------------------------------------------------------------------------
# docs: the yaml blocks are the example files, and they load
# --------------------------------------------------------------------------


def fenced(doc: str, language: str) -> list[str]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize(
    ("doc", "example"),
    [
        ("agent-yaml.md", "agent-yaml/agent.yaml"),
        ("agent-image.md", "agent-image/config.yaml"),
        ("configuration.md", "config/config.yaml"),
    ],
)
def test_doc_yaml_block_is_the_example_file(doc: str, example: str) -> None:
    blocks = fenced(doc, "yaml")
    assert len(blocks) == 1, f"{doc} must hold exactly one ```yaml block"
    assert blocks[0].encode("utf-8") == (DOC_EXAMPLES / example).read_bytes()


@pytest.mark.parametrize("doc", ["agent-yaml.md", "agent-image.md", "configuration.md"])
def test_doc_links_point_at_existing_files(doc: str) -> None:
    text = (DOCS / doc).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (DOCS / target).exists(), f"{doc} links to missing {target}"


def test_agent_yaml_doc_example_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPPORT_API_KEY", DOC_VARS["SUPPORT_API_KEY"])
    spec = load_agent(DOC_EXAMPLES / "agent-yaml", strict=True)
    assert spec.warnings == ()
    assert {t.type for t in spec.tools} == {"function", "prompt", "vectorstore", "mcp", "agent"}
    assert [s.name for s in spec.skills] == ["returns-policy"]
    assert list(spec.subagents) == ["escalate"]
    assert spec.evaluations is not None
    assert {m.type for m in spec.evaluations.metrics} == {"standard", "geval", "rag", "code"}
    assert spec.memory.store == "sqlite"
    assert spec.logging.retention_days == 14
    assert spec.deployment is not None and spec.deployment.port == 8080
    assert DOC_VARS["SUPPORT_API_KEY"] not in repr(spec)
    mcp = next(t for t in spec.tools if t.type == "mcp")
    assert mcp.env == {"LOG_LEVEL": "warning"}  # ${MCP_LOG_LEVEL:-warning}, unset


def test_agent_yaml_doc_example_needs_its_variable() -> None:
    (found,) = diagnostics_of(DOC_EXAMPLES / "agent-yaml")
    assert "SUPPORT_API_KEY" in found.message
    assert found.path == ("deployment", "auth", "api_keys", 0)


def test_agent_yaml_doc_validate_output_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = [b for b in fenced("agent-yaml.md", "text") if b.startswith("$ holodeck")]
    command, *expected = block.splitlines()
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(cli, command.split()[2:])
    assert result.exit_code == 2
    assert result.output.splitlines() == expected


def test_agent_image_doc_example_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIBRARY_API_TOKEN", DOC_VARS["LIBRARY_API_TOKEN"])
    spec = load_agent(DOC_EXAMPLES / "agent-image", strict=True)
    assert spec.warnings == ()
    # the naming table of docs/agent-image.md
    assert set(spec.tool_names) == {
        "arxiv_search",
        "notes_save",
        "notes_show",
        "citations",
        "library",
        "workspace",
    }
    assert [b.name for b in spec.builtins] == ["web_search", "web_fetch"]
    assert list(spec.subagents) == ["critic"]
    assert spec.skills[0].resources == ("references/checklist.md",)
    assert spec.params == {"max_results": 10, "prefer_recent": True}
    assert spec.model is not None and spec.model.provider == "openai"
    library = next(t for t in spec.tools if t.name == "library")
    assert library.type == "mcp"
    assert library.headers["Authorization"].get_secret_value() == "Bearer library-dev-token"


def test_agent_image_doc_example_with_and_without_env() -> None:
    (found,) = diagnostics_of(DOC_EXAMPLES / "agent-image")
    assert "LIBRARY_API_TOKEN" in found.message
    assert found.file is not None and found.file.name == "library.yaml"
    spec = load_agent(DOC_EXAMPLES / "agent-image", expand_env=False)
    library = next(t for t in spec.tools if t.name == "library")
    assert library.type == "mcp"
    assert library.headers["Authorization"].get_secret_value() == "Bearer ${LIBRARY_API_TOKEN}"
    assert validate(str(DOC_EXAMPLES / "agent-image")).exit_code == 2
    assert validate("--no-env", str(DOC_EXAMPLES / "agent-image")).exit_code == 0


def test_agent_image_doc_strict_output_is_real(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The doc's sample ran on a copy of the example in scout/ with two keys added."""
    scout = tmp_path / "scout"
    shutil.copytree(DOC_EXAMPLES / "agent-image", scout)
    config = scout / "config.yaml"
    lines = config.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  reasoning_effort:"))
    lines.insert(at + 1, "  fallback_models: []\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("spec_version:"))
    lines.insert(at + 1, "autosave: {every: 5}\n")
    config.write_text("".join(lines), encoding="utf-8")
    (block,) = [b for b in fenced("agent-image.md", "text") if "--strict scout" in b]
    runs: list[tuple[list[str], list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ holodeck "):
            runs.append((line.split()[2:], []))
        else:
            runs[-1][1].append(line)
    assert [command[-1] for command, _ in runs] == ["scout", "scout"]
    monkeypatch.chdir(tmp_path)
    for command, expected in runs:
        assert CliRunner().invoke(cli, command).output.splitlines() == expected


def test_configuration_doc_example_loads(environment: Path) -> None:
    env = {"HOLODECK_HOME": str(DOC_EXAMPLES / "config"), **DOC_VARS}
    loaded = load_settings(None, env)
    assert loaded.files == (DOC_EXAMPLES / "config" / "config.yaml",)
    settings = loaded.settings
    assert settings.provider_type("local-llama") == "ollama"
    assert settings.provider_type("gpu-box") == "openai-compatible"
    assert settings.provider_type("anthropic") == "anthropic"
    assert set(settings.vectorstores) == {"knowledge-base", "cache"}
    assert settings.deployment is not None and settings.deployment.port == 8080
    assert settings.memory is not None and settings.memory.store == "redis"
    for secret in DOC_VARS.values():
        assert secret not in repr(settings)
    anthropic_key = settings.providers["anthropic"].api_key
    assert anthropic_key is not None
    assert anthropic_key.get_secret_value() == DOC_VARS["TEAM_ANTHROPIC_KEY"]


def test_configuration_doc_example_needs_its_variables() -> None:
    with pytest.raises(SpecError) as caught:
        load_settings(None, {"HOLODECK_HOME": str(DOC_EXAMPLES / "config")})
    assert sorted((d.line, d.message.split("`")[1]) for d in caught.value.diagnostics) == [
        (6, "TEAM_ANTHROPIC_KEY"),
        (34, "HOLODECK_SERVICE_KEY"),
    ]


def test_configuration_doc_project_agent_uses_named_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in DOC_VARS.items():
        monkeypatch.setenv(name, value)
    spec = load_agent(DOC_EXAMPLES / "config")
    assert spec.model is not None and spec.model.provider == "local-llama"
    (tool,) = spec.tools
    assert tool.type == "vectorstore" and tool.database == "knowledge-base"
    assert spec.memory.max_messages == 40  # the project config's memory block
    settings = load_settings(DOC_EXAMPLES / "config").settings
    resolved = resolve_model(spec.model, settings, {})
    assert resolved.endpoint == "http://localhost:11434/v1"
    assert resolved.sources["endpoint"] == "config.yaml providers.local-llama"
    # a named entry is the agent's choice: its fields come before the environment
    from_env = resolve_model(spec.model, settings, {"OLLAMA_BASE_URL": "http://env:11434/v1"})
    assert from_env.endpoint == "http://localhost:11434/v1"
    gpu = ModelSettings(provider="gpu-box", name="qwen")
    keyed = resolve_model(gpu, settings, {"OPENAI_API_KEY": "sk-personal"})
    assert keyed.api_key is not None and keyed.api_key.get_secret_value() != "sk-personal"
    own = ModelSettings(provider="local-llama", name="llama3.2", endpoint="http://own/v1")
    assert resolve_model(own, settings, {"OLLAMA_BASE_URL": "http://env"}).endpoint == (
        "http://own/v1"
    )


def test_unknown_image_keys_warn_unless_strict(tmp_path: Path) -> None:
    root = write(
        tmp_path / "image",
        {"config.yaml": "spec_version: 1\nautosave: {}\nllm:\n  model: openai/gpt-4o\n"},
    )
    spec = load_agent(root)
    (warning,) = spec.warnings
    assert warning.message == "ignored: `autosave` is not part of spec_version 1"
    assert warning.line == 2
    (error,) = diagnostics_of(root, strict=True)
    assert error.severity == "error" and error.line == 2
    assert validate(str(root)).exit_code == 0
    assert validate("--strict", str(root)).exit_code == 2


# --------------------------------------------------------------------------
# Regressions: defects found while writing the examples, now fixed
# --------------------------------------------------------------------------


def test_builtin_api_key_is_never_echoed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOLODECK_EXAMPLE_SEARCH_KEY", "pplx-very-secret-value")
    root = write(
        tmp_path / "image",
        {
            "config.yaml": """
            spec_version: 1
            llm:
              model: openai/gpt-4o
            tools:
              builtins:
                - name: web_serch
                  search_provider: perplexity
                  api_key: ${HOLODECK_EXAMPLE_SEARCH_KEY}
            """
        },
    )
    rendered = "\n".join(d.render() for d in diagnostics_of(root))
    assert "web_serch" in rendered
    assert "pplx-very-secret-value" not in rendered


def test_tool_without_type_names_the_missing_field(tmp_path: Path) -> None:
    root = write(
        tmp_path / "agent",
        {
            "agent.yaml": """
            name: demo
            model: {provider: openai, name: gpt-4o}
            instructions: {inline: hi}
            tools:
              - name: lookup
                file: tools.py
                function: lookup
            """
        },
    )
    (found,) = diagnostics_of(root)
    assert "discriminator" not in found.message
    assert "type" in f"{found.field} {found.message}"


def test_quoted_spec_version_is_explained(tmp_path: Path) -> None:
    root = write(tmp_path / "image", {"config.yaml": 'spec_version: "1"\n'})
    try:
        load_agent(root)
    except SpecError as exc:
        assert all("`1` is not allowed; expected 1" not in d.message for d in exc.diagnostics)
    # accepting "1" is a fix too


def test_empty_llm_block_needs_a_model(tmp_path: Path) -> None:
    root = write(tmp_path / "image", {"config.yaml": "spec_version: 1\nllm:\n"})
    diagnostics = diagnostics_of(root)
    assert any(d.path[:1] == ("llm",) for d in diagnostics)


@pytest.mark.parametrize(
    ("definition", "path"),
    [
        ("instructions: {file: instructions}\n", ("instructions", "file")),
        (
            "instructions: {inline: hi}\n"
            "tools:\n  - {type: prompt, name: p, description: d, file: instructions}\n",
            ("tools", 0, "file"),
        ),
    ],
    ids=["instructions-file", "prompt-file"],
)
def test_file_fields_reject_directories(
    tmp_path: Path, definition: str, path: tuple[str | int, ...]
) -> None:
    root = write(
        tmp_path / "agent",
        {
            "agent.yaml": "name: demo\nmodel: {provider: openai, name: gpt-4o}\n" + definition,
            "instructions/system-prompt.md": "You are helpful.\n",
        },
    )
    assert any(d.path == path for d in diagnostics_of(root))


@pytest.mark.parametrize(
    ("case", "word"),
    [
        ("  - input: hi\n    expected_tools: [no_such_tool]\n", "no_such_tool"),
        ("  - input: hi\n    files: [{path: missing.png, type: image}]\n", "missing.png"),
        (
            "  - input: hi\n    evaluations:\n"
            "      - {type: code, file: score.py, function: score}\n",
            "score.py",
        ),
    ],
    ids=["expected-tools", "files", "code-metric"],
)
def test_image_test_cases_are_checked(tmp_path: Path, case: str, word: str) -> None:
    root = write(
        tmp_path / "image",
        {
            "config.yaml": "spec_version: 1\nllm:\n  model: openai/gpt-4o\n",
            "tests/cases.yaml": "test_cases:\n" + case,
        },
    )
    diagnostics = diagnostics_of(root)
    assert any(word in d.message for d in diagnostics)


@pytest.mark.parametrize("fmt", ["agent.yaml", "image"])
def test_duplicate_test_case_name_points_at_the_repeat(tmp_path: Path, fmt: str) -> None:
    cases = "test_cases:\n  - {name: same, input: a}\n  - {name: same, input: b}\n"
    if fmt == "agent.yaml":
        files = {
            "agent.yaml": "name: demo\nmodel: {provider: openai, name: gpt-4o}\n"
            "instructions: {inline: hi}\n" + cases
        }
        where = ("agent.yaml", 6)
    else:
        files = {"config.yaml": "spec_version: 1\n", "tests/cases.yaml": cases}
        where = ("cases.yaml", 3)
    (found,) = diagnostics_of(write(tmp_path / fmt, files))
    assert found.file is not None
    assert (found.file.name, found.line) == where


def test_inline_database_error_is_not_doubled(tmp_path: Path) -> None:
    root = write(
        tmp_path / "agent",
        {
            "agent.yaml": """
            name: demo
            model: {provider: openai, name: gpt-4o}
            instructions: {inline: hi}
            tools:
              - type: vectorstore
                name: docs
                description: Search the docs.
                source: .
                database: {provider: mysql, connection_string: "mysql://localhost/db"}
            """
        },
    )
    (found,) = diagnostics_of(root)
    assert found.path == ("tools", 0, "database", "provider")


@pytest.mark.parametrize(
    "config",
    [
        "spec_version: 1\nstandard: true\nllm:\n  model: openai/gpt-4o\n",
        "spec_version: 1\nllm:\n  model: openai/gpt-4o\n  standard: true\n",
        "spec_version: 1\nllm:\n  model: openai/gpt-4o\n  standard: true\n  temp: 1\n",
    ],
    ids=["top-level", "in-llm", "in-llm-with-another"],
)
def test_unknown_key_named_like_a_metric_type(tmp_path: Path, config: str) -> None:
    spec = load_agent(write(tmp_path / "image", {"config.yaml": config}))
    assert spec.model is not None and spec.model.name == "gpt-4o"
    assert {str(w.path[-1]) for w in spec.warnings} <= {"standard", "temp"}


def test_strict_applies_to_agent_yaml_skills(tmp_path: Path) -> None:
    root = write(
        tmp_path / "agent",
        {
            "agent.yaml": "name: demo\nmodel: {provider: openai, name: gpt-4o}\n"
            "instructions: {inline: hi}\nskills: [skills/helper]\n",
            "skills/helper/SKILL.md": "---\nname: helper\ndescription: Helps.\nversoin: 2\n---\n",
        },
    )
    (found,) = diagnostics_of(root, strict=True)
    assert found.line == 4 and "versoin" in found.message


def test_project_provider_entry_keeps_global_key(tmp_path: Path) -> None:
    """credentials.py promises field-by-field precedence: project > global."""
    home = write(tmp_path / "home", {"config.yaml": "providers:\n  openai:\n    api_key: sk-g\n"})
    project = write(
        tmp_path / "project",
        {"config.yaml": "providers:\n  openai:\n    endpoint: http://proxy.internal/v1\n"},
    )
    settings = load_settings(project, {"HOLODECK_HOME": str(home)}).settings
    resolved = resolve_model(ModelSettings(provider="openai", name="gpt-4o"), settings, {})
    assert resolved.endpoint == "http://proxy.internal/v1"
    assert resolved.api_key is not None and resolved.api_key.get_secret_value() == "sk-g"
