"""`holodeck init`: every template, provider and format yields a valid, working agent."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_CONFIG
from holodeck.scaffold import (
    FORMATS,
    IMAGE_SKILLS,
    PROVIDERS,
    TEMPLATES,
    ProjectExistsError,
    ScaffoldError,
    create_project,
    render,
)
from holodeck.spec.models.evaluations import AI_METRICS, NLP_METRICS, StandardMetric
from holodeck.spec.models.tools import FunctionTool, VectorstoreTool
from holodeck.spec.yaml.source import read_yaml

COMBINATIONS = [(t, p, f) for t in TEMPLATES for p in PROVIDERS for f in FORMATS]
FUNCTION_TOOLS = {
    "conversational": "convert_units",
    "research": "compute_statistics",
    "customer-support": "check_order_status",
}
EXPECTED_MODELS = {
    "openai": ("gpt-4o-mini", None),
    "azure_openai": ("gpt-4o-mini", None),
    "anthropic": ("claude-sonnet-4-5", None),
    "google": ("gemini-2.5-flash", None),
    "ollama": ("llama3.2", "http://localhost:11434/v1"),
}


def make(
    tmp_path: Path,
    template: str = "conversational",
    provider: str = "openai",
    fmt: str = "agent-yaml",
) -> Path:
    root = tmp_path / "my-agent"
    create_project("my-agent", root, template, provider, fmt, force=False)
    return root


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def load_function(path: Path, name: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location(f"generated_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function: Callable[..., Any] = getattr(module, name)
    return function


# --- every combination is a valid agent --------------------------------------------


@pytest.mark.parametrize(("template", "provider", "fmt"), COMBINATIONS)
def test_every_combination_validates_without_warnings(
    tmp_path: Path, template: str, provider: str, fmt: str
) -> None:
    root = make(tmp_path, template, provider, fmt)
    spec = load_agent(root, strict=True)
    assert spec.warnings == ()
    assert spec.name == "my-agent"
    assert spec.format == ("agent.yaml" if fmt == "agent-yaml" else "image")
    assert spec.instructions and "my-agent" in spec.instructions
    assert load_agent(root, expand_env=False).warnings == ()
    for path in root.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize(("template", "provider", "fmt"), COMBINATIONS)
def test_expected_tools_name_tools_that_exist(
    tmp_path: Path, template: str, provider: str, fmt: str
) -> None:
    spec = load_agent(make(tmp_path, template, provider, fmt))
    function_tool = FUNCTION_TOOLS[template]
    assert function_tool in spec.tool_names
    using_function = 0
    for case in spec.test_cases:
        assert case.name and case.input and case.ground_truth
        for tool in case.expected_tools or []:
            assert tool in spec.tool_names, (case.name, tool)
        using_function += function_tool in (case.expected_tools or [])
    assert using_function >= 3


@pytest.mark.parametrize("template", TEMPLATES)
def test_agent_yaml_project_layout_and_contents(tmp_path: Path, template: str) -> None:
    root = make(tmp_path, template)
    for directory in ("instructions", "data", "tools", "tests"):
        assert any((root / directory).iterdir()), directory
    assert (root / "instructions" / "system-prompt.md").is_file()
    spec = load_agent(root)
    assert spec.instructions_file == (root / "instructions" / "system-prompt.md").resolve()
    function = next(t for t in spec.tools if isinstance(t, FunctionTool))
    assert (function.name, function.file) == (
        FUNCTION_TOOLS[template],
        f"tools/{FUNCTION_TOOLS[template]}.py",
    )
    vectorstores = [t for t in spec.tools if isinstance(t, VectorstoreTool)]
    if template == "conversational":
        assert vectorstores == []
    else:
        assert vectorstores
        for tool in vectorstores:
            assert tool.description
            assert tool.source.startswith("data")
            assert spec.resolve(tool.source).exists()
    assert spec.evaluations is not None
    metrics = [m for m in spec.evaluations.metrics if isinstance(m, StandardMetric)]
    assert any(m.metric in NLP_METRICS and m.threshold is not None for m in metrics)
    assert any(m.metric in AI_METRICS and m.threshold is not None for m in metrics)
    assert len(spec.test_cases) >= 3


def test_customer_support_ships_products_and_faqs(tmp_path: Path) -> None:
    root = make(tmp_path, "customer-support")
    header = (root / "data" / "products.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",")[:2] == ["sku", "name"]
    assert "return" in (root / "data" / "faqs.md").read_text(encoding="utf-8").lower()


@pytest.mark.parametrize("template", TEMPLATES)
def test_image_is_complete(tmp_path: Path, template: str) -> None:
    root = make(tmp_path, template, "anthropic", "image")
    config = read_yaml(root / "config.yaml").data
    assert config["spec_version"] == 1
    assert config["llm"]["model"] == "anthropic/claude-sonnet-4-5"
    assert (root / "AGENTS.md").is_file()
    assert (root / "tests" / "cases.yaml").is_file()
    tool_file = root / "tools" / "python" / f"{FUNCTION_TOOLS[template]}.py"
    assert tool_file.is_file()
    spec = load_agent(root)
    assert spec.instructions_file == (root / "AGENTS.md").resolve()
    assert [s.name for s in spec.skills] == [IMAGE_SKILLS[template]]
    skill = spec.skills[0]
    assert skill.description and skill.body
    assert skill.resources and all(r.startswith("references/") for r in skill.resources)
    assert spec.tool_names == [FUNCTION_TOOLS[template]]
    assert spec.evaluations is not None and len(spec.test_cases) >= 3


@pytest.mark.parametrize(("template", "fmt"), [(t, f) for t in TEMPLATES for f in FORMATS])
def test_yaml_files_explain_their_fields(tmp_path: Path, template: str, fmt: str) -> None:
    root = make(tmp_path, template, fmt=fmt)
    yaml_files = [*root.rglob("*.yaml"), *root.rglob("SKILL.md")]
    assert yaml_files
    for path in yaml_files:
        comments = [line for line in path.read_text(encoding="utf-8").splitlines() if "# " in line]
        assert len(comments) >= 2, path


# --- providers ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_provider_sets_the_model(tmp_path: Path, provider: str, fmt: str) -> None:
    spec = load_agent(make(tmp_path, "research", provider, fmt))
    model_name, endpoint = EXPECTED_MODELS[provider]
    assert spec.model is not None
    assert (spec.model.provider, spec.model.name) == (provider, model_name)
    if fmt == "agent-yaml":
        assert spec.model.endpoint == endpoint
    else:  # an image's llm block has no endpoint; it comes from the environment or config
        assert spec.model.endpoint is None


def test_azure_endpoint_comes_from_the_environment(tmp_path: Path) -> None:
    from holodeck.config.credentials import resolve_model
    from holodeck.spec.models.settings import Settings

    root = make(tmp_path, "conversational", "azure_openai")
    spec = load_agent(root)
    assert spec.model is not None and spec.model.endpoint is None
    url = "https://contoso.openai.azure.com/"
    resolved = resolve_model(spec.model, Settings(), {"AZURE_OPENAI_ENDPOINT": url})
    assert resolved.endpoint == url


@pytest.mark.parametrize("provider", ["openai", "azure_openai", "anthropic"])
def test_hosted_providers_need_no_endpoint_line(tmp_path: Path, provider: str) -> None:
    text = (make(tmp_path, "conversational", provider) / "agent.yaml").read_text("utf-8")
    assert "endpoint:" not in text
    assert "  temperature:" in text  # the model block's other settings are still there


# --- the sample tools work ----------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_units_runs(tmp_path: Path, fmt: str) -> None:
    root = make(tmp_path, "conversational", fmt=fmt)
    folder = root / "tools" if fmt == "agent-yaml" else root / "tools" / "python"
    convert = load_function(folder / "convert_units.py", "convert_units")
    assert convert(12, "inches", "cm")["result"] == 30.48
    assert convert(72, "°F", "celsius")["result"] == pytest.approx(22.2222)
    assert convert(5, "km", "miles")["result"] == pytest.approx(3.1069)
    assert convert(0, "K", "F")["text"] == "0 K = -459.67 °F"
    assert "error" in convert(1, "kg", "m")
    assert "error" in convert(1, "parsec", "m")


@pytest.mark.parametrize("fmt", FORMATS)
def test_compute_statistics_runs(tmp_path: Path, fmt: str) -> None:
    root = make(tmp_path, "research", fmt=fmt)
    folder = root / "tools" if fmt == "agent-yaml" else root / "tools" / "python"
    stats = load_function(folder / "compute_statistics.py", "compute_statistics")
    result = stats([29.1, 30.4, 31.2, 32.3])
    assert (result["count"], result["mean"], result["median"], result["range"]) == (
        4,
        30.75,
        30.8,
        3.2,
    )
    assert stats([34, 22, 15, 7])["stdev"] == pytest.approx(11.4455)
    assert stats([5.0])["stdev"] == 0.0
    assert "error" in stats([])


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_order_status_runs(tmp_path: Path, fmt: str) -> None:
    root = make(tmp_path, "customer-support", fmt=fmt)
    folder = root / "tools" if fmt == "agent-yaml" else root / "tools" / "python"
    check = load_function(folder / "check_order_status.py", "check_order_status")
    shipped = check(" #a1001 ")
    assert shipped["found"] is True
    assert (shipped["order_id"], shipped["status"], shipped["carrier"]) == (
        "A1001",
        "shipped",
        "UPS",
    )
    assert check("A1003")["status"] == "delivered"
    assert check("A1004")["status"] == "cancelled"
    assert check("Z9999") == {
        "order_id": "Z9999",
        "found": False,
        "message": "No order Z9999 was found.",
    }
    assert "A1001" in check("hello")["message"]
    assert check("A1002") == check("A1002")  # deterministic


@pytest.mark.parametrize("template", TEMPLATES)
def test_sample_tool_is_typed_and_documented(tmp_path: Path, template: str) -> None:
    name = FUNCTION_TOOLS[template]
    function = load_function(make(tmp_path, template) / "tools" / f"{name}.py", name)
    signature = inspect.signature(function)
    assert signature.parameters
    assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values())
    assert signature.return_annotation is not inspect.Signature.empty
    doc = inspect.getdoc(function) or ""
    assert "Args:" in doc and "Returns:" in doc
    for parameter in signature.parameters:
        assert f"{parameter}:" in doc


def test_order_test_cases_agree_with_the_order_tool(tmp_path: Path) -> None:
    root = make(tmp_path, "customer-support")
    check = load_function(root / "tools" / "check_order_status.py", "check_order_status")
    cases = [c for c in load_agent(root).test_cases if c.expected_tools == ["check_order_status"]]
    assert len(cases) >= 3
    for case in cases:
        assert case.input and case.ground_truth
        found = re.search(r"[A-Z]\d{4}", case.input)
        assert found, case.input
        result = check(found.group())
        assert result["order_id"] in case.ground_truth
        for key in ("items", "estimated_delivery", "delivered_on"):
            if key in result:
                assert str(result[key]) in case.ground_truth, (case.name, key)


# --- the command ---------------------------------------------------------------------


def test_init_creates_the_project_and_prints_next_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("init", "demo")
    assert (code, err) == (0, "")
    assert (tmp_path / "demo" / "agent.yaml").is_file()
    assert "agent.yaml" in out and "tools/convert_units.py" in out
    assert "holodeck validate demo" in out
    assert "holodeck test demo --model test" in out
    assert "holodeck chat demo" in out
    assert "OPENAI_API_KEY" in out
    assert load_agent(tmp_path / "demo").name == "demo"


def test_init_with_options_and_dir(tmp_path: Path) -> None:
    parent = tmp_path / "nested" / "agents"
    code, out, _ = invoke(
        "init",
        "bot_1",
        "--template",
        "customer-support",
        "--provider",
        "ollama",
        "--format",
        "image",
        "--dir",
        str(parent),
    )
    assert code == 0
    root = parent / "bot_1"
    assert f"holodeck validate {root}" in out
    assert "ollama pull llama3.2" in out
    spec = load_agent(root)
    assert spec.format == "image"
    assert spec.model is not None and spec.model.provider == "ollama"


def test_init_refuses_a_non_empty_directory_without_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "notes.txt").write_text("mine", encoding="utf-8")
    code, out, err = invoke("init", "demo")
    assert code == EXIT_CONFIG
    assert out == ""
    message, hint = err.splitlines()
    assert message == "error: demo already exists and is not empty"
    assert hint.startswith("hint: ") and "--force" in hint
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["notes.txt"]


def test_init_accepts_an_empty_existing_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").mkdir()
    code, _, _ = invoke("init", "demo")
    assert code == 0
    assert (tmp_path / "demo" / "agent.yaml").is_file()


def test_force_overwrites_template_files_and_keeps_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("init", "demo")[0] == 0
    root = tmp_path / "demo"
    (root / "agent.yaml").write_text("broken: [", encoding="utf-8")
    (root / "notes.txt").write_text("mine", encoding="utf-8")
    (root / "data" / "extra.md").write_text("more data", encoding="utf-8")
    (root / "tools" / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    code, out, _ = invoke("init", "demo", "--force", "--template", "research")
    assert code == 0
    assert "left as they were" in out
    assert (root / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (root / "data" / "extra.md").read_text(encoding="utf-8") == "more data"
    assert (root / "tools" / "helpers.py").is_file()
    assert (root / "data" / "faq.md").is_file()  # the earlier template's files stay too
    spec = load_agent(root)
    assert "compute_statistics" in spec.tool_names


def test_force_refuses_to_mix_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("init", "demo")[0] == 0
    code, _, err = invoke("init", "demo", "--force", "--format", "image")
    assert code == EXIT_CONFIG
    assert "agent.yaml" in err and "own directory" in err
    assert not (tmp_path / "demo" / "config.yaml").exists()


def test_force_refuses_paths_blocked_by_the_users_files(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    (root / "tools" / "convert_units.py").mkdir(parents=True)
    with pytest.raises(ScaffoldError, match="a directory of that name exists"):
        create_project("demo", root, force=True)
    assert not (root / "agent.yaml").exists()  # nothing is written before the checks pass


def test_force_never_writes_through_symbolic_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "demo"
    root.mkdir()
    (root / "data").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ScaffoldError, match="symbolic link"):
        create_project("demo", root, force=True)
    assert list(outside.iterdir()) == []


def test_target_that_is_a_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").write_text("", encoding="utf-8")
    code, _, err = invoke("init", "demo", "--force")
    assert code == EXIT_CONFIG
    assert "not a directory" in err


@pytest.mark.parametrize(
    "name", ["my agent", "-agent", "_agent", "a/b", "..", "agent.v2", "ägent", "x" * 65, ""]
)
def test_invalid_names_are_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("init", "--", name)
    assert code == EXIT_CONFIG
    assert out == ""
    message, hint = err.splitlines()
    assert message == f"error: invalid agent name {name!r}"
    assert hint.startswith("hint: use letters, digits")
    assert ("--dir PARENT" in hint) == ("/" in name)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["a", "my-agent", "agent_2", "A1", "x" * 64])
def test_valid_names_are_accepted(tmp_path: Path, name: str) -> None:
    assert create_project(name, tmp_path / name)
    assert load_agent(tmp_path / name).name == name


def test_unknown_choices_are_usage_errors(tmp_path: Path) -> None:
    code, _, err = invoke("init", "demo", "--template", "nope", "--dir", str(tmp_path))
    assert code == EXIT_CONFIG
    assert "conversational" in err
    with pytest.raises(ScaffoldError, match="unknown provider"):
        create_project("demo", tmp_path / "demo", provider="gemini")


def test_library_raises_project_exists(tmp_path: Path) -> None:
    create_project("demo", tmp_path / "demo")
    with pytest.raises(ProjectExistsError):
        create_project("demo", tmp_path / "demo")


def test_help_has_examples() -> None:
    code, out, _ = invoke("init", "--help")
    assert code == 0
    assert "Examples:" in out
    assert "holodeck init my-agent" in out
    for choice in (*TEMPLATES, *PROVIDERS, *FORMATS, "--force", "--dir"):
        assert choice in out


def test_importing_the_command_is_cheap() -> None:
    code = "import sys, holodeck.cli.init; print(sorted({'pydantic', 'ruamel'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


# --- rendering ----------------------------------------------------------------------


def test_render_replaces_inline_and_whole_line_markers() -> None:
    text = "name: {{ name }}\nmodel:\n  {{ extra }}\n  temperature: 1\n  {{ none }}\nkeep {{ other }}\n"
    values = {"name": "demo", "extra": "# a comment\nendpoint: x", "none": ""}
    assert render(text, values) == (
        "name: demo\nmodel:\n  # a comment\n  endpoint: x\n  temperature: 1\nkeep {{ other }}\n"
    )


def test_render_refuses_multi_line_values_inside_a_line() -> None:
    with pytest.raises(ValueError, match="alone on its line"):
        render("a: {{ v }} b\n", {"v": "x\ny"})


def test_init_of_a_template_with_search_tools_warns_of_nothing(tmp_path: Path) -> None:
    """Search tools run (tests/llm/test_offline_runs.py runs every template offline): init
    prints no caveat about them."""
    code, out, _ = invoke("init", "shop", "--template", "customer-support", "--dir", str(tmp_path))
    assert code == 0 and "vectorstore" not in out and "cannot run" not in out


# --- the editor schema and docs/init.md ------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "init.md"
SCHEMA_LINE = "# yaml-language-server: $schema=./agent.schema.json"


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_new_agent_yaml_points_editors_at_a_schema_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str
) -> None:
    """The schema line resolves offline, to the schema of the HoloDeck that wrote it, and
    the agent still validates."""
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke("init", "demo", "--template", template)
    assert code == 0 and "agent.schema.json" in out
    agent_yaml = tmp_path / "demo" / "agent.yaml"
    first = agent_yaml.read_text(encoding="utf-8").splitlines()[0]
    assert first == SCHEMA_LINE
    target = agent_yaml.parent / first.split("$schema=", 1)[1]
    written = json.loads(target.read_text(encoding="utf-8"))
    code, printed, _ = invoke("schema")
    assert code == 0 and written == json.loads(printed)  # what `holodeck schema` writes
    document = read_yaml(agent_yaml).data
    jsonschema.validate(document, written)  # the new agent is valid by its own schema
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")  # the model's key, as --strict wants it
    code, out, err = invoke("validate", "--strict", "demo")
    assert code == 0, out + err


def test_an_image_gets_no_agent_yaml_schema(tmp_path: Path) -> None:
    root = make(tmp_path, fmt="image")
    assert not (root / "agent.schema.json").exists()
    assert "yaml-language-server" not in (root / "config.yaml").read_text(encoding="utf-8")


def sh_blocks(page: Path) -> list[list[str]]:
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```$", text, flags=re.M | re.S)
    return [[line for line in block.splitlines() if line.strip()] for block in blocks]


def test_the_init_pages_commands_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    commands = [line for block in sh_blocks(DOCS) for line in block]
    assert len(commands) >= 8
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "holodeck", command
        code, out, err = invoke(*words[1:])
        assert code == 0, f"{command}: {out}{err}"
    assert (tmp_path / "agents" / "my-agent" / "agent.yaml").is_file()
    assert load_agent(tmp_path / "researcher").format == "image"


def test_the_init_pages_tree_is_what_init_writes(tmp_path: Path) -> None:
    text = DOCS.read_text(encoding="utf-8")
    tree = re.search(r"^```\nmy-agent/\n(.*?)^```$", text, flags=re.M | re.S)
    assert tree is not None
    listed = sorted(line.split()[0] for line in tree.group(1).splitlines())
    root = make(tmp_path)
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert listed == written
