"""What a server or a host program keeps to itself: its credentials (lent to uploaded
agents only where its configuration says), its environment (children get an allow-list),
and its process-wide state (the library changes nothing outside its own objects)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from holodeck.config.credentials import resolve_model
from holodeck.rag.embeddings._plan import NoEmbedder, Plan, plan_embedder
from holodeck.spec.model_settings import ModelSettings
from holodeck.spec.settings_models import Settings
from scripted_servers import OpenAIServer, text
from server_harness import WEATHER, Serve, until
from yaml_dump import dump

openai_server = scripted_servers.openai_server


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
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    foreign_server.script(text("got it"))
    elsewhere = {"base_url": foreign_server.url}
    with serve(WEATHER, allow_uploads=True, model=None, upload_providers=("openai",)) as server:
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
    with serve(WEATHER, allow_uploads=True, model=None, upload_providers=("openai",)) as server:
        taken = server.client.post(
            "/v1/agents", content=upload_archive(), headers={"Content-Type": "application/gzip"}
        )
        assert taken.status_code == 201, taken.text
        until(lambda: server.client.get("/ready").status_code == 200, what="visitor ready")
        assert server.chat("Hi", agent="visitor").json()["response"] == "lent"
    assert authorizations(openai_server) == ["Bearer sk-server-secret"]


def test_a_provider_not_lent_to_uploads_gives_them_no_key(
    serve: Serve, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    with serve(WEATHER, allow_uploads=True, model=None) as server:
        refused = server.client.post(
            "/v1/agents", content=upload_archive(), headers={"Content-Type": "application/gzip"}
        )
    assert refused.status_code == 422, refused.text
    assert "deployment.uploads.providers" in refused.json()["error"]["message"]
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
    from holodeck.spec.settings_models import DeploymentSettings

    block = DeploymentSettings.model_validate({"uploads": {"providers": ["openai", "llama"]}})
    options = ServeOptions.from_settings(("a",), block)
    assert options.upload_providers == ("openai", "llama")
    assert ServeOptions.from_json(options.to_json()) == options
