"""Global and project config.yaml, and the credential precedence rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MINIMAL_AGENT, Write
from holodeck.config.credentials import UnknownProviderError, resolve_model
from holodeck.config.loader import load_agent
from holodeck.config.settings import global_config_path, load_settings
from holodeck.spec import SpecError
from holodeck.spec.models.model_settings import ModelSettings, ProviderType
from holodeck.spec.models.settings import Settings

GLOBAL = """
providers:
  openai:
    api_key: sk-global
    endpoint: https://global.example/v1
  local-llama:
    provider: ollama
    endpoint: http://localhost:11434/v1
vectorstores:
  main: {provider: redis, connection_string: "redis://localhost:6379"}
deployment: {port: 9000, rate_limit: {requests_per_minute: 60}}
"""


def test_missing_global_config_is_not_an_error(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path, {"HOLODECK_HOME": str(tmp_path / "nowhere")})
    assert loaded.settings == Settings()
    assert loaded.files == ()


def test_holodeck_home_moves_the_global_file(tmp_path: Path) -> None:
    env = {"HOLODECK_HOME": str(tmp_path)}
    assert global_config_path(env) == tmp_path / "config.yaml"
    (tmp_path / "config.yaml").write_text(GLOBAL, encoding="utf-8")
    settings = load_settings(None, env).settings
    assert settings.provider_type("local-llama") is ProviderType.OLLAMA
    assert settings.deployment is not None and settings.deployment.port == 9000
    assert settings.vectorstores["main"].provider == "redis"


def test_project_config_overrides_global_entries(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "config.yaml").write_text(GLOBAL, encoding="utf-8")
    (project / "config.yaml").write_text(
        "providers:\n  openai: {api_key: sk-project}\ndeployment: {port: 7000}\n", encoding="utf-8"
    )
    loaded = load_settings(project, {"HOLODECK_HOME": str(home)})
    openai = loaded.settings.providers["openai"]
    assert openai.api_key is not None and openai.api_key.get_secret_value() == "sk-project"
    assert "local-llama" in loaded.settings.providers  # untouched global entries remain
    assert loaded.settings.deployment is not None and loaded.settings.deployment.port == 7000
    assert loaded.files == (home / "config.yaml", project / "config.yaml")


def test_config_errors_name_file_line_and_variable(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "providers:\n  openai:\n    api_key: ${NOT_SET_ANYWHERE}\n    endpont: x\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as caught:
        load_settings(None, {"HOLODECK_HOME": str(tmp_path)})
    rendered = caught.value.render()
    assert f"{tmp_path / 'config.yaml'}:3:5: error: providers.openai.api_key: " in rendered
    assert "`NOT_SET_ANYWHERE` is not set" in rendered
    assert ":4:5: error: providers.openai.endpont: unknown field" in rendered
    assert "did you mean `endpoint`?" in rendered


def settings_with(tmp_path: Path) -> Settings:
    (tmp_path / "config.yaml").write_text(GLOBAL, encoding="utf-8")
    return load_settings(None, {"HOLODECK_HOME": str(tmp_path)}).settings


def test_precedence_agent_then_environment_then_config(tmp_path: Path) -> None:
    settings = settings_with(tmp_path)
    bare = ModelSettings(provider="openai", name="gpt-4o")

    from_config = resolve_model(bare, settings, {})
    assert from_config.api_key is not None
    assert from_config.api_key.get_secret_value() == "sk-global"
    assert from_config.endpoint == "https://global.example/v1"
    assert from_config.sources["api_key"] == "config.yaml providers.openai"

    env = {"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "https://env.example/v1"}
    from_env = resolve_model(bare, settings, env)
    assert from_env.api_key is not None and from_env.api_key.get_secret_value() == "sk-env"
    assert from_env.endpoint == "https://env.example/v1"
    assert from_env.sources["api_key"] == "environment variable OPENAI_API_KEY"

    own = ModelSettings(provider="openai", name="gpt-4o", api_key="sk-agent")  # type: ignore[arg-type]
    from_agent = resolve_model(own, settings, env)
    assert from_agent.api_key is not None and from_agent.api_key.get_secret_value() == "sk-agent"
    assert from_agent.endpoint == "https://env.example/v1"  # field by field


@pytest.mark.parametrize(
    ("provider", "env", "field", "value"),
    [
        (
            "azure_openai",
            {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"},
            "endpoint",
            "https://r.openai.azure.com",
        ),
        ("azure_openai", {"OPENAI_API_VERSION": "2024-10-21"}, "api_version", "2024-10-21"),
        ("anthropic", {"ANTHROPIC_API_KEY": "ak"}, "api_key", "ak"),
        (
            "anthropic",
            {"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"},
            "endpoint",
            "http://127.0.0.1:1",
        ),
        (
            "ollama",
            {"OLLAMA_BASE_URL": "http://127.0.0.1:11434/v1"},
            "endpoint",
            "http://127.0.0.1:11434/v1",
        ),
    ],
)
def test_each_provider_reads_its_standard_variables(
    provider: str, env: dict[str, str], field: str, value: str
) -> None:
    resolved = resolve_model(ModelSettings(provider=provider, name="m"), Settings(), env)
    got = getattr(resolved, field)
    assert (got.get_secret_value() if field == "api_key" else got) == value


def test_named_provider_uses_its_type_and_entry(tmp_path: Path) -> None:
    settings = settings_with(tmp_path)
    resolved = resolve_model(ModelSettings(provider="local-llama", name="llama3.2"), settings, {})
    assert resolved.provider is ProviderType.OLLAMA
    assert resolved.endpoint == "http://localhost:11434/v1"
    with pytest.raises(UnknownProviderError):
        resolve_model(ModelSettings(provider="nobody", name="m"), settings, {})


def test_resolved_credentials_are_redacted(tmp_path: Path) -> None:
    resolved = resolve_model(
        ModelSettings(provider="openai", name="m"), settings_with(tmp_path), {}
    )
    assert "sk-global" not in repr(resolved)
    assert "sk-global" not in repr(settings_with(tmp_path))


def test_agent_project_config_is_read_for_agent_yaml(write: Write) -> None:
    root = write(
        {
            "agent.yaml": MINIMAL_AGENT.replace("provider: openai", "provider: team-gateway"),
            "config.yaml": "providers:\n  team-gateway: {provider: openai, "
            "endpoint: 'http://127.0.0.1:4000/v1'}\n",
        }
    )
    spec = load_agent(root)
    assert spec.model is not None and spec.model.provider == "team-gateway"


def test_dotenv_beside_the_agent_feeds_substitution(write: Write) -> None:
    agent = MINIMAL_AGENT.replace("name: gpt-4o-mini", "name: ${MODEL_NAME}")
    spec = load_agent(write({"agent.yaml": agent, ".env": "MODEL_NAME=gpt-4.1\n"}))
    assert spec.model is not None and spec.model.name == "gpt-4.1"


def test_agent_memory_and_deployment_blocks_lay_over_the_configs_field_by_field(
    write: Write,
) -> None:
    config = (
        "memory: {store: redis, url: 'redis://cache:6379/0', ttl_seconds: 60}\n"
        "deployment: {port: 9000, rate_limit: {requests_per_minute: 5}}\n"
    )
    kept = load_agent(
        write({"config.yaml": config, "agent.yaml": MINIMAL_AGENT + "memory: {max_messages: 5}\n"})
    )
    assert (kept.memory.store, kept.memory.ttl_seconds, kept.memory.max_messages) == (
        "redis",
        60,
        5,
    )
    own = load_agent(
        write(
            {
                "config.yaml": config,
                "agent.yaml": MINIMAL_AGENT
                + "memory: {store: sqlite}\ndeployment: {host: 0.0.0.0}\n",
            }
        )
    )
    # a store the agent names does not take the config's url for another store
    assert (own.memory.store, own.memory.url, own.memory.ttl_seconds) == ("sqlite", None, 60)
    assert own.deployment is not None
    assert (own.deployment.host, own.deployment.port) == ("0.0.0.0", 9000)
    assert own.deployment.rate_limit is not None
