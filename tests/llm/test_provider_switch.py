"""`--model provider/name` naming another provider than the definition's: the request
goes to the new provider's own endpoint with its own key, never to the endpoint or with
the key the definition wrote for its provider. `holodeck chat` runs as a process with
the question piped in; the real OpenAI SDK talks to scripted servers on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import PROVIDER_VARS
from scripted_servers import AnthropicServer, OpenAIServer, Recorded, closed_port_url, text
from yaml_dump import dump

openai_server = scripted_servers.openai_server
anthropic_server = scripted_servers.anthropic_server

OLD_KEY = "sk-old-provider-secret"
NEW_KEY = "sk-openai-from-environment"


def chat(root: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    """`echo Hello | holodeck chat ROOT FLAGS` with only `env`'s provider variables."""
    base = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    return subprocess.run(
        [sys.executable, "-m", "holodeck", "chat", str(root), *flags],
        input="Hello",
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
    )


def agent(root: Path, model: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    spec = {"name": "switcher", "model": model, "instructions": {"inline": "You help."}}
    (root / "agent.yaml").write_text(dump(spec), encoding="utf-8")
    return root


def headers_of(records: list[Recorded]) -> str:
    return json.dumps([r.headers for r in records])


def old_models(old_server: str) -> dict[str, dict[str, Any]]:
    """Models of other providers, each with an endpoint and a key of its own."""
    return {
        "anthropic": {
            "provider": "anthropic",
            "name": "claude-sonnet-4-5",
            "endpoint": old_server,
            "api_key": OLD_KEY,
        },
        "azure_openai": {
            "provider": "azure_openai",
            "name": "gpt-4o",
            "endpoint": old_server,
            "api_key": OLD_KEY,
            "api_version": "2024-10-21",
        },
        "ollama": {
            "provider": "ollama",
            "name": "llama3.2",
            "endpoint": old_server + "/v1",
            "api_key": OLD_KEY,
        },
    }


@pytest.mark.parametrize("provider", ["anthropic", "azure_openai", "ollama"])
def test_switching_to_openai_sends_the_openai_key_to_the_openai_endpoint(
    tmp_path: Path,
    openai_server: OpenAIServer,
    anthropic_server: AnthropicServer,
    provider: str,
) -> None:
    root = agent(tmp_path / "a", old_models(anthropic_server.root)[provider])
    openai_server.script(text("Hello from the new provider."))
    env = {"OPENAI_BASE_URL": openai_server.url, "OPENAI_API_KEY": NEW_KEY}

    done = chat(root, env, "--model", "openai/gpt-4o-mini")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from the new provider."
    (request,) = openai_server.requests
    assert request.headers["authorization"] == f"Bearer {NEW_KEY}"
    assert request.body["model"] == "gpt-4o-mini"
    assert OLD_KEY not in headers_of(openai_server.requests)
    # the definition's endpoint belonged to its own provider: nothing went there
    assert anthropic_server.requests == []


@pytest.mark.parametrize("provider", ["anthropic", "azure_openai", "ollama"])
def test_switching_without_the_new_providers_key_is_the_missing_key_error(
    tmp_path: Path, anthropic_server: AnthropicServer, provider: str
) -> None:
    root = agent(tmp_path / "a", old_models(anthropic_server.root)[provider])

    done = chat(root, {}, "--model", "openai/gpt-4o-mini")

    assert done.returncode == 2, done.stderr
    assert "openai/gpt-4o-mini: no API key is set" in done.stderr
    assert "OPENAI_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr
    assert OLD_KEY not in done.stderr
    assert anthropic_server.requests == []


def test_another_model_of_the_same_provider_keeps_the_definitions_endpoint_and_key(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    model = {
        "provider": "openai",
        "name": "gpt-4o",
        "endpoint": openai_server.url,
        "api_key": OLD_KEY,
    }
    root = agent(tmp_path / "a", model)
    openai_server.script(text("Same provider, other model."))
    env = {"OPENAI_BASE_URL": closed_port_url(), "OPENAI_API_KEY": NEW_KEY}

    done = chat(root, env, "--model", "openai/gpt-4o-mini")

    assert done.returncode == 0, done.stderr
    (request,) = openai_server.requests
    assert request.headers["authorization"] == f"Bearer {OLD_KEY}"
    assert request.body["model"] == "gpt-4o-mini"
