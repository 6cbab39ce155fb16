"""Settings and files written the way the shipped HoloDeck's sample agents write them:
named vector stores addressed by `connection_string`, skills named unlike their
directory, versioned instructions (YAML front matter), the earlier commands and the
keys of its models that have no equal here."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import scripted_servers
from cli_invoke import invoke
from conftest import Write
from holodeck.config.loader import load_agent
from holodeck.runtime import Agent, RunOptions, ToolCallFinished
from holodeck.spec.diagnostics import Severity, SpecError
from scripted_servers import OpenAIServer, text
from server_harness import free_port

openai_server = scripted_servers.openai_server

HELP = {
    "data/help.md": """
        # Help

        ## Deposits

        The deposit is refunded within three working days of returning the bike.
        """,
}


def agent(tools: str = "", instructions: str = "inline: Answer from the help pages.") -> str:
    return (
        "name: desk\nmodel:\n  provider: openai\n  name: gpt-4o-mini\n"
        f"instructions:\n  {instructions}\n" + (f"tools:\n{tools}" if tools else "")
    )


SEARCH = (
    "  - name: help_pages\n    type: vectorstore\n    description: Help pages.\n"
    "    source: data/help.md\n    database: {database}\n"
)


def refusal(root: Path, **kwargs: bool) -> str:
    with pytest.raises(SpecError) as caught:
        load_agent(root, **kwargs)
    return "\n".join(d.render() for d in caught.value.diagnostics)


async def search_once(root: Path, question: str) -> ToolCallFinished:
    async with Agent(load_agent(root), RunOptions(model="test")) as running:
        events = [e async for e in running.run(question + " /call *")]
    [call] = [e for e in events if isinstance(e, ToolCallFinished)]
    return call


# --- vector stores: `connection_string` -------------------------------------------------


@pytest.mark.anyio
async def test_a_chromadb_store_named_in_config_yaml_by_connection_string_is_reached_there(
    write: Write, chroma_url: str
) -> None:
    """The samples' only Chroma form: `vectorstores.<name>: {provider: chromadb,
    connection_string: http://host:port}` in the project's config.yaml."""
    import chromadb

    root = write(
        {
            **HELP,
            "config.yaml": f"vectorstores:\n  kb:\n    provider: chromadb\n"
            f"    connection_string: {chroma_url}\n",
            "agent.yaml": agent(SEARCH.format(database="kb")),
        }
    )
    call = await search_once(root, "When is the deposit refunded?")
    assert call.error is None, call.error
    assert "three working days" in json.dumps(str(call.result))
    address = urlsplit(chroma_url)
    client = chromadb.HttpClient(host=address.hostname or "", port=address.port or 0)
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    assert any("help_pages" in name for name in names), names  # stored on that server
    assert not (root / ".holodeck" / "vectors").exists()  # not in the embedded store


@pytest.mark.anyio
async def test_a_qdrant_store_given_by_connection_string_is_the_server_tried(
    write: Write,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    root = write(
        {
            **HELP,
            "config.yaml": f"vectorstores:\n  kb:\n    provider: qdrant\n"
            f"    connection_string: {url}\n",
            "agent.yaml": agent(SEARCH.format(database="kb")),
        }
    )
    call = await search_once(root, "deposit")
    assert call.error is not None and url in call.error  # nothing listens there


def test_connection_string_and_url_together_are_refused(write: Write) -> None:
    root = write(
        {
            **HELP,
            "config.yaml": "vectorstores:\n  kb:\n    provider: chromadb\n"
            "    connection_string: http://127.0.0.1:8000\n    url: http://127.0.0.1:8001\n",
            "agent.yaml": agent(SEARCH.format(database="kb")),
        }
    )
    message = refusal(root)
    assert "config.yaml:2:3: error: vectorstores.kb: give `url` or `connection_string`" in message
    # the follow-on error on the tool says the entry was refused, not missing
    assert "agent.yaml:12:5: error: tools[0].database: the vectorstore `kb` in" in message
    assert "fix the error reported at `vectorstores.kb`" in message


def test_a_store_missing_from_every_config_file_names_the_files_read(
    write: Write, isolated_home: Path
) -> None:
    (isolated_home / "config.yaml").write_text(
        "vectorstores:\n  shared:\n    provider: embedded\n", encoding="utf-8"
    )
    root = write(
        {
            **HELP,
            "config.yaml": "vectorstores:\n  local:\n    provider: embedded\n",
            "agent.yaml": agent(SEARCH.format(database="chromadb")),
        }
    )
    message = refusal(root)
    project = root.resolve() / "config.yaml"
    assert (
        f"no vectorstore named `chromadb` under `vectorstores:` in "
        f"{isolated_home / 'config.yaml'} or {project}"
    ) in message
    assert f"define it under `vectorstores:` in {project}" in message
    assert "~/.holodeck" not in message


def test_a_store_named_where_no_config_file_exists_says_where_it_looked(
    write: Write, isolated_home: Path
) -> None:
    root = write({**HELP, "agent.yaml": agent(SEARCH.format(database="chromadb"))})
    message = refusal(root)
    assert "no config.yaml was found (looked for" in message
    assert str(isolated_home / "config.yaml") in message
    assert str(root.resolve() / "config.yaml") in message


def test_store_options_and_global_mcp_servers_say_what_to_write(write: Write) -> None:
    root = write(
        {
            **HELP,
            "config.yaml": "mcp_servers:\n  - {name: memory, type: mcp, command: npx}\n"
            "vectorstores:\n  kb:\n    provider: postgres\n"
            "    connection_string: postgresql://127.0.0.1/db\n    options: {pool: 3}\n",
            "agent.yaml": agent(),
        }
    )
    message = refusal(root)
    assert "mcp_servers: `mcp_servers` in config.yaml gave every agent" in message
    assert "move each entry into the `tools:`" in message
    assert "vectorstores.kb.options: `options` passed provider-specific settings" in message
    assert "unknown field" not in message


# --- skills -----------------------------------------------------------------------------


def test_a_skill_named_unlike_its_directory_loads_with_a_warning_and_strict_refuses_it(
    write: Write,
) -> None:
    root = write(
        {
            "agent.yaml": agent() + "skills: [skills/refund-rules]\n",
            "skills/refund-rules/SKILL.md": "---\nname: refunds\ndescription: Refunds.\n---\n"
            "Refund double charges.\n",
        }
    )
    spec = load_agent(root)
    assert [s.name for s in spec.skills] == ["refunds"]
    [warning] = spec.warnings
    assert warning.severity is Severity.WARNING and warning.line == 2
    assert "skill `refunds` is in the directory `refund-rules`" in warning.message
    message = refusal(root, strict=True)
    assert "SKILL.md:2: error: name: skill `refunds` is in the directory" in message


# --- instructions with front matter ------------------------------------------------------

VERSIONED = """\
---
version: 2.3.0
tags: [triage, routing]
description: Router prompt
---
# Router

Pick one queue.
"""


run = invoke


def test_front_matter_never_reaches_the_model_and_every_report_carries_the_version(
    write: Write, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    root = write(
        {
            "agent.yaml": (
                "name: router\nmodel: {provider: openai, name: gpt-4o, "
                f"endpoint: {openai_server.url}, api_key: sk-test}}\n"
                "instructions: {file: instructions/system-prompt.md}\n"
                "test_cases:\n  - {name: one, input: Route this ticket}\n"
            ),
        }
    )
    (root / "instructions").mkdir()
    (root / "instructions" / "system-prompt.md").write_text(VERSIONED, encoding="utf-8")
    outputs = ("run.json", "run.md", "run.html", "run.xml")
    for output in outputs:
        openai_server.script(text("billing"))
        result = run("test", str(root), "-o", output, cwd=tmp_path)
        assert result.exit_code == 0, result.output
        assert "prompt 2.3.0" in " ".join(result.output.split())  # the header names it
    for body in openai_server.bodies():
        system = body["messages"][0]
        assert system["role"] == "system"
        assert system["content"].startswith("# Router\n\nPick one queue.")
        assert "version:" not in system["content"] and "---" not in system["content"]
    report = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert report["prompt_version"] == "2.3.0" and report["prompt_tags"] == ["triage", "routing"]
    assert "| Prompt version | 2.3.0 (tags: triage, routing) |" in (tmp_path / "run.md").read_text()
    assert (
        '<dt>Prompt version</dt><dd class="mono">2.3.0 (tags: triage, routing)</dd>'
        in (tmp_path / "run.html").read_text()
    )
    assert (
        'name="prompt_version" value="2.3.0 (tags: triage, routing)"'
        in (tmp_path / "run.xml").read_text()
    )
    [saved] = [
        p for p in (tmp_path / ".holodeck" / "runs").glob("*.json") if p.stem in report["run_id"]
    ]
    assert json.loads(saved.read_text())["prompt_version"] == "2.3.0"


def test_instructions_without_a_version_are_recorded_by_digest(write: Write) -> None:
    first = load_agent(write({"agent.yaml": agent(instructions="inline: Be brief.")}))
    second = load_agent(write({"agent.yaml": agent(instructions="inline: Be briefer.")}))
    assert first.prompt_version and second.prompt_version
    assert first.prompt_version.version.startswith("auto-")
    assert first.prompt_version.version != second.prompt_version.version


def test_broken_front_matter_is_reported_at_its_line(write: Write) -> None:
    root = write({"agent.yaml": agent(instructions="file: prompt.md")})
    (root / "prompt.md").write_text("---\nversion: [1\n---\nHello\n", encoding="utf-8")
    message = refusal(root)
    assert "prompt.md:3" in message or "prompt.md:2" in message
    (root / "prompt.md").write_text("---\nversion: 1\nowner: ops\n---\nHello\n", encoding="utf-8")
    spec = load_agent(root)
    assert spec.instructions == "Hello\n" and spec.prompt_version
    assert spec.prompt_version.version == "1"
    [warning] = spec.warnings
    assert warning.line == 3 and "front matter `owner` is not recorded" in warning.message
    assert "prompt.md:3: error:" in refusal(root, strict=True)


# --- keys without an equal here -----------------------------------------------------------


def test_tool_filtering_is_a_warning_and_strict_refuses_it(write: Write) -> None:
    root = write({"agent.yaml": agent() + "tool_filtering:\n  enabled: true\n  top_k: 3\n"})
    [warning] = load_agent(root).warnings
    assert warning.line == 7 and "every tool is offered on every request" in warning.message
    assert "agent.yaml:7:1: error: tool_filtering:" in refusal(root, strict=True)


@pytest.mark.parametrize("protocol", ["rest", "ag-ui", "both"])
def test_deployment_protocols_of_the_shipped_holodeck_are_what_is_served(
    write: Write, protocol: str
) -> None:
    # REST is /v1/chat, AG-UI is /awp: every agent is served both ways here
    text = agent() + f"deployment:\n  protocol: {protocol}\n  port: 8080\n"
    spec = load_agent(write({"agent.yaml": text}))
    assert spec.deployment is not None and spec.deployment.port == 8080
    assert spec.warnings == ()


def test_a_deployment_protocol_the_shipped_holodeck_never_had_is_refused(write: Write) -> None:
    message = refusal(write({"agent.yaml": agent() + "deployment:\n  protocol: grpc\n"}))
    assert "`protocol: grpc` is not a protocol the shipped HoloDeck knew" in message
    assert "AG-UI (`POST /awp`)" in message and "container" not in message


# --- earlier commands ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["serve", "agent.yaml"], "`holodeck serve` is `holodeck deploy` here"),
        (["deploy", "build", "."], "is `holodeck deploy --build` here"),
        (["deploy", "push", "."], "is `holodeck deploy --build --push REGISTRY` here"),
        (["mcp", "add", "x"], "`holodeck mcp serve PATH...` serves agents as MCP tools"),
    ],
)
def test_earlier_commands_name_what_to_run_here(tmp_path: Path, args: list[str], says: str) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.exit_code == 2
    assert says in result.output and "no such file or directory" not in result.output


@pytest.mark.parametrize(
    ("args", "code"), [(["mcp", "--help"], 0), (["mcp", "-h"], 0), (["mcp"], 2)]
)
def test_mcp_help_lists_its_subcommand(tmp_path: Path, args: list[str], code: int) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.exit_code == code, result.output
    assert "Usage: holodeck mcp COMMAND" in result.output
    assert "serve  Serve agents as MCP tools over stdio." in result.output


def test_an_agent_directory_named_like_an_earlier_subcommand_is_still_a_path(
    write: Write, tmp_path: Path
) -> None:
    root = write({"view/agent.yaml": agent() + "test_cases:\n  - {input: hi}\n"})
    result = run("test", "view", "--model", "test", cwd=root)
    assert result.exit_code == 0, result.output
    assert "not available" not in result.output


MCP = """  - name: memory
    type: mcp
    description: Remembers facts.
    command: npx
    args: ["-y", "@modelcontextprotocol/server-memory"]
"""


def test_mcp_keys_that_change_nothing_here_are_warnings(write: Write) -> None:
    extra = (
        "    encoding: utf-8\n    load_tools: true\n    load_prompts: false\n"
        "    is_retrieval: true\n    registry_name: io.github.example/memory\n"
    )
    root = write({"agent.yaml": agent(MCP + extra)})
    spec = load_agent(root)
    assert spec.tool_names == ["memory"]
    warned = {str(w.path[-1]): w for w in spec.warnings}
    assert set(warned) == {
        "encoding",
        "load_tools",
        "load_prompts",
        "is_retrieval",
        "registry_name",
    }
    assert all(w.severity is Severity.WARNING for w in warned.values())
    assert "every tool's result is retrieval context" in warned["is_retrieval"].message
    strict = refusal(root, strict=True)
    assert strict.count(": error: tools[0].") == 5


def test_mcp_keys_that_would_change_what_the_agent_does_say_what_to_write(write: Write) -> None:
    extra = "    env_file: .env.memory\n    load_tools: false\n    is_retrieval: false\n"
    message = refusal(write({"agent.yaml": agent(MCP + extra)}))
    assert "tools[0].env_file: `env_file` loaded a file of variables" in message
    assert "write each variable under `env:` as `NAME: ${NAME}`" in message
    assert "tools[0].load_tools: `load_tools: false` offered none" in message
    assert "tools[0].is_retrieval: `is_retrieval: false` kept the server's results out" in message
    assert "unknown field" not in message


def test_comparing_runs_says_when_the_prompt_version_changed() -> None:
    from holodeck.testing.comparison import compare_runs
    from run_builders import case, make_run

    before = make_run("a", [case("one", "pass")]).model_copy(update={"prompt_version": "2.3.0"})
    after = make_run("b", [case("one", "pass")]).model_copy(update={"prompt_version": "2.4.0"})
    assert compare_runs(before, after).notes == ["the prompt changed: version 2.3.0 -> 2.4.0"]
    assert compare_runs(before, before).notes == []
