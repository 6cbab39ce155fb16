"""AG-UI `context`: what the page tells the agent with a run reaches the model. The
official client (@ag-ui/client) runs against `holodeck deploy` as a process of its own,
whose agent's model is a scripted OpenAI-compatible server that records each request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import scripted_servers
from agui_client import node_client, run_client
from scripted_servers import OpenAIServer, text
from server_harness import agent_dir, deploy_process

openai_server = scripted_servers.openai_server


def test_the_runs_context_entries_reach_the_model_with_the_users_message(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_client()  # skips, saying how, without Node or tests/js's packages
    root = agent_dir(
        tmp_path / "shop",
        "shop",
        model={"provider": "openai", "name": "gpt-4o-mini", "endpoint": openai_server.url},
    )
    context = [
        {"description": "The page the user is on", "value": "Checkout, cart of 3 items"},
        {"description": "User's locale", "value": "nb-NO"},
    ]
    monkeypatch.setenv("AGUI_CONTEXT", json.dumps(context))
    openai_server.script(text("You are at checkout."))
    env = {"OPENAI_API_KEY": "sk-test", "HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(root), env=env, cwd=tmp_path) as (_, url):
        (run,) = run_client(url + "/awp", "thread-1", "Where am I?")
    assert "error" not in run, run
    (request,) = openai_server.requests
    user = [m["content"] for m in request.body["messages"] if m["role"] == "user"]
    said = json.dumps(user)
    assert "Where am I?" in said
    assert "The page the user is on: Checkout, cart of 3 items" in said
    assert "User's locale: nb-NO" in said
