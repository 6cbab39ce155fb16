"""What a server or a host program keeps to itself: its credentials (lent to uploaded
agents only where its configuration says), its environment (children get an allow-list),
and its process-wide state (the library changes nothing outside its own objects)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
import tarfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from pydantic_ai.models.function import FunctionModel

import scripted_servers
from holodeck.config.credentials import resolve_model
from holodeck.search.embeddings._plan import NoEmbedder, Plan, plan_embedder
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import Settings, UploadSettings
from scripted_servers import Call, OpenAIServer, text, tool_calls
from server_harness import WEATHER, Serve, until
from yaml_dump import dump

openai_server = scripted_servers.openai_server
LEND_OPENAI = UploadSettings(providers=["openai"])  # uploads may use the server's OpenAI key


@pytest.fixture
def foreign_server() -> Iterator[OpenAIServer]:
    """An endpoint an uploaded agent names: not one the server's operator configured."""
    server = OpenAIServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def upload_archive(auth: dict[str, str] | None = None, name: str = "visitor") -> bytes:
    """An image (.tar.gz) on openai/gpt-4o-mini, with `executor.auth` (base_url, api_key)
    when given."""
    executor: dict[str, Any] = {"model": "openai/gpt-4o-mini"}
    if auth is not None:
        executor["auth"] = {"type": "api_key", **auth}
    config = {"spec_version": 1, "name": name, "instructions": "AGENTS.md", "executor": executor}
    files = {"config.yaml": dump(config), "AGENTS.md": "You help.\n"}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, content in files.items():
            data = content.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def authorizations(server: OpenAIServer) -> list[str]:
    return [r.headers.get("authorization", "") for r in server.requests]


# --- credentials ------------------------------------------------------------------------


def test_an_upload_naming_its_own_endpoint_gets_no_server_key(
    serve: Serve,
    openai_server: OpenAIServer,
    foreign_server: OpenAIServer,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    # the network lets uploads reach it: what is refused below is the server's key
    allow = f"network:\n  allow: ['127.0.0.1:{foreign_server.port}']\n"
    (isolated_home / "config.yaml").write_text(allow, encoding="utf-8")
    foreign_server.script(text("got it"))
    elsewhere = {"base_url": foreign_server.url}
    with serve(WEATHER, allow_uploads=True, model=None, uploads=LEND_OPENAI) as server:
        refused = server.client.post(
            "/v1/agents",
            content=upload_archive(elsewhere),
            headers={"Content-Type": "application/gzip"},
        )
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert foreign_server.url in error["message"] and "credential" in error["message"]
        assert "model.api_key" in error["hint"]
        assert "visitor" not in {
            a["name"] for a in server.client.get("/v1/agents").json()["agents"]
        }
        # with a key of its own it runs, and its endpoint sees that key only
        own = dict(elsewhere, api_key="sk-visitor")
        taken = server.client.post(
            "/v1/agents", content=upload_archive(own), headers={"Content-Type": "application/gzip"}
        )
        assert taken.status_code == 201, taken.text
        until(lambda: server.client.get("/ready").status_code == 200, what="visitor ready")
        answer = server.chat("Hi", agent="visitor")
        assert answer.status_code == 200 and answer.json()["response"] == "got it"
    assert authorizations(foreign_server) == ["Bearer sk-visitor"]
    assert openai_server.requests == []


def test_a_lent_provider_serves_uploads_at_its_own_endpoint_only(
    serve: Serve, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    openai_server.script(text("lent"))
    with serve(WEATHER, allow_uploads=True, model=None, uploads=LEND_OPENAI) as server:
        taken = server.client.post(
            "/v1/agents", content=upload_archive(), headers={"Content-Type": "application/gzip"}
        )
        assert taken.status_code == 201, taken.text
        until(lambda: server.client.get("/ready").status_code == 200, what="visitor ready")
        assert server.chat("Hi", agent="visitor").json()["response"] == "lent"
    assert authorizations(openai_server) == ["Bearer sk-server-secret"]


def test_a_provider_not_lent_to_uploads_gives_them_no_key(
    serve: Serve, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    with serve(WEATHER, allow_uploads=True, model=None) as server:
        refused = server.client.post(
            "/v1/agents", content=upload_archive(), headers={"Content-Type": "application/gzip"}
        )
        listed = {a["name"] for a in server.client.get("/v1/agents").json()["agents"]}
    assert refused.status_code == 422, refused.text
    assert "deployment.uploads.providers" in refused.json()["error"]["message"]
    assert listed == {"weather"}
    stored = tmp_path / "state" / "agents"  # nothing of the refused upload is kept
    assert [p for p in stored.rglob("*") if not p.is_dir()] == []
    assert openai_server.requests == []


def test_a_named_entry_is_lent_at_its_endpoint_and_its_type_variables_stay_home() -> None:
    settings = Settings.model_validate(
        {
            "providers": {
                "local-llama": {
                    "provider": "openai",
                    "endpoint": "http://127.0.0.1:9/v1",
                    "api_key": "sk-llama",
                }
            }
        }
    )
    env = {"OPENAI_API_KEY": "sk-openai"}
    lent = frozenset({"local-llama"})
    at_home = resolve_model(
        ModelSettings(provider="local-llama", name="m"), settings, env, lent=lent
    )
    assert at_home.api_key is not None and at_home.api_key.get_secret_value() == "sk-llama"
    assert at_home.endpoint == "http://127.0.0.1:9/v1" and at_home.withheld is None
    same_place = ModelSettings(provider="local-llama", name="m", endpoint="http://127.0.0.1:9/v1/")
    assert resolve_model(same_place, settings, env, lent=lent).api_key is not None
    elsewhere = ModelSettings(provider="local-llama", name="m", endpoint="http://127.0.0.1:10/v1")
    away = resolve_model(elsewhere, settings, env, lent=lent)
    assert away.api_key is None and away.endpoint == "http://127.0.0.1:10/v1"
    assert away.withheld is not None and "http://127.0.0.1:9/v1" in away.withheld
    # `openai` itself is not lent: OPENAI_API_KEY reaches no upload
    plain = resolve_model(ModelSettings(provider="openai", name="m"), settings, env, lent=lent)
    assert plain.api_key is None and plain.withheld is not None
    # the operator's own definitions are resolved as before
    assert resolve_model(elsewhere, settings, env).api_key is not None


def test_an_uploads_embedding_endpoint_gets_no_server_key() -> None:
    settings = Settings()
    env = {"OPENAI_API_KEY": "sk-server-secret"}
    agent = ModelSettings(provider="openai", name="gpt-4o-mini", endpoint="http://127.0.0.1:9/v1")
    named = "openai/text-embedding-3-small"
    operator = plan_embedder(named, agent, settings, env)
    assert isinstance(operator, Plan) and operator.resolved is not None
    assert operator.resolved.api_key is not None  # what the operator's own agent gets
    uploaded = plan_embedder(named, agent, settings, env, lent=frozenset({"openai"}))
    assert isinstance(uploaded, NoEmbedder), uploaded
    assert "http://127.0.0.1:9/v1" in uploaded.reason and "no API key" in uploaded.reason
    lent_home = ModelSettings(provider="openai", name="gpt-4o-mini")
    at_home = plan_embedder(named, lent_home, settings, env, lent=frozenset({"openai"}))
    assert isinstance(at_home, Plan) and at_home.resolved is not None
    assert at_home.resolved.api_key is not None


def test_upload_providers_come_from_the_deployment_block(tmp_path: Path) -> None:
    from holodeck.server import ServeOptions
    from holodeck.spec.models.settings import DeploymentSettings

    block = DeploymentSettings.model_validate({"uploads": {"providers": ["openai", "llama"]}})
    options = ServeOptions.from_settings(("a",), block)
    assert options.uploads.providers == ["openai", "llama"]
    assert ServeOptions.from_json(options.to_json()) == options


# --- children's environment -------------------------------------------------------------

ENV_SERVER = """
import os
from mcp.server.mcpserver import MCPServer

app = MCPServer("envy")


@app.tool()
def environment() -> dict[str, str]:
    \"\"\"This server's environment.\"\"\"
    return dict(os.environ)


app.run()
"""

ENV_TOOL = """
/** This process's environment. */
export function environment(): Record<string, string> {
  return { ...process.env } as Record<string, string>;
}
"""


def one_call_model(tool: str) -> FunctionModel:
    """A model that calls `tool` once, then answers."""
    from pydantic_ai.messages import ModelMessage, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
            yield "done"
            return
        yield {0: DeltaToolCall(tool, "{}", tool_call_id="call1")}

    return FunctionModel(stream_function=stream)


async def tool_result(root: Path, tool: str) -> Any:
    from holodeck import RunOptions
    from holodeck.config.loader import load_agent
    from holodeck.runtime import Agent, ToolCallFinished

    async with Agent(load_agent(root), RunOptions(model=one_call_model(tool))) as agent:
        events = [event async for event in agent.run("go")]
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.ok, finished
    return finished.result


@pytest.mark.anyio
async def test_an_mcp_stdio_server_gets_the_allow_list_and_its_own_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret")
    monkeypatch.setenv("SOME_DATABASE_PASSWORD", "hunter2")
    monkeypatch.setenv("ENVY_TOKEN_SOURCE", "token-for-envy")
    monkeypatch.setenv("LC_TIME", "C")
    (tmp_path / "envy.py").write_text(ENV_SERVER, encoding="utf-8")
    tool = {
        "type": "mcp",
        "name": "envy",
        "command": sys.executable,
        "args": [str(tmp_path / "envy.py")],
        "env": {"ENVY_TOKEN": "${ENVY_TOKEN_SOURCE}"},
    }
    spec = {
        "name": "helper",
        "model": {"provider": "test"},
        "instructions": {"inline": "You help."},
        "tools": [tool],
    }
    (tmp_path / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    seen = await tool_result(tmp_path, "envy_environment")
    assert isinstance(seen, dict)
    assert "OPENAI_API_KEY" not in seen and "SOME_DATABASE_PASSWORD" not in seen
    assert "sk-parent-secret" not in json.dumps(seen)
    assert seen["ENVY_TOKEN"] == "token-for-envy"  # what the tool's own `env:` passes
    assert seen["PATH"] == os.environ["PATH"] and seen["LC_TIME"] == "C"


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
async def test_the_node_process_of_typescript_tools_gets_the_allow_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    root = tmp_path / "image"
    (root / "tools" / "typescript").mkdir(parents=True)
    (root / "config.yaml").write_text(
        "spec_version: 1\nname: node-env\ninstructions: AGENTS.md\nllm:\n  model: test/x\n",
        encoding="utf-8",
    )
    (root / "AGENTS.md").write_text("You help.\n", encoding="utf-8")
    (root / "tools" / "typescript" / "env.ts").write_text(ENV_TOOL, encoding="utf-8")
    seen = await tool_result(root, "env")  # a file of one function: the tool is the file
    assert isinstance(seen, dict)
    assert "ANTHROPIC_API_KEY" not in seen and "sk-ant" not in json.dumps(seen)
    assert seen["PATH"] == os.environ["PATH"] and seen["HTTPS_PROXY"] == "http://127.0.0.1:9"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text_ = (task / "children").read_text().split()
        found += [int(child) for child in text_]
    return found


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    pairs = [item.decode(errors="replace").partition("=") for item in raw if item]
    return {name: value for name, _, value in pairs}


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_workers_hold_no_key_in_their_environment(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    from server_harness import deploy_process

    root = tmp_path / "agent"
    root.mkdir()
    spec = {
        "name": "helper",
        "model": {"provider": "openai", "name": "gpt-4o-mini"},
        "instructions": {"inline": "You help."},
        "memory": {"store": "sqlite"},
        "deployment": {"auth": {"type": "api_key", "api_keys": ["client-key-secret"]}},
    }
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    openai_server.script(text("from a worker"))
    env = {
        "OPENAI_API_KEY": "sk-parent-secret",
        "OPENAI_BASE_URL": openai_server.url,
        "TMPDIR": str(tmp_path),
    }
    with deploy_process(str(root), "--workers", "2", env=env, cwd=tmp_path) as (process, url):
        workers = until(lambda: len(_children(process.pid)) >= 2 and _children(process.pid))
        handed = [Path(p) for p in tmp_path.glob("holodeck-serve-*.json")]
        assert len(handed) == 1 and handed[0].stat().st_mode & 0o777 == 0o600
        for worker in workers:
            environ = _environ(worker)
            raw = json.dumps(environ)
            assert "sk-parent-secret" not in raw and "client-key-secret" not in raw
            assert environ["PATH"] == os.environ["PATH"]
        answer = httpx.post(
            url + "/v1/chat",
            json={"message": "Hi"},
            headers={"Authorization": "Bearer client-key-secret"},
            timeout=60,
        )
        assert answer.status_code == 200 and answer.json()["response"] == "from a worker"
    # the workers' agents still had the server's key; the hand-off file is gone
    assert authorizations(openai_server) == ["Bearer sk-parent-secret"]
    assert not list(tmp_path.glob("holodeck-serve-*.json"))


# --- process-wide state -----------------------------------------------------------------

HOST_PROGRAM = """
import asyncio, json, logging, os, sys
from pathlib import Path

import openai
import openai._utils
import pydantic_ai
from openai.resources.chat.completions import completions


def state() -> dict:
    return {
        "environ": dict(os.environ),
        "sdk_transform": completions.async_maybe_transform is openai._utils.async_maybe_transform,
        "host_client": type(openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9").chat.completions).__name__,
        "banner": pydantic_ai.BANNER_ENABLED,
        "pypdf_level": logging.getLogger("pypdf").level,
        "pypdf_disabled": logging.getLogger("pypdf").disabled,
        "meta_path": [repr(finder) for finder in sys.meta_path],
        "user_modules": sorted(n for n in sys.modules if n.startswith("holodeck_user")),
    }


async def use_holodeck(root: str, url: str, pdf: str) -> None:
    from holodeck.config.loader import load_agent
    from holodeck import RunOptions
    from holodeck.search.ingest import read_pdf
    from holodeck.search.embeddings._local import LocalEmbedder, local_installed
    from holodeck.runtime import Agent

    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": url}
    async with Agent(load_agent(root), RunOptions(env=env)) as agent:
        assert (await agent.answer("Hi")).text == "hello host"
        assert any(n.startswith("holodeck_user") for n in sys.modules)  # its tools were in
    assert "Quarterly" in read_pdf(Path(pdf).read_bytes()).text
    if local_installed():
        assert len(await LocalEmbedder().embed(["hello"])) == 1  # loaded offline


try:  # torch sets variables of its own when imported: a host using it has them already
    import sentence_transformers  # noqa: F401
except ImportError:
    pass
before = state()
asyncio.run(use_holodeck(*sys.argv[1:]))
print(json.dumps({"before": before, "after": state()}))
"""


@pytest.mark.slow
def test_using_holodeck_changes_nothing_else_in_its_host_process(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    import subprocess

    from search_files import make_pdf

    spec = {
        "name": "guest",
        "model": {"provider": "openai", "name": "gpt-4o-mini", "temperature": 0.1},
        "instructions": {"inline": "You help."},
        "tools": [
            {
                "type": "function",
                "name": "greeting",
                "description": "The greeting to use.",
                "file": "tools/greet.py",
                "function": "greeting",
            }
        ],
    }
    (tmp_path / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    # a Python tool that imports its neighbour: the modules and the import hook come and go
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "words.py").write_text("HELLO = 'hello host'\n", encoding="utf-8")
    (tmp_path / "tools" / "greet.py").write_text(
        "import words\n\n\ndef greeting() -> str:\n    return words.HELLO\n", encoding="utf-8"
    )
    # a wrong xref offset: pypdf repairs it, and says so on its logger
    pdf = tmp_path / "repaired.pdf"
    pdf.write_bytes(
        re.sub(rb"startxref\s+\d+", b"startxref\n420", make_pdf([["Quarterly report"]]))
    )
    (tmp_path / "host.py").write_text(HOST_PROGRAM, encoding="utf-8")
    openai_server.script(tool_calls(Call("greeting")), text("hello host"))
    done = subprocess.run(
        [sys.executable, str(tmp_path / "host.py"), str(tmp_path), openai_server.url, str(pdf)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    states = json.loads(done.stdout.strip().splitlines()[-1])
    before, after = states["before"], states["after"]
    assert after["environ"] == before["environ"]
    assert after == before
    assert after["sdk_transform"] is True and after["host_client"] == "AsyncCompletions"
    assert after["banner"] is True and after["pypdf_level"] == 0
    assert after["user_modules"] == [] and after["meta_path"] == before["meta_path"]
    assert "incorrect startxref" in done.stderr  # pypdf's warning reached the host's logging
    # HoloDeck's own client still sent its lean body
    assert openai_server.requests[0].body["temperature"] == 0.1
    tool_result = openai_server.requests[1].body["messages"][-1]
    assert tool_result["role"] == "tool" and "hello host" in tool_result["content"]
