"""agent.yaml: every rule reports file, line, field and a fix, all at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MINIMAL_AGENT, Write
from holodeck.config.loader import load_agent
from holodeck.spec import AgentSpec, SpecError
from holodeck.spec.diagnostics import Diagnostic
from holodeck.spec.models.tools import FunctionTool, McpTool, PromptTool, VectorstoreTool


def errors_of(root: Path, **kwargs: object) -> list[Diagnostic]:
    with pytest.raises(SpecError) as caught:
        load_agent(root, **kwargs)  # type: ignore[arg-type]
    return caught.value.errors


def one(diagnostics: list[Diagnostic], field: str) -> Diagnostic:
    matches = [d for d in diagnostics if d.field == field]
    assert len(matches) == 1, [d.render() for d in diagnostics]
    return matches[0]


def test_minimal_agent_loads(write: Write) -> None:
    spec = load_agent(write({"agent.yaml": MINIMAL_AGENT}))
    assert isinstance(spec, AgentSpec)
    assert spec.format == "agent.yaml"
    assert spec.model is not None and spec.model.name == "gpt-4o-mini"
    assert spec.instructions == "You are helpful."
    assert spec.memory.max_messages == 20
    assert spec.warnings == ()


def test_spec_is_immutable(write: Write) -> None:
    spec = load_agent(write({"agent.yaml": MINIMAL_AGENT}))
    with pytest.raises(ValueError, match="frozen"):
        spec.name = "other"  # type: ignore[misc]


def test_all_errors_are_reported_at_once_with_lines_and_hints(write: Write) -> None:
    root = write(
        {
            "agent.yaml": """
            name: demo
            model:
              provider: openai
              name: gpt-4o
              temprature: 0.5
              top_p: 1.5
              max_tokens: 0
            instructions:
              inline: hi
            tools:
              - type: vectorstor
                name: docs
              - type: function
                name: lookup
                file: tools/missing.py
                function: lookup
            test_cases:
              - input: hello
                expected_tool: [lookup]
            """
        }
    )
    errors = errors_of(root)
    typo = one(errors, "model.temprature")
    assert (typo.line, typo.hint) == (5, "did you mean `temperature`?")
    assert typo.file == root / "agent.yaml"
    assert one(errors, "model.top_p").line == 6
    assert "must be at most 1" in one(errors, "model.top_p").message
    assert one(errors, "model.max_tokens").line == 7
    bad_type = one(errors, "tools[0]")
    assert (bad_type.line, bad_type.hint) == (11, "did you mean `vectorstore`?")
    assert one(errors, "test_cases[0].expected_tool").hint == "did you mean `expected_tools`?"
    # schema errors stop before file checks: missing files are reported once the schema is valid
    assert len(errors) == 5


@pytest.mark.parametrize(
    ("patch", "field", "words"),
    [
        ({"name": None}, "name", "expected text, not an empty value"),
        ({"model": None}, "model", "required field is missing"),
        ({"model": "gpt-4o"}, "model", "expected a mapping"),
        ({"instructions": {"file": "a.md", "inline": "x"}}, "instructions", "exactly one"),
        ({"instructions": {}}, "instructions", "exactly one"),
        ({"model": {"provider": "openai"}}, "model", "`name` is required"),
        (
            {"model": {"provider": "openai", "name": "m", "temperature": 2.5}},
            "model.temperature",
            "2",
        ),
        (
            {"model": {"provider": "openai", "name": "m", "reasoning_effort": "max"}},
            "model.reasoning_effort",
            "expected `low`, `medium` or `high`",
        ),
        (
            {"tools": [{"type": "function", "name": "has space", "file": "t.py", "function": "f"}]},
            "tools[0].name",
            "not a valid name",
        ),
        (
            {"tools": [{"type": "function", "name": "x" * 65, "file": "t.py", "function": "f"}]},
            "tools[0].name",
            "not a valid name",
        ),
        (
            {
                "tools": [
                    {
                        "type": "vectorstore",
                        "name": "v",
                        "description": "d",
                        "source": "d",
                        "top_k": 101,
                    }
                ]
            },
            "tools[0].top_k",
            "100",
        ),
        (
            {
                "tools": [
                    {
                        "type": "vectorstore",
                        "name": "v",
                        "description": "d",
                        "source": "d",
                        "chunk_size": 10,
                        "chunk_overlap": 10,
                    }
                ]
            },
            "tools[0]",
            "smaller",
        ),
        ({"tools": [{"type": "mcp", "name": "m"}]}, "tools[0]", "exactly one of"),
        ({"tools": [{"type": "mcp", "name": "m", "url": "ftp://x"}]}, "tools[0]", "http://"),
        (
            {"tools": [{"type": "prompt", "name": "p", "description": "d"}]},
            "tools[0]",
            "exactly one of `template` or `file`",
        ),
        ({"evaluations": {"metrics": []}}, "evaluations.metrics", "must not be empty"),
        (
            {"evaluations": {"metrics": [{"metric": "grounded"}]}},
            "evaluations.metrics[0].metric",
            "did you mean `groundedness`?",
        ),
        (
            {"evaluations": {"metrics": [{"type": "rag", "metric_type": "faith"}]}},
            "evaluations.metrics[0].metric_type",
            "faithfulness",
        ),
        ({"test_cases": [{"name": "t"}]}, "test_cases[0]", "either `input` or `turns`"),
        ({"memory": {"store": "redis"}}, "memory", "needs a `url`"),
        ({"deployment": {"port": 70000}}, "deployment.port", "65535"),
        ({"logging": {"log_level": "LOUD"}}, "logging.log_level", "expected"),
    ],
)
def test_field_rules(write: Write, patch: dict[str, object], field: str, words: str) -> None:
    import yaml_dump  # local helper module below

    data = yaml_dump.minimal()
    data.update(patch)
    data = {k: v for k, v in data.items() if v is not None or k == "name"}
    root = write({"agent.yaml": yaml_dump.dump(data)})
    diagnostic = one(errors_of(root), field)
    assert words in diagnostic.message + " " + (diagnostic.hint or "")
    assert diagnostic.line is not None


def test_missing_files_are_named_with_their_resolved_path(write: Write) -> None:
    root = write(
        {
            "agent.yaml": """
            name: demo
            model: {provider: openai, name: gpt-4o}
            instructions:
              file: instructions/missing.md
            response_format: schemas/answer.json
            tools:
              - type: function
                name: f
                file: tools/nope.py
                function: f
              - type: vectorstore
                name: docs
                description: Search docs
                source: data/docs
              - type: prompt
                name: summarize
                description: Summarize text
                file: prompts/summary.md
            skills: [skills/nothing]
            """
        }
    )
    rendered = "\n".join(d.render() for d in errors_of(root))
    for relative, line in [
        ("instructions/missing.md", 4),
        ("schemas/answer.json", 5),
        ("tools/nope.py", 9),
        ("data/docs", 14),
        ("prompts/summary.md", 18),
        ("skills/nothing", 19),
    ]:
        assert f"agent.yaml:{line}:" in rendered
        assert str(root.resolve() / relative) in rendered


def test_function_must_exist_in_its_file(write: Write) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "tools:\n  - type: function\n    name: f\n    file: tools/t.py\n    function: get_wether\n",
            "tools/t.py": "def get_weather(city: str) -> str:\n    return city\n\n"
            "def _private() -> None: ...\n",
        }
    )
    diagnostic = one(errors_of(root), "tools[0].function")
    assert "defines no public function `get_wether`" in diagnostic.message
    assert diagnostic.hint == "did you mean `get_weather`?"


def test_python_syntax_error_in_a_tool_file_is_located(write: Write) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "tools:\n  - type: function\n    name: f\n    file: t.py\n    function: f\n",
            "t.py": "def f(:\n    pass\n",
        }
    )
    (diagnostic,) = errors_of(root)
    assert diagnostic.file == (root / "t.py").resolve()
    assert diagnostic.line == 1
    assert "syntax error" in diagnostic.message


def test_duplicate_tool_names(write: Write) -> None:
    tool = "  - type: mcp\n    name: fs\n    server: '@modelcontextprotocol/server-filesystem'\n"
    root = write({"agent.yaml": MINIMAL_AGENT + "tools:\n" + tool + tool})
    diagnostic = one(errors_of(root), "tools[1].name")  # reported where it is repeated
    assert "duplicate tool name `fs`" in diagnostic.message
    assert diagnostic.hint is not None and "tools[0] on line" in diagnostic.hint


def test_unknown_provider_suggests_a_known_one(write: Write) -> None:
    root = write({"agent.yaml": MINIMAL_AGENT.replace("provider: openai", "provider: opnai")})
    diagnostic = one(errors_of(root), "model.provider")
    assert diagnostic.line == 3
    assert diagnostic.hint == "did you mean `openai`?"


def test_provider_and_vectorstore_may_name_config_entries(
    write: Write, isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text(
        "providers:\n  local-llama: {provider: ollama, endpoint: 'http://localhost:11434/v1'}\n"
        "vectorstores:\n  main: {provider: postgres, connection_string: 'postgresql://x'}\n",
        encoding="utf-8",
    )
    agent = (
        MINIMAL_AGENT.replace("provider: openai", "provider: local-llama")
        + "tools:\n  - type: vectorstore\n    name: docs\n    description: Search docs\n"
        "    source: data\n    database: main\n"
    )
    root = write({"agent.yaml": agent, "data/a.md": "text"})
    spec = load_agent(root)
    assert spec.model is not None and spec.model.provider == "local-llama"
    typo = write(
        {"agent.yaml": agent.replace("database: main", "database: mian"), "data/a.md": "text"}
    )
    diagnostic = one(errors_of(typo), "tools[0].database")
    assert diagnostic.hint == "did you mean `main`?"


def test_expected_tools_must_name_defined_tools(write: Write) -> None:
    agent = MINIMAL_AGENT + (
        "tools:\n  - type: mcp\n    name: fs\n    command: python\n"
        "test_cases:\n  - input: hi\n    expected_tools: [fs_read_file, serch]\n"
    )
    diagnostic = one(errors_of(write({"agent.yaml": agent})), "test_cases[0].expected_tools")
    assert "`serch` is not one of the agent's tools" in diagnostic.message


def test_every_metric_form_is_accepted(write: Write) -> None:
    agent = (
        MINIMAL_AGENT
        + """
evaluations:
  model: {provider: openai, name: gpt-4o}
  metrics:
    - metric: groundedness
      threshold: 3.5
    - {type: standard, metric: bleu, threshold: 0.3}
    - {metric: f1, threshold: 0.5}
    - type: geval
      name: Professionalism
      criteria: Uses professional language.
      evaluation_steps: [Check tone.]
      evaluation_params: [input, actual_output]
      threshold: 0.7
    - {type: rag, metric_type: faithfulness, threshold: 0.8}
    - {type: code, file: metrics.py, function: score, threshold: 0.5}
"""
    )
    root = write(
        {"agent.yaml": agent, "metrics.py": "def score(output: str) -> float:\n    return 1.0\n"}
    )
    spec = load_agent(root)
    assert spec.evaluations is not None
    kinds = [m.type for m in spec.evaluations.metrics]
    assert kinds == ["standard", "standard", "standard", "geval", "rag", "code"]
    assert spec.evaluations.metrics[2].metric == "f1_score"  # type: ignore[union-attr]


def test_secrets_are_never_printed(write: Write, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-very-secret")
    agent = MINIMAL_AGENT.replace("name: gpt-4o-mini", "name: gpt-4o-mini\n  api_key: ${MY_KEY}")
    agent += "tools:\n  - type: mcp\n    name: api\n    url: http://localhost:9/mcp\n"
    agent += "    headers: {Authorization: 'Bearer ${MY_KEY}'}\n"
    spec = load_agent(write({"agent.yaml": agent}))
    assert spec.model is not None and spec.model.api_key is not None
    assert spec.model.api_key.get_secret_value() == "sk-very-secret"
    assert "sk-very-secret" not in repr(spec)
    assert "sk-very-secret" not in str(spec.model_dump())
    tool = spec.tools[0]
    assert isinstance(tool, McpTool)
    assert tool.headers["Authorization"].get_secret_value() == "Bearer sk-very-secret"


def test_paths_resolve_and_files_are_read(write: Write) -> None:
    agent = """
name: demo
model: {provider: openai, name: gpt-4o}
instructions: {file: prompts/system.md}
response_format: schema.yaml
tools:
  - {type: function, name: weather, file: tools/w.py, function: get}
  - {type: prompt, name: summarize, description: Summarize, template: "Sum up {{ text }}",
     parameters: {text: {description: The text}}}
  - {type: vectorstore, name: docs, description: Search, source: data/faq.md, top_k: 3}
"""
    root = write(
        {
            "agent.yaml": agent,
            "prompts/system.md": "Be brief.\n",
            "schema.yaml": "type: object\nproperties: {answer: {type: string}}\n",
            "tools/w.py": "def get(city: str) -> str:\n    return city\n",
            "data/faq.md": "# FAQ\n",
        }
    )
    spec = load_agent(root)
    assert spec.instructions == "Be brief.\n"
    assert spec.instructions_file == (root / "prompts/system.md").resolve()
    assert spec.response_format == {"type": "object", "properties": {"answer": {"type": "string"}}}
    function, prompt, store = spec.tools
    assert isinstance(function, FunctionTool) and spec.resolve(function.file).is_file()
    assert isinstance(prompt, PromptTool) and prompt.parameters["text"].required
    assert isinstance(store, VectorstoreTool) and store.top_k == 3


def test_agent_tools_load_sub_agents_and_refuse_cycles(write: Write) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT
            + "tools:\n  - {type: agent, name: helper, path: helper/agent.yaml}\n",
            "helper/agent.yaml": MINIMAL_AGENT.replace("name: demo", "name: helper"),
        }
    )
    spec = load_agent(root)
    assert spec.subagents["helper"].name == "helper"

    looped = write(
        {
            "agent.yaml": MINIMAL_AGENT + "tools:\n  - {type: agent, name: me, path: b}\n",
            "b/agent.yaml": MINIMAL_AGENT + "tools:\n  - {type: agent, name: back, path: ..}\n",
        }
    )
    assert any("calls itself" in d.message for d in errors_of(looped))


def test_not_a_mapping(write: Write) -> None:
    (diagnostic,) = errors_of(write({"agent.yaml": "- just\n- a list\n"}))
    assert "must be a mapping" in diagnostic.message
