"""Agent images: every validation rule of the Agent Image Spec, plus the loading rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.spec import SpecError
from holodeck.spec.diagnostics import Diagnostic, Severity
from holodeck.spec.models.tools import FunctionTool, McpTool, TypeScriptTool

CONFIG = "spec_version: 1\nname: helper\nllm:\n  model: openai/gpt-4o\n"
SKILL = "---\nname: {name}\ndescription: {description}\n---\n\nDo the thing.\n"


def errors_of(root: Path, **kwargs: object) -> list[Diagnostic]:
    with pytest.raises(SpecError) as caught:
        load_agent(root, **kwargs)  # type: ignore[arg-type]
    return caught.value.errors


def test_full_image_loads(write: Write) -> None:
    root = write(
        {
            "config.yaml": """
            spec_version: 1
            name: researcher
            description: Finds sources.
            llm:
              model: anthropic/claude-sonnet-4-5
              max_completion_tokens: 4096
              reasoning_effort: medium
            interaction:
              conversational: false
              modalities: {input: [text, image, file]}
            tools:
              agents: [critic]
              builtins:
                - web_fetch
                - {name: web_search, search_provider: perplexity, api_key: pk-123}
              timeout: 30
              retry: {max_retries: 2}
            params: {max_results: 10, prefer_recent: true}
            """,
            "AGENTS.md": "You are a researcher.\n",
            "skills/deep-search/SKILL.md": SKILL.format(name="deep-search", description="Search."),
            "skills/deep-search/references/guide.md": "guide",
            "tools/python/arxiv_search.py": 'def search(q: str) -> str:\n    """Search arXiv."""\n'
            "    return q\n",
            "tools/python/notes.py": "def add(x: str) -> None: ...\ndef list_all() -> list[str]: ...\n"
            "def _helper() -> None: ...\n",
            "tools/typescript/stocks.ts": "/** Quote a ticker. */\n"
            "export async function quote(ticker: string): Promise<number> { return 1 }\n",
            "tools/mcp/files.yaml": "name: files\ntransport: http\nurl: http://localhost:9000/mcp\n",
            "agents/critic/config.yaml": "spec_version: 1\nllm: {model: openai/gpt-4o-mini}\n",
            "tests/cases.yaml": "test_cases:\n  - {name: q1, input: Find papers, "
            "expected_tools: [arxiv_search]}\n",
            "README.md": "ignored: outside the spec's layout",
            "tools/other/stray.py": "def ignored() -> None: ...\n",
        }
    )
    spec = load_agent(root)
    assert spec.format == "image"
    assert spec.name == "researcher"
    assert spec.instructions == "You are a researcher.\n"
    assert spec.model is not None
    assert (spec.model.provider, spec.model.name, spec.model.max_tokens) == (
        "anthropic",
        "claude-sonnet-4-5",
        4096,
    )
    assert spec.model.reasoning_effort == "medium"
    assert spec.interaction.conversational is False
    assert spec.interaction.input_modalities == ("text", "image", "file")
    assert spec.params == {"max_results": 10, "prefer_recent": True}
    assert [s.name for s in spec.skills] == ["deep-search"]
    assert spec.skills[0].resources == ("references/guide.md",)
    assert spec.skills[0].body == "Do the thing."
    names = {t.name: t for t in spec.tools}
    # one public function -> the file stem; several -> <stem>_<function>; private ones never
    assert set(names) == {"arxiv_search", "notes_add", "notes_list_all", "stocks", "files"}
    assert isinstance(names["arxiv_search"], FunctionTool)
    assert names["arxiv_search"].description == "Search arXiv."
    assert names["arxiv_search"].timeout == 30
    assert isinstance(names["stocks"], TypeScriptTool)
    assert names["stocks"].description == "Quote a ticker."
    files = names["files"]
    assert isinstance(files, McpTool)
    assert files.timeout == 30
    assert files.retry is not None and files.retry.max_retries == 2  # inherited from tools.retry
    assert list(spec.subagents) == ["critic"]
    assert spec.subagents["critic"].name == "critic"
    assert [b.name for b in spec.builtins] == ["web_fetch", "web_search"]
    assert [c.name for c in spec.test_cases] == ["q1"]
    assert spec.warnings == ()


@pytest.mark.parametrize(
    ("instructions", "files", "expected"),
    [
        (None, {"AGENTS.md": "from agents.md"}, "from agents.md"),
        (None, {}, None),
        ("docs/persona.md", {"docs/persona.md": "from file"}, "from file"),
        ("You are a helpful assistant.", {}, "You are a helpful assistant."),
    ],
)
def test_instructions_resolution(
    write: Write, instructions: str | None, files: dict[str, str], expected: str | None
) -> None:
    config = CONFIG + (f"instructions: {instructions}\n" if instructions else "")
    spec = load_agent(write({"config.yaml": config, **files}))
    assert spec.instructions == expected


def test_instructions_file_outside_the_image_is_refused(write: Write) -> None:
    root = write({"image/config.yaml": CONFIG + "instructions: ../secret.txt\n", "secret.txt": "x"})
    (error,) = errors_of(root / "image")
    assert "outside the image" in error.message


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ("name: x\n", "spec_version", "required field is missing"),
        ("spec_version: 2\n", "spec_version", "expected `1`"),
        ("spec_version: 1\nllm: {max_completion_tokens: 10}\n", "llm.model", "missing"),
        ("spec_version: 1\nllm: {model: gpt-4o}\n", "llm.model", "not `provider/model`"),
        ("spec_version: 1\nllm: {model: gogle/gemini}\n", "llm.model", "not supported"),
        (
            "spec_version: 1\ninteraction: {modalities: {output: [file]}}\n",
            "interaction.modalities.output[0]",
            "expected",
        ),
        ("spec_version: 1\ntools: {agents: [ghost]}\n", "tools.agents[0]", "agents/ghost/"),
        (
            "spec_version: 1\nllm: {model: anthropic/claude}\ntools: {builtins: [web_search]}\n",
            "tools.builtins[0]",
            "search_provider",
        ),
        (
            "spec_version: 1\ntools: {builtins: [{name: web_search, search_provider: google, "
            "api_key: k}]}\n",
            "tools.builtins[0]",
            "engine_id",
        ),
        (
            "spec_version: 1\ntools: {builtins: [web_fetch, web_fetch]}\n",
            "tools.builtins[1]",
            "listed twice",
        ),
    ],
)
def test_config_rules(write: Write, config: str, field: str, words: str) -> None:
    errors = errors_of(write({"config.yaml": config}))
    matches = [d for d in errors if d.field == field]
    assert matches, [d.render() for d in errors]
    assert words in matches[0].message
    assert matches[0].line is not None


def test_web_search_without_config_is_fine_on_openai(write: Write) -> None:
    spec = load_agent(write({"config.yaml": CONFIG + "tools: {builtins: [web_search]}\n"}))
    assert spec.builtins[0].name == "web_search"


@pytest.mark.parametrize(
    ("directory", "front", "words"),
    [
        ("Deep", "name: Deep\ndescription: d", "not a valid name"),
        ("deep_search", "name: deep_search\ndescription: d", "not a valid name"),
        ("a" * 65, f"name: {'a' * 65}\ndescription: d", "not a valid name"),
        ("long", "name: long\ndescription: " + "x" * 1025, "at most 1024"),
        ("nodesc", "name: nodesc", "required field is missing"),
    ],
)
def test_skill_rules(write: Write, directory: str, front: str, words: str) -> None:
    root = write(
        {"config.yaml": CONFIG, f"skills/{directory}/SKILL.md": f"---\n{front}\n---\nbody\n"}
    )
    (error,) = errors_of(root)
    assert words in error.message
    assert error.file == root.resolve() / "skills" / directory / "SKILL.md"
    assert error.line in (2, 3)  # the frontmatter line, counted from the file's first line


def test_skill_without_frontmatter_or_file(write: Write) -> None:
    root = write(
        {"config.yaml": CONFIG, "skills/a/SKILL.md": "no frontmatter\n", "skills/b/notes.md": "x"}
    )
    messages = sorted(d.message for d in errors_of(root))
    assert messages == [
        "SKILL.md must start with YAML frontmatter between `---` lines",
        "skill directory `b` has no SKILL.md",
    ]


@pytest.mark.parametrize(
    ("mcp", "words"),
    [
        ("name: m\nurl: http://localhost/mcp\n", "`transport` is required"),
        ("name: m\ntransport: http\n", "needs a non-empty `url`"),
        ("name: m\ntransport: http\nurl: ''\n", "must not be empty"),
        ("name: m\ntransport: websocket\nurl: ws://x\n", "expected `http`, `sse` or `stdio`"),
        ("name: m\ntransport: stdio\n", "needs a `command`"),
        ("transport: http\nurl: http://x\n", "required field is missing"),
    ],
)
def test_mcp_rules(write: Write, mcp: str, words: str) -> None:
    root = write({"config.yaml": CONFIG, "tools/mcp/m.yaml": mcp})
    errors = errors_of(root)
    assert any(words in d.message for d in errors), [d.render() for d in errors]
    assert all(d.file == (root / "tools/mcp/m.yaml").resolve() for d in errors)


def test_stdio_mcp_server_is_accepted(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG,
            "tools/mcp/local.yaml": "name: local\ntransport: stdio\ncommand: python\nargs: [server.py]\n",
        }
    )
    (tool,) = load_agent(root).tools
    assert isinstance(tool, McpTool) and tool.args == ["server.py"]


def test_duplicate_tool_names_across_kinds(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG,
            "tools/python/search.py": "def search(q: str) -> str:\n    return q\n",
            "tools/mcp/search.yaml": "name: search\ntransport: http\nurl: http://localhost/mcp\n",
        }
    )
    (error,) = errors_of(root)
    assert "duplicate tool name `search`" in error.message
    assert "tools/python/search.py" in error.message


def test_tool_names_from_files_must_suit_providers(write: Write) -> None:
    root = write({"config.yaml": CONFIG, "tools/python/arxiv.search.py": "def f() -> None: ...\n"})
    (error,) = errors_of(root)
    assert "`arxiv.search` is not valid" in error.message
    assert error.line == 1


def test_sub_agents_are_loaded_recursively_and_unlisted_ones_warned(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG + "tools: {agents: [a]}\n",
            "agents/a/config.yaml": "spec_version: 1\ntools: {agents: [b]}\n",
            "agents/a/agents/b/config.yaml": "spec_version: 1\ninstructions: deepest\n",
            "agents/unused/config.yaml": "spec_version: 1\n",
        }
    )
    spec = load_agent(root)
    assert spec.subagents["a"].subagents["b"].instructions == "deepest"
    assert spec.subagents["a"].model is None  # isolated: no inheritance from the parent
    (warning,) = spec.warnings
    assert "not listed in tools.agents" in warning.message


def test_errors_in_sub_agents_name_their_file(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG + "tools: {agents: [a]}\n",
            "agents/a/config.yaml": "spec_version: 3\n",
        }
    )
    (error,) = errors_of(root)
    assert error.file == (root / "agents/a/config.yaml").resolve()
    assert error.line == 1


def test_unknown_keys_warn_and_strict_makes_them_errors(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG + "autosave: {every: 3}\nhooks: []\ntools:\n  timout: 3\n",
            "tools/mcp/m.yaml": "name: m\ntransport: http\nurl: http://x\nauth: oauth\n",
        }
    )
    spec = load_agent(root)
    rendered = sorted(w.render() for w in spec.warnings)
    assert all("warning" in r and "not part of spec_version 1" in r for r in rendered)
    config = str((root / "config.yaml").resolve())
    assert f"{config}:5:1: warning: autosave:" in rendered[0]
    assert f"{config}:6:1: warning: hooks:" in rendered[1]
    assert "did you mean `timeout`?" in rendered[2]
    assert "auth" in rendered[3]
    strict = errors_of(root, strict=True)
    assert len(strict) == 4
    assert all(d.severity is Severity.ERROR for d in strict)


def test_env_expansion_can_be_switched_off_for_uploaded_bundles(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_KEY", "server-secret")
    root = write(
        {
            "config.yaml": CONFIG,
            "tools/mcp/m.yaml": "name: m\ntransport: http\nurl: http://x/mcp\n"
            "headers: {Authorization: 'Bearer ${API_KEY}'}\n",
        }
    )
    local = load_agent(root).tools[0]
    bundle = load_agent(root, expand_env=False).tools[0]
    assert isinstance(local, McpTool) and isinstance(bundle, McpTool)
    assert local.headers["Authorization"].get_secret_value() == "Bearer server-secret"
    assert bundle.headers["Authorization"].get_secret_value() == "Bearer ${API_KEY}"


def test_tests_folder_cases_and_evaluations(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG,
            "tests/a.yaml": "evaluations:\n  metrics: [{metric: bleu, threshold: 0.2}]\n"
            "test_cases:\n  - {name: one, input: hi, ground_truth: hello}\n",
            "tests/b.yaml": "test_cases:\n  - {name: two, input: bye}\n",
        }
    )
    spec = load_agent(root)
    assert [c.name for c in spec.test_cases] == ["one", "two"]
    assert spec.evaluations is not None
    dup = write(
        {
            "config.yaml": CONFIG,
            "tests/a.yaml": "test_cases: [{name: x, input: a}]\n",
            "tests/b.yaml": "test_cases: [{name: x, input: b}]\n",
        }
    )
    assert "duplicate test case name `x`" in errors_of(dup)[0].message


def test_config_yaml_path_and_missing_config(write: Write) -> None:
    root = write({"config.yaml": CONFIG})
    assert load_agent(root / "config.yaml").format == "image"
    empty = write({"notes.txt": "x"})
    (error,) = errors_of(empty)
    assert "neither agent.yaml nor config.yaml" in error.message


def test_image_archives_load_like_directories(write: Write, isolated_home: Path) -> None:
    from holodeck.spec.archives.pack import pack_image

    root = write(
        {
            "config.yaml": CONFIG + "tools: {agents: [sub]}\n",
            "AGENTS.md": "Packed instructions.\n",
            "tools/python/lookup.py": "def lookup(q: str) -> str:\n    return q\n",
            "agents/sub/config.yaml": "spec_version: 1\n",
        }
    )
    archive = root.parent / "helper.tar.gz"
    pack_image(root, archive)
    spec = load_agent(archive)
    assert spec.format == "image"
    assert spec.instructions == "Packed instructions.\n"
    assert [t.name for t in spec.tools] == ["lookup"]
    assert list(spec.subagents) == ["sub"]
    # extracted once into the cache, by content
    assert spec.root.is_relative_to(isolated_home / "cache" / "images")
    assert load_agent(archive).root == spec.root


def test_typescript_descriptions_come_from_the_jsdoc_right_above(write: Write) -> None:
    root = write(
        {
            "config.yaml": CONFIG,
            "tools/typescript/portfolio.ts": "/** Holdings. */\ninterface H {\n"
            "  /** Ticker symbol. */\n  ticker: string;\n}\n\n"
            "/** Value a portfolio. */\nexport function value(h: H[]): number { return 0 }\n\n"
            "export const count = (h: H[]): number => h.length\n",
        }
    )
    tools = {t.name: t for t in load_agent(root).tools}
    assert tools["portfolio_value"].description == "Value a portfolio."
    assert tools["portfolio_count"].description is None
