"""`provider/model` strings beyond OpenAI and Anthropic, over real HTTP: Gemini through
the google-genai SDK against a scripted server speaking Gemini's wire format, and the
hosted OpenAI-compatible services (Groq, DeepSeek, OpenRouter, ...) through the OpenAI
SDK against the scripted OpenAI server. No request leaves 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import scripted_servers
from conftest import Write
from holodeck.config.credentials import ENV_VARS, HOSTED_URL_VARS
from holodeck.llm.errors import ProviderError
from holodeck.llm.hosted import HOSTED_URLS
from holodeck.llm.providers import override_settings
from holodeck.runtime import TextDelta, ToolCallFinished, ToolCallStarted, Usage
from holodeck.spec.diagnostics import SpecError
from holodeck.spec.models.model_settings import PROVIDER_ALIASES, ProviderType, split_model_string
from scripted_servers import Call, Fail, GeminiServer, OpenAIServer, text, tool_calls
from test_providers import (
    INSTRUCTIONS,
    WEATHER_TOOL,
    WEATHER_TOOL_ENTRY,
    agent_yaml,
    assert_user_message,
    bearer,
    build,
    failure,
    final,
    of_type,
    turn,
)
from yaml_dump import dump

openai_server = scripted_servers.openai_server
gemini_server = scripted_servers.gemini_server


def image(model: str) -> dict[str, str]:
    """An agent image whose config.yaml names `model` the Agent Image Spec's way."""
    return {
        "config.yaml": dump({"spec_version": 1, "name": "helper", "llm": {"model": model}}),
        "AGENTS.md": INSTRUCTIONS + "\n",
    }


# --- model strings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("google/gemini-2.5-pro", ("google", "gemini-2.5-pro")),
        ("openrouter/anthropic/claude-sonnet-4-5", ("openrouter", "anthropic/claude-sonnet-4-5")),
        (
            "fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct",
            ("fireworks_ai", "accounts/fireworks/models/llama-v3p1-8b-instruct"),
        ),
        ("gpt-4o", None),
        ("/gpt-4o", None),
        ("openai/", None),
    ],
)
def test_model_strings_split_at_the_first_slash(
    value: str, expected: tuple[str, str] | None
) -> None:
    assert split_model_string(value) == expected


def test_every_alias_names_a_provider_type() -> None:
    for alias, target in PROVIDER_ALIASES.items():
        assert ProviderType.lookup(alias) is ProviderType(target)
        assert alias not in {p.value for p in ProviderType}


def test_unknown_provider_lists_the_known_ones(write: Write) -> None:
    root = write({"agent.yaml": agent_yaml({"provider": "test"})})

    with pytest.raises(ProviderError) as caught:
        build(root, model="nosuch/some-model")

    message = str(caught.value)
    assert_user_message(message)
    assert message.startswith("nosuch/some-model: unknown provider.")
    for known in ("openai", "anthropic", "google", "groq", "openrouter", "gemini (google)"):
        assert known in message


def test_unknown_provider_in_an_image_is_a_located_spec_error(write: Write) -> None:
    with pytest.raises(SpecError) as caught:
        build(write(image("gemeni/gemini-2.5-pro")))

    message = str(caught.value)
    assert "config.yaml" in message and "gemeni" in message
    assert "gemini" in message  # did you mean


# --- Gemini --------------------------------------------------------------------------------


def test_gemini_streams_a_tool_call_round_trip_with_usage(
    write: Write, gemini_server: GeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test-key")
    root = write(
        {
            "agent.yaml": agent_yaml(
                {
                    "provider": "google",
                    "name": "gemini-2.5-flash",
                    "endpoint": gemini_server.root,
                    "temperature": 0.2,
                    "max_tokens": 321,
                },
                tools=[WEATHER_TOOL_ENTRY],
            ),
            "tools/weather.py": WEATHER_TOOL,
        }
    )
    gemini_server.script(
        tool_calls(Call("get_weather", {"city": "Lisbon"}), input_tokens=12, output_tokens=9),
        text("It is 21 °C in Lisbon.", input_tokens=40, output_tokens=8),
    )

    events = turn(build(root))

    started, finished = of_type(events, ToolCallStarted), of_type(events, ToolCallFinished)
    assert [(s.name, s.args) for s in started] == [("get_weather", {"city": "Lisbon"})]
    (call,) = finished
    assert (call.error, call.result) == (None, {"city": "Lisbon", "temperature_c": 21})
    deltas = of_type(events, TextDelta)
    assert len(deltas) >= 3  # streamed, piece by piece
    assert "".join(d.text for d in deltas) == "It is 21 °C in Lisbon."
    assert events.index(call) < events.index(deltas[0])
    answer = final(events)
    assert answer.text == "It is 21 °C in Lisbon."
    assert answer.usage == Usage(input_tokens=52, output_tokens=17, requests=2)

    first, second = gemini_server.requests
    for request in (first, second):
        assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
        assert request.query == {"alt": "sse"}
        assert request.headers["x-goog-api-key"] == "gm-test-key"
    body = first.body
    assert INSTRUCTIONS in json.dumps(body["systemInstruction"])
    assert body["contents"][-1]["parts"] == [{"text": "What is the weather in Lisbon?"}]
    (declaration,) = body["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["description"] == "Current temperature in a city."
    assert body["generationConfig"]["temperature"] == 0.2
    assert body["generationConfig"]["maxOutputTokens"] == 321
    model_turn, tool_turn = second.body["contents"][-2:]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0]["functionCall"]["name"] == "get_weather"
    assert model_turn["parts"][0]["functionCall"]["args"] == {"city": "Lisbon"}
    response = tool_turn["parts"][0]["functionResponse"]
    assert response["name"] == "get_weather"
    assert "21" in json.dumps(response["response"])


@pytest.mark.parametrize("how", ["image google/", "image gemini/", "--model gemini/"])
def test_gemini_model_strings_reach_the_server(
    write: Write,
    gemini_server: GeminiServer,
    monkeypatch: pytest.MonkeyPatch,
    isolated_home: Path,
    how: str,
) -> None:
    """Key and endpoint from the environment, or from a `providers.google` entry that a
    `gemini/...` model finds too."""
    if how == "image google/":
        monkeypatch.setenv("GOOGLE_API_KEY", "gm-env-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini_server.root)
    else:
        entry = {"api_key": "gm-env-key", "endpoint": gemini_server.root}
        (isolated_home / "config.yaml").write_text(
            dump({"providers": {"google": entry}}), encoding="utf-8"
        )
    if how == "--model gemini/":
        root = write({"agent.yaml": agent_yaml({"provider": "test"})})
        agent = build(root, model="gemini/gemini-2.5-pro")
    else:
        prefix = how.removeprefix("image ")
        agent = build(write(image(f"{prefix}gemini-2.5-pro")))
    gemini_server.script(text("Sunny."))

    assert final(turn(agent)).text == "Sunny."
    (request,) = gemini_server.requests
    assert GeminiServer.model_of(request) == "gemini-2.5-pro"
    assert request.headers["x-goog-api-key"] == "gm-env-key"


def test_vertex_ai_express_mode_reaches_the_server(
    write: Write, gemini_server: GeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "vx-express-key")
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini_server.root)
    gemini_server.script(text("From Vertex."))

    assert final(turn(build(write(image("vertex_ai/gemini-2.5-flash"))))).text == "From Vertex."
    (request,) = gemini_server.requests
    assert "/publishers/google/models/gemini-2.5-flash:" in request.path
    assert GeminiServer.model_of(request) == "gemini-2.5-flash"
    assert request.headers["x-goog-api-key"] == "vx-express-key"


def test_vertex_ai_without_key_or_project_says_what_to_set(write: Write) -> None:
    with pytest.raises(ProviderError) as caught:
        build(write(image("vertex_ai/gemini-2.5-flash")))

    message = str(caught.value)
    assert_user_message(message)
    assert "GOOGLE_CLOUD_PROJECT" in message and "GOOGLE_API_KEY" in message


def test_vertex_ai_without_credentials_says_how_to_log_in(
    write: Write, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Application Default Credentials are looked for at the first request: none in
    HOME, and the metadata server probe goes to a closed port on 127.0.0.1."""
    closed = scripted_servers.closed_port_url("").removeprefix("http://")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("GCE_METADATA_HOST", closed)
    monkeypatch.setenv("GCE_METADATA_IP", closed)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")

    error = failure(build(write(image("vertex_ai/gemini-2.5-flash"))))

    assert isinstance(error, ProviderError)
    message = str(error)
    assert_user_message(message)
    assert message.startswith("vertex_ai/gemini-2.5-flash: no usable Google Cloud credentials")
    assert "gcloud auth application-default login" in message


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (
            Fail(400, "API key not valid. Please pass a valid API key.", "API_KEY_INVALID"),
            "refused",
        ),
        (Fail(403, "Permission denied: Consumer has been suspended."), "refused"),
        (Fail(404, "models/gemini-9 is not found for API version v1beta."), "does not exist"),
        (Fail(429, "Resource has been exhausted (e.g. check quota)."), "rate limited"),
        (Fail(500, "An internal error has occurred."), "HTTP 500"),
        (Fail(400, "Request contains an invalid argument: temperature."), "invalid argument"),
    ],
)
def test_gemini_errors_are_one_line_provider_errors(
    write: Write,
    gemini_server: GeminiServer,
    monkeypatch: pytest.MonkeyPatch,
    reply: Fail,
    says: str,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gm-secret-key")
    model = {"provider": "gemini", "name": "gemini-9", "endpoint": gemini_server.root}
    root = write({"agent.yaml": agent_yaml(model, execution={"max_retries": 0})})
    gemini_server.script(reply)

    error = failure(build(root))

    assert isinstance(error, ProviderError)
    message = str(error)
    assert_user_message(message)
    assert message.startswith("gemini/gemini-9: ")
    assert says in message
    assert "gm-secret-key" not in message
    if says == "refused":
        assert "GOOGLE_API_KEY" in message
    assert len(gemini_server.requests) == 1


def test_gemini_rate_limit_is_retried(
    write: Write, gemini_server: GeminiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test-key")
    model = {"provider": "google", "name": "gemini-2.5-flash", "endpoint": gemini_server.root}
    root = write({"agent.yaml": agent_yaml(model, execution={"max_retries": 1})})
    gemini_server.script(Fail(429, "Resource has been exhausted."), text("After a retry."))

    assert final(turn(build(root))).text == "After a retry."
    assert len(gemini_server.requests) == 2


# --- hosted OpenAI-compatible services ----------------------------------------------------

HOSTED_CASES = [
    ("groq", "llama-3.3-70b-versatile", "GROQ_API_KEY"),
    ("deepseek", "deepseek-chat", "DEEPSEEK_API_KEY"),
    ("openrouter", "anthropic/claude-sonnet-4-5", "OPENROUTER_API_KEY"),
    ("together_ai", "meta-llama/Llama-3.3-70B-Instruct-Turbo", "TOGETHER_API_KEY"),
    ("together", "Qwen/Qwen2.5-72B-Instruct-Turbo", "TOGETHERAI_API_KEY"),
    ("fireworks_ai", "accounts/fireworks/models/llama-v3p3-70b-instruct", "FIREWORKS_API_KEY"),
    ("xai", "grok-4", "XAI_API_KEY"),
    ("grok", "grok-3-mini", "XAI_API_KEY"),
    ("mistral", "mistral-large-latest", "MISTRAL_API_KEY"),
    ("cerebras", "llama-3.3-70b", "CEREBRAS_API_KEY"),
    ("moonshot", "kimi-k2-0905-preview", "MOONSHOT_API_KEY"),
    ("nebius", "meta-llama/Meta-Llama-3.1-70B-Instruct", "NEBIUS_API_KEY"),
    ("ovhcloud", "gpt-oss-120b", "OVHCLOUD_API_KEY"),
    ("sambanova", "Meta-Llama-3.3-70B-Instruct", "SAMBANOVA_API_KEY"),
    ("dashscope", "qwen-plus", "DASHSCOPE_API_KEY"),
    ("vercel_ai_gateway", "openai/gpt-4o-mini", "VERCEL_AI_GATEWAY_API_KEY"),
]


def test_every_hosted_provider_has_a_case_a_url_and_key_variables() -> None:
    covered = {ProviderType.lookup(prefix) for prefix, _, _ in HOSTED_CASES}
    assert covered == set(HOSTED_URLS)
    for kind in HOSTED_URLS:
        assert ENV_VARS[kind]["api_key"] and kind in HOSTED_URL_VARS


@pytest.mark.parametrize(("prefix", "model", "key_var"), HOSTED_CASES)
def test_hosted_provider_reaches_its_endpoint_with_model_and_key(
    write: Write,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    prefix: str,
    model: str,
    key_var: str,
) -> None:
    kind = ProviderType.lookup(prefix)
    assert kind is not None
    monkeypatch.setenv(key_var, f"key-for-{prefix}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-leak")
    monkeypatch.setenv(HOSTED_URL_VARS[kind], openai_server.url)
    openai_server.script(text(f"Hello from {prefix}."))

    events = turn(build(write(image(f"{prefix}/{model}"))))

    assert final(events).text == f"Hello from {prefix}."
    (request,) = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == model
    assert bearer(request) == f"key-for-{prefix}"
    assert "sk-openai-must-not-leak" not in json.dumps(request.headers)


def test_hosted_provider_from_agent_yaml_and_config_yaml(
    write: Write, openai_server: OpenAIServer, isolated_home: Path
) -> None:
    """agent.yaml `provider: groq`, its key and endpoint from ~/.holodeck/config.yaml."""
    entry = {"api_key": "gsk-from-config", "endpoint": openai_server.url}
    (isolated_home / "config.yaml").write_text(
        dump({"providers": {"groq": entry}}), encoding="utf-8"
    )
    root = write({"agent.yaml": agent_yaml({"provider": "groq", "name": "llama-3.1-8b-instant"})})
    openai_server.script(text("ok"))

    assert final(turn(build(root))).text == "ok"
    (request,) = openai_server.requests
    assert request.body["model"] == "llama-3.1-8b-instant"
    assert bearer(request) == "gsk-from-config"


@pytest.mark.parametrize(
    ("prefix", "variable"),
    [(prefix, var) for prefix, _, var in HOSTED_CASES if prefix not in {"together", "grok"}]
    + [("google", "GOOGLE_API_KEY"), ("gemini", "GOOGLE_API_KEY")],
)
def test_missing_key_names_the_variable_to_set(write: Write, prefix: str, variable: str) -> None:
    with pytest.raises(ProviderError) as caught:
        build(write(image(f"{prefix}/some-model")))

    message = str(caught.value)
    assert_user_message(message)
    assert "no API key is set" in message and variable in message


def test_a_named_entry_may_give_its_type_as_an_alias(
    write: Write, gemini_server: GeminiServer, isolated_home: Path
) -> None:
    entry = {"provider": "gemini", "api_key": "gm-team", "endpoint": gemini_server.root}
    (isolated_home / "config.yaml").write_text(
        dump({"providers": {"team-gemini": entry}}), encoding="utf-8"
    )
    gemini_server.script(text("ok"))

    assert final(turn(build(write(image("team-gemini/gemini-2.5-flash"))))).text == "ok"
    assert gemini_server.requests[0].headers["x-goog-api-key"] == "gm-team"


def test_hosted_refused_key_names_the_services_variable(
    write: Write, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "bad-key")
    monkeypatch.setenv("DEEPSEEK_BASE_URL", openai_server.url)
    root = write(
        {
            "agent.yaml": agent_yaml(
                {"provider": "deepseek", "name": "deepseek-chat"}, execution={"max_retries": 0}
            )
        }
    )
    openai_server.script(scripted_servers.unauthorized())

    error = failure(build(root))

    assert isinstance(error, ProviderError)
    assert str(error).startswith("deepseek/deepseek-chat: the API key was refused")
    assert "DEEPSEEK_API_KEY" in str(error)


def test_default_urls_are_pydantic_ais() -> None:
    """Our default base URLs are the ones pydantic-ai's provider classes use."""
    from pydantic_ai.providers import (
        alibaba,
        cerebras,
        deepseek,
        fireworks,
        moonshotai,
        nebius,
        openrouter,
        ovhcloud,
        sambanova,
        together,
        vercel,
    )

    classes: dict[ProviderType, Any] = {
        ProviderType.DEEPSEEK: deepseek.DeepSeekProvider,
        ProviderType.OPENROUTER: openrouter.OpenRouterProvider,
        ProviderType.TOGETHER_AI: together.TogetherProvider,
        ProviderType.FIREWORKS_AI: fireworks.FireworksProvider,
        ProviderType.CEREBRAS: cerebras.CerebrasProvider,
        ProviderType.MOONSHOT: moonshotai.MoonshotAIProvider,
        ProviderType.NEBIUS: nebius.NebiusProvider,
        ProviderType.OVHCLOUD: ovhcloud.OVHcloudProvider,
        ProviderType.SAMBANOVA: sambanova.SambaNovaProvider,
        ProviderType.DASHSCOPE: alibaba.AlibabaProvider,
        ProviderType.VERCEL_AI_GATEWAY: vercel.VercelProvider,
    }
    for kind, cls in classes.items():
        assert HOSTED_URLS[kind].rstrip("/") == cls(api_key="k").base_url.rstrip("/"), kind


def test_override_keeps_slashes_in_the_model_name() -> None:
    chosen = override_settings("openrouter/meta-llama/llama-3.3-70b-instruct")
    assert (chosen.provider, chosen.name) == ("openrouter", "meta-llama/llama-3.3-70b-instruct")


def test_the_cli_does_not_import_provider_sdks_at_start() -> None:
    code = (
        "import sys, holodeck.cli.main, holodeck.llm.providers, holodeck.spec.models.model_settings;"
        "print(sorted(m for m in sys.modules if m.startswith(('google.genai', 'pydantic_ai'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
