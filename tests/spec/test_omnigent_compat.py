"""Images written the Omnigent way (its AGENTSPEC and parser): each form either loads and
works, or is refused with a message that says what to write instead."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from conftest import Write
from holodeck import RunOptions
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent
from holodeck.spec import SpecError
from holodeck.spec.diagnostics import Diagnostic
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import FunctionTool, McpTool
from python_envs import installer

HEAD = "spec_version: 1\nname: omni\n"
SKILL = "---\nname: {name}\ndescription: {description}\n---\n\nDo the thing.\n"


def errors_of(root: Path) -> list[Diagnostic]:
    with pytest.raises(SpecError) as caught:
        load_agent(root)
    return caught.value.errors


def messages_of(errors: list[Diagnostic]) -> str:
    return "\n".join(e.render() for e in errors)


def recording_model(seen: list[str], call: str | None = None) -> FunctionModel:
    """Records every request it gets (with its instructions); calls `call` once (unless
    it is the sub-agent answering, recognised by its own instructions), then answers."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        text = repr(messages) + repr(info.instructions)
        seen.append(text)
        returned = any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        if call is None or returned or "You critique" in text:
            yield "done"
        else:
            yield {0: DeltaToolCall(name=call, json_args='{"task": "review this"}')}

    return FunctionModel(stream_function=stream, model_name="recording")


async def answer(spec: AgentSpec, model: FunctionModel, prompt: str = "hello") -> str:
    agent = Agent(spec, RunOptions(model=model))
    try:
        last: Any = None
        async for event in agent.run(prompt):
            last = event
        return str(last.text)
    finally:
        await agent.aclose()


# 1. `prompt:` is the older name of `instructions`


def test_prompt_reaches_the_model_as_instructions(write: Write) -> None:
    root = write(
        {"config.yaml": HEAD + "llm: {model: openai/gpt-4o}\nprompt: |\n  You are Omni.\n"}
    )
    spec = load_agent(root)
    assert spec.instructions == "You are Omni.\n"
    assert spec.warnings == ()
    seen: list[str] = []
    asyncio.run(answer(spec, recording_model(seen)))
    assert "You are Omni." in seen[0]


def test_prompt_and_instructions_together_are_refused(write: Write) -> None:
    root = write({"config.yaml": HEAD + "prompt: A\ninstructions: B\n"})
    text = messages_of(errors_of(root))
    assert "`prompt` and `instructions` both give" in text
    assert "keep one of them" in text


def test_without_instructions_claude_md_is_read_as_omnigent_does(write: Write) -> None:
    root = write({"config.yaml": HEAD, "CLAUDE.md": "From CLAUDE.md.\n", ".cursorrules": "no"})
    assert load_agent(root).instructions == "From CLAUDE.md.\n"


# 2. `executor:` is a model source


def test_executor_model_and_settings_are_used(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD
            + "executor:\n  type: omnigent\n  model: anthropic/claude-sonnet-4-5\n"
            "  reasoning_effort: high\n  max_iterations: 7\n"
            "  config: {harness: openai-agents}\n"
            "  auth: {type: api_key, api_key: sk-1, base_url: 'http://gw.local/v1'}\n"
            "llm: {model: anthropic/claude-sonnet-4-5, temperature: 0.2, max_tokens: 900}\n"
            "prompt: Hi.\n"
        }
    )
    spec = load_agent(root)
    assert spec.model is not None
    assert (spec.model.provider, spec.model.name) == ("anthropic", "claude-sonnet-4-5")
    assert spec.model.reasoning_effort == "high"
    assert (spec.model.temperature, spec.model.max_tokens) == (0.2, 900)
    assert spec.model.api_key is not None and spec.model.api_key.get_secret_value() == "sk-1"
    assert spec.model.endpoint == "http://gw.local/v1"
    assert spec.execution.max_tool_iterations == 7
    assert spec.warnings == ()


def test_executor_model_alone_is_enough(write: Write) -> None:
    spec = load_agent(write({"config.yaml": HEAD + "executor: {model: openai/gpt-4o-mini}\n"}))
    assert spec.model is not None and spec.model.name == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("executor", "words"),
    [
        ("{config: {harness: ''}}", "`harness` must be a harness name"),
        ("{config: {permission_mode: bypassPermissions}}", "an image cannot acknowledge"),
        ("{model: openai/gpt-4o, profile: prod}", "Databricks credentials profile"),
        ("{model: openai/gpt-4o, timeout: 60}", "limits a whole Omnigent run"),
        ("{model: openai/gpt-4o, auth: {type: databricks, profile: x}}", "Omnigent server"),
        ("{model: openai/gpt-4o, max_iterations: 1000}", "set `max_iterations: 100` or less"),
        ("{model: openai/gpt-4o, reasoning_effort: xhigh}", "use low, medium or high"),
    ],
)
def test_executor_settings_without_meaning_here_are_refused(
    write: Write, executor: str, words: str
) -> None:
    text = messages_of(errors_of(write({"config.yaml": HEAD + f"executor: {executor}\n"})))
    assert words in text
    assert "executor." in text


@pytest.mark.parametrize(
    ("executor", "window"),
    [
        ("{model: openai/gpt-4o, context_window: 200000}", 200000),
        (
            "{model: anthropic/claude-sonnet-4-5, config: {harness: claude-sdk, "
            "context_window: 1000000}}",
            1000000,
        ),
    ],
)
def test_a_context_window_becomes_the_models_which_compaction_sizes_the_history_by(
    write: Write, executor: str, window: int
) -> None:
    root = write({"config.yaml": HEAD + f"executor: {executor}\n"})
    spec = load_agent(root, strict=True)  # honoured: no warning
    assert spec.model is not None and spec.model.context_window == window
    bad = write({"config.yaml": HEAD + "executor: {model: openai/gpt-4o, context_window: -1}\n"})
    assert "`context_window` must be a positive number of tokens" in messages_of(errors_of(bad))


def test_executor_and_llm_models_must_agree(write: Write) -> None:
    root = write(
        {"config.yaml": HEAD + "executor: {model: openai/gpt-4o}\nllm: {model: openai/o4-mini}\n"}
    )
    assert "keep `executor.model` only" in messages_of(errors_of(root))


# 3. inline `type: mcp` and `type: agent` tools


def test_inline_mcp_entry_works_like_a_tools_mcp_file(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "llm: {model: openai/gpt-4o}\ntools:\n"
            "  github:\n    type: mcp\n    command: npx\n"
            "    args: [-y, '@modelcontextprotocol/server-github']\n    tools: [search_code]\n"
            "  search:\n    type: mcp\n    url: https://mcp.example.com/mcp\n"
            "    headers: {Authorization: Bearer t}\n"
        }
    )
    spec = load_agent(root)
    servers = {t.name: t for t in spec.tools if isinstance(t, McpTool)}
    assert servers["github"].effective_transport == "stdio"
    assert servers["github"].command == "npx"
    assert servers["github"].tools == ["search_code"]
    assert servers["search"].effective_transport == "http"
    assert servers["search"].url == "https://mcp.example.com/mcp"


def test_inline_mcp_with_databricks_auth_is_refused(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "tools:\n  dbx:\n    type: mcp\n    url: https://x/mcp\n"
            "    auth: {type: databricks, profile: p}\n"
        }
    )
    assert "pass a token in `headers`" in messages_of(errors_of(root))


def test_inline_agent_is_a_callable_sub_agent(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "llm: {model: openai/gpt-4o}\nprompt: You lead.\ntools:\n"
            "  critic:\n    type: agent\n    description: Critiques drafts.\n"
            "    prompt: You critique drafts.\n"
            "    executor: {model: openai/gpt-4o-mini}\n"
        }
    )
    spec = load_agent(root)
    critic = spec.subagents["critic"]
    assert critic.instructions == "You critique drafts."
    assert critic.model is not None and critic.model.name == "gpt-4o-mini"
    seen: list[str] = []
    assert asyncio.run(answer(spec, recording_model(seen, call="critic"))) == "done"
    assert any("You critique drafts." in s for s in seen)  # the sub-agent ran


def test_inline_agent_without_executor_runs_on_the_callers_model(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "executor: {model: openai/gpt-4o}\ntools:\n"
            "  helper: {type: agent, prompt: Help.}\n"
        }
    )
    sub = load_agent(root).subagents["helper"]
    assert sub.model is not None and sub.model.name == "gpt-4o"


def test_inline_agent_os_env_is_refused(write: Write) -> None:
    root = write(
        {"config.yaml": HEAD + "tools:\n  w: {type: agent, prompt: P, os_env: caller_process}\n"}
    )
    assert "gets no workspace of its own" in messages_of(errors_of(root))


def test_other_inline_tool_types_are_refused(write: Write) -> None:
    root = write({"config.yaml": HEAD + "tools:\n  f: {type: function, callable: m.f}\n"})
    assert "put Python functions in tools/python/" in messages_of(errors_of(root))


# 4. a skill named otherwise than its directory; a sub-agent listed by its declared name


def test_skill_name_may_differ_from_its_directory(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "llm: {model: openai/gpt-4o}\n",
            "skills/research/SKILL.md": SKILL.format(name="deep-search", description="Search."),
        }
    )
    assert [s.name for s in load_agent(root).skills] == ["deep-search"]


def test_skills_grouped_one_level_deep_are_found(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD,
            "skills/writing/changelog/SKILL.md": SKILL.format(name="changelog", description="C."),
            "skills/writing/api-docs/SKILL.md": SKILL.format(name="api-docs", description="A."),
        }
    )
    assert [s.name for s in load_agent(root).skills] == ["api-docs", "changelog"]


def test_two_skills_with_one_name_are_an_error(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD,
            "skills/a/SKILL.md": SKILL.format(name="same", description="A."),
            "skills/b/SKILL.md": SKILL.format(name="same", description="B."),
        }
    )
    text = messages_of(errors_of(root))
    assert "two skills are named `same`: skills/a/ and skills/b/" in text


def test_sub_agent_listed_by_its_declared_name(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "llm: {model: openai/gpt-4o}\ntools: {agents: [researcher]}\n",
            "agents/research_v2/config.yaml": "spec_version: 1\nname: researcher\n"
            "llm: {model: openai/gpt-4o-mini}\nprompt: You research.\n",
        }
    )
    spec = load_agent(root)
    assert spec.subagents["researcher"].instructions == "You research."
    assert spec.warnings == ()


def test_sub_agent_name_matching_two_directories_is_an_error(write: Write) -> None:
    root = write(
        {
            "config.yaml": HEAD + "tools: {agents: [critic]}\n",
            "agents/critic/config.yaml": "spec_version: 1\nname: reviewer\n",
            "agents/other/config.yaml": "spec_version: 1\nname: critic\n",
        }
    )
    text = messages_of(errors_of(root))
    assert "sub-agent `critic` is ambiguous" in text
    assert "agents/critic/ (its directory)" in text and "agents/other/ (its name:)" in text


# 5. Python tools marked with omnigent_client's @tool

DECORATED = '''from omnigent_client import tool


def helper(text: str) -> int:
    return len(text.split())


@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    return helper(text)


@tool(strict=False)
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()
'''


def test_tool_marked_functions_are_the_tools_named_after_them(write: Write) -> None:
    root = write(
        {"config.yaml": HEAD + "llm: {model: openai/gpt-4o}\n", "tools/python/text.py": DECORATED}
    )
    tools = [t for t in load_agent(root).tools if isinstance(t, FunctionTool)]
    assert sorted(t.name for t in tools) == ["shout", "word_count"]
    assert {t.name: t.description for t in tools}["word_count"] == "Count the words of a text."


def test_tool_state_parameter_is_refused(write: Write) -> None:
    source = "from omnigent_client import tool\n\n@tool\ndef f(x: str, tool_state) -> str:\n"
    root = write({"config.yaml": HEAD, "tools/python/t.py": source + "    return x\n"})
    assert "remove the `tool_state` parameter" in messages_of(errors_of(root))


def test_without_omnigent_client_the_error_names_the_package(write: Write) -> None:
    if _importable("omnigent_client"):
        pytest.skip("omnigent_client is installed here")
    root = write(
        {"config.yaml": HEAD + "llm: {model: openai/gpt-4o}\n", "tools/python/text.py": DECORATED}
    )
    with pytest.raises(Exception, match="omnigent_client"):
        asyncio.run(answer(load_agent(root), recording_model([])))


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# pip's and uv's words for a package the registry does not give
UNREACHABLE = (
    "no matching distribution",
    "not found in the package registry",
    "connection",
    "failed to fetch",
)


@pytest.mark.slow
def test_omnigent_client_tool_runs_with_the_real_package(
    write: Write, tmp_path: Path, wheel_venv: Callable[[str], Path | None]
) -> None:
    """In a Python 3.12 venv with HoloDeck's wheel and the omnigent-client package from
    the registry, `holodeck test --model test` calls the @tool-marked function."""
    venv = wheel_venv("3.12")  # the wheel tests' venv: HoloDeck is installed once a run
    if venv is None:
        print("skipped: no working python3.12 on this machine")
        pytest.skip("python3.12 is not available")
    install = installer(venv)
    # omnigent-client pins the omnigent server package, which pins mcp<2 and openai<2.45,
    # both older than HoloDeck needs; the decorator itself needs neither, so the client
    # and the server package are installed without their dependencies, plus the two
    # modules their import chain reaches for.
    steps = [
        [*install, "--no-deps", "omnigent-client", "omnigent", "omnigent-ui-sdk"],
        [*install, "httpx", "psutil"],
    ]
    for step in steps:
        done = subprocess.run(
            [str(part) for part in step], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            said = done.stderr.lower()
            if any(words in said for words in UNREACHABLE):
                print(f"skipped: the package registry is unavailable: {done.stderr[-300:]}")
                pytest.skip("the package registry is unavailable")
            raise AssertionError(done.stderr[-2000:])
    marker = tmp_path / "called.txt"
    tool = DECORATED.replace(
        "    return helper(text)",
        f"    open({str(marker)!r}, 'a').write(text + '\\n')\n    return helper(text)",
    )
    root = write(
        {
            "config.yaml": HEAD + "executor: {model: openai/gpt-4o}\nprompt: Count words.\n",
            "tools/python/text.py": tool,
            "tests/cases.yaml": "test_cases:\n  - {name: count, input: Count these words, "
            "expected_tools: [word_count]}\n",
        }
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = subprocess.run(
        [str(venv / "bin" / "holodeck"), "test", str(root), "--model", "test"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert marker.is_file() and marker.read_text().strip()


# 6. builtins only an Omnigent server provides


@pytest.mark.parametrize(
    ("builtin", "words"),
    [
        ("upload_file", "MCP filesystem server"),
        ("list_files", "MCP filesystem server"),
        ("download_file", "MCP filesystem server"),
        ("hindsight_reflect", "memory.long_term.recall.auto"),
        ("hindsight_forget_all", "hindsight_recall"),
    ],
)
def test_server_only_builtins_are_refused_with_what_to_use(
    write: Write, builtin: str, words: str
) -> None:
    root = write({"config.yaml": HEAD + f"tools:\n  builtins: [web_fetch, {builtin}]\n"})
    text = messages_of(errors_of(root))
    assert "needs an Omnigent server" in text
    assert words in text
    assert sys.version_info >= (3, 11)
