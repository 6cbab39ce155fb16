"""Messages met on real files: each says what is wrong, where, in our own words.

- a broken config.yaml (project or global) no longer hides the agent's own errors;
- union alternatives read as one sentence, never pydantic's "Input should be ...";
- problems inside an image .tar.gz name the archive's member, not the cache;
- a sub-agent's warnings show when its parent is validated.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import MINIMAL_AGENT, Write
from holodeck.cli.main import cli
from holodeck.config.loader import load_agent
from holodeck.spec import SpecError
from holodeck.spec.archives.pack import pack_image
from holodeck.spec.diagnostics import Diagnostic, Severity

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
            "expected text or a mapping with `provider`, not `5`",
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
    assert (
        found.hint is not None
        and "function, prompt, vectorstore, hierarchical_document, mcp, agent" in found.hint
    )


def test_a_case_only_near_miss_gets_a_hint(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT + "logging:\n  log_level: debug\n"})
    (found,) = diagnostics_of(root)
    assert found.hint == "did you mean `DEBUG`?"


def test_no_pydantic_phrasing_on_the_broken_examples() -> None:
    broken = Path(__file__).resolve().parents[2] / "examples" / "broken"
    for case in sorted(p for p in broken.iterdir() if p.is_dir()):
        for line in rendered(case):
            assert not any(words in line for words in PYDANTIC_WORDS), line


# --- a broken config.yaml beside the agent ---------------------------------------------

BROKEN_AGENT = MINIMAL_AGENT.replace(
    "  name: gpt-4o-mini", "  name: gpt-4o-mini\n  temprature: 0.3"
)


def test_project_config_and_agent_yaml_errors_come_out_together(write: Write) -> None:
    root = write(
        {"agent.yaml": BROKEN_AGENT, "config.yaml": "providers:\n  openai:\n    api_kye: x\n"}
    )
    lines = rendered(root)
    assert any(
        line.startswith(f"{root / 'config.yaml'}:3:5: error: providers.openai.api_kye")
        for line in lines
    ), lines
    assert any("model.temprature: unknown field" in line for line in lines), lines
    assert lines[0].startswith(str(root / "config.yaml"))  # the file read first comes first


def test_global_config_errors_come_out_with_the_agents(write: Write, isolated_home: Path) -> None:
    (isolated_home / "config.yaml").write_text("memory:\n  store: redis\n", encoding="utf-8")
    for root in (
        write({"agent.yaml": BROKEN_AGENT}),
        write({"config.yaml": "spec_version: 1\nllm: {model: 5}\n"}),
    ):
        found = diagnostics_of(root)
        files = {d.file for d in found}
        assert isolated_home / "config.yaml" in files, [d.render() for d in found]
        assert len(files) == 2, [d.render() for d in found]


def test_the_good_parts_of_a_broken_config_still_count(write: Write) -> None:
    """A custom provider whose entry has one bad field is still known to the agent:
    its model is not reported as an unknown provider on top."""
    config = "providers:\n  local:\n    provider: ollama\n    endpoint: ''\n"
    agent = MINIMAL_AGENT.replace("provider: openai", "provider: local")
    found = diagnostics_of(write({"agent.yaml": agent, "config.yaml": config}))
    assert [d.field for d in found] == ["providers.local.endpoint"]
    assert found[0].message == "must not be empty"


def test_a_config_with_only_warnings_in_the_agent_still_fails(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT, "config.yaml": "deployment: {port: 0}\n"})
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    (only,) = caught.value.diagnostics
    assert (only.field, only.message) == ("deployment.port", "must be at least 1, not `0`")


# --- image archives: the member, not the cache -----------------------------------------


def _packed(write: Write, files: dict[str, str], tmp_path: Path) -> Path:
    root = write(files)
    archive = tmp_path / "support.tar.gz"
    pack_image(root, archive)
    return archive


IMAGE_WITH_PROBLEMS = {
    "config.yaml": "spec_version: 1\nllm:\n  model: nope\ntools:\n  agents: [helper]\n",
    "agents/helper/config.yaml": "spec_version: 1\nautosave: x\n",
    "tools/python/bad.py": "def f(:\n",
}


def test_errors_in_an_archive_name_its_members(write: Write, tmp_path: Path) -> None:
    archive = _packed(write, IMAGE_WITH_PROBLEMS, tmp_path)
    found = diagnostics_of(archive)
    where = {d.location.rsplit("!/", 1)[-1].split(":")[0] for d in found}
    assert where == {"config.yaml", "tools/python/bad.py", "agents/helper/config.yaml"}
    for d in found:
        assert d.file == archive and d.member is not None
        assert d.location.startswith(f"{archive}!/{d.member}:")
        assert "cache" not in d.render()


def test_validate_test_and_chat_show_archive_members(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    archive = _packed(write, IMAGE_WITH_PROBLEMS, tmp_path)
    monkeypatch.chdir(tmp_path)
    for args in (
        ["validate", "support.tar.gz"],
        ["test", "support.tar.gz", "--model", "test"],
        ["chat", "support.tar.gz", "--model", "test"],
    ):
        result = CliRunner().invoke(cli, args, input="hi\n")
        assert result.exit_code == 2, (args, result.output)
        assert "support.tar.gz!/config.yaml:3:" in result.output, (args, result.output)
        assert "support.tar.gz!/tools/python/bad.py:1:" in result.output, (args, result.output)
        assert "cache" not in result.output, (args, result.output)
    assert archive.is_file()


def test_an_archive_wrapping_a_folder_names_the_folder(write: Write, tmp_path: Path) -> None:
    import tarfile

    root = write({"config.yaml": "spec_version: 1\nllm: {model: nope}\n"})
    archive = tmp_path / "wrapped.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="support")
    (found,) = diagnostics_of(archive)
    assert found.location.startswith(f"{archive}!/support/config.yaml:2:")


def test_an_archive_named_by_an_agent_tool_is_located_in_it(write: Write, tmp_path: Path) -> None:
    archive = _packed(write, {"config.yaml": "spec_version: 1\nllm: {model: nope}\n"}, tmp_path)
    parent = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + f"tools:\n  - type: agent\n    name: helper\n    description: d\n"
            f"    path: {archive}\n"
        }
    )
    (found,) = diagnostics_of(parent)
    assert found.location.startswith(f"{archive}!/config.yaml:2:")


# --- sub-agents' warnings --------------------------------------------------------------


def test_an_image_sub_agents_warnings_show_on_its_parent(write: Write) -> None:
    root = write({k: v for k, v in IMAGE_WITH_PROBLEMS.items() if k != "tools/python/bad.py"})
    root.joinpath("config.yaml").write_text(
        "spec_version: 1\nllm:\n  model: openai/gpt-4o\ntools:\n  agents: [helper]\n",
        encoding="utf-8",
    )
    spec = load_agent(root)
    (warning,) = spec.warnings
    assert warning.file == (root / "agents/helper/config.yaml").resolve()
    assert warning.severity is Severity.WARNING and "autosave" in warning.message
    with pytest.raises(SpecError) as caught:
        load_agent(root, strict=True)
    assert [d.file for d in caught.value.errors] == [warning.file]


def test_an_agent_tools_warnings_show_once_on_its_parent(write: Write) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "tools:\n"
            + "".join(
                f"  - type: agent\n    name: {name}\n    description: d\n    path: helper\n"
                for name in ("one", "two")
            ),
            "helper/config.yaml": "spec_version: 1\nautosave: x\n",
        }
    )
    spec = load_agent(root)
    (warning,) = spec.warnings
    assert warning.file == (root / "helper/config.yaml").resolve()
    assert warning.line == 2


def test_validate_prints_a_sub_agents_warning(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "tools:\n  - type: agent\n    name: one\n    description: d\n    path: helper\n",
            "helper/config.yaml": "spec_version: 1\nautosave: x\n",
        }
    )
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["validate", "."])
    assert result.exit_code == 0, result.output
    assert "helper/config.yaml:2:1: warning: autosave: ignored" in result.output
    strict = CliRunner().invoke(cli, ["validate", ".", "--strict"])
    assert strict.exit_code == 2
    assert "helper/config.yaml:2:1: error: autosave" in strict.output
