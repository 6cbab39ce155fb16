"""Modalities: a served agent publishes what it takes and gives (GET /v1/agents, its A2A
card), and `holodeck validate` warns about inputs the model cannot take (from the
model's profile, or the table of text-only models) and refuses outputs the runtime
cannot produce, each at its line."""

from __future__ import annotations

import asyncio
import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver
from click.testing import CliRunner, Result

from browser import chromium_page, playwright_api
from conftest import Write
from holodeck.cli.main import cli
from holodeck.llm.model_modalities import PROFILE_FLAGS, PROFILE_SILENT, _profile
from holodeck.spec.models.model_settings import ModelSettings, ProviderType
from holodeck.spec.models.settings import Settings
from server_harness import WEATHER, Serve, deploy_process


def image(
    write: Write, model: str = "openai/gpt-4o-mini", inputs: str = "[text]", outputs: str = "[text]"
) -> Path:
    return write(
        {
            "config.yaml": f"""
                spec_version: 1
                name: looker
                description: Looks at what it is shown.
                llm:
                  model: {model}
                interaction:
                  modalities:
                    input: {inputs}
                    output: {outputs}
                """,
            "AGENTS.md": "You describe pictures.\n",
        }
    )


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys are there (never used): only what the modalities say is checked."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(name, "sk-unused")


def validate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["validate", *args])


def line_of(path: Path, needle: str) -> int:
    text = path.read_text(encoding="utf-8")
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# --- published ----------------------------------------------------------------------------


def test_the_agent_list_and_the_a2a_card_publish_each_agents_modalities(
    serve: Serve, write: Write
) -> None:
    looker = image(write, inputs="[text, image, file]")
    with serve(WEATHER, looker) as server:
        agents = {a["name"]: a for a in server.client.get("/v1/agents").json()["agents"]}
        assert agents["looker"]["modalities"] == {
            "input": ["text", "image", "file"],
            "output": ["text"],
        }
        assert agents["weather"]["modalities"] == {"input": ["text"], "output": ["text"]}

        async def cards() -> tuple[list[str], list[str], list[str]]:
            async with httpx.AsyncClient() as http:
                card = await A2ACardResolver(http, server.url + "/a2a/looker").get_agent_card()
                plain = await A2ACardResolver(http, server.url + "/a2a/weather").get_agent_card()
            return (
                list(card.default_input_modes),
                list(card.default_output_modes),
                list(plain.default_input_modes),
            )

        inputs, outputs, plain_inputs = asyncio.run(cards())
        assert inputs == ["text/plain", "image/*", "application/*"]
        assert outputs == ["text/plain"]
        assert plain_inputs == ["text/plain"]


# --- checked by validate --------------------------------------------------------------------


def test_images_for_a_text_only_model_are_a_warning_and_an_error_with_strict(
    write: Write,
) -> None:
    """Only a model known not to take images is warned about: one that takes them, or
    one nothing is known of, is not."""
    root = image(write, model="openai/gpt-3.5-turbo", inputs="[text, image]")
    where = f"config.yaml:{line_of(root / 'config.yaml', 'input:')}"

    warned = validate(str(root))
    assert warned.exit_code == 0, warned.output
    assert "warning: interaction.modalities.input[1]" in warned.output
    assert where in warned.output
    assert "openai/gpt-3.5-turbo is a text-only model" in warned.output
    assert "remove `image` from interaction.modalities.input" in warned.output

    refused = validate(str(root), "--strict")
    assert refused.exit_code == 2, refused.output
    assert "error: interaction.modalities.input[1]" in refused.output
    assert "Traceback" not in refused.output

    for model in ("openai/gpt-4o-mini", "openai/a-model-from-next-year"):
        other = image(write, model=model, inputs="[text, image, file]")
        quiet = validate(str(other), "--strict")
        assert quiet.exit_code == 0, quiet.output
        assert "modalities" not in quiet.output


def test_an_input_the_models_profile_turns_off_is_a_warning(write: Write) -> None:
    root = image(write, model="anthropic/claude-sonnet-4-5", inputs="[text, image, audio]")

    result = validate(str(root), "--json")

    assert result.exit_code == 0, result.output
    assert '"field": "interaction.modalities.input[2]"' in result.output
    assert "profile of anthropic/claude-sonnet-4-5 says it takes no audio" in result.output
    assert "input[1]" not in result.output  # Claude takes images: nothing said


def test_an_output_the_runtime_cannot_produce_is_refused_at_its_line(write: Write) -> None:
    root = image(write, outputs="[text, image]")

    result = validate(str(root))

    assert result.exit_code == 2, result.output
    where = f"config.yaml:{line_of(root / 'config.yaml', 'output:')}"
    assert where in result.output
    assert "error: interaction.modalities.output[1]: looker cannot answer with image" in (
        result.output
    )
    assert "FAILED" in result.output

    # in an archive, the line is the archive's member, not a file of its cache
    packed = CliRunner().invoke(cli, ["pack", str(root), "-o", str(root.parent / "looker.tar.gz")])
    assert packed.exit_code == 0, packed.output
    archived = validate(str(root.parent / "looker.tar.gz"))
    assert archived.exit_code == 2, archived.output
    assert f"looker.tar.gz!/{where}" in archived.output


def test_a_sub_agents_modalities_are_checked_in_its_own_file(write: Write) -> None:
    root = write(
        {
            "config.yaml": """
                spec_version: 1
                name: parent
                llm: {model: openai/gpt-4o-mini}
                tools: {agents: [reader]}
                """,
            "AGENTS.md": "You delegate.\n",
            "agents/reader/config.yaml": """
                spec_version: 1
                name: reader
                description: Reads documents.
                llm: {model: deepseek/deepseek-chat}
                interaction: {modalities: {input: [text, file]}}
                """,
            "agents/reader/AGENTS.md": "You read.\n",
        }
    )

    result = validate(str(root))

    assert result.exit_code == 0, result.output
    assert "agents/reader/config.yaml:5" in result.output
    assert "deepseek/deepseek-chat is a text-only model" in result.output


MODEL_NAMES = (
    "gpt-4o-mini",
    "gpt-4o-audio-preview",
    "claude-sonnet-4-5",
    "gemini-2.5-pro",
    "gemini-2.5-flash-image",
    "llama-3.3-70b",
    "mistral-large-latest",
    "some-model",
)


def test_no_provider_profile_turns_off_the_inputs_validate_does_not_ask_it_about() -> None:
    """`PROFILE_SILENT` saves `holodeck validate` loading pydantic-ai and the provider SDKs
    for images and documents: this holds the reason true for every provider built here."""
    endpoints = {
        ProviderType.AZURE_OPENAI: {
            "endpoint": "https://x.openai.azure.com",
            "api_version": "2024-10-21",
        },
        ProviderType.OPENAI_COMPATIBLE: {"endpoint": "http://127.0.0.1:9/v1"},
    }
    asked = 0
    for provider in ProviderType:
        for name in MODEL_NAMES:
            model = ModelSettings(provider=provider.value, name=name, **endpoints.get(provider, {}))
            profile = _profile(model, Settings(), {})
            asked += bool(profile)
            for modality in PROFILE_SILENT:
                assert profile.get(PROFILE_FLAGS[modality]) is not False, (provider, name, modality)
    assert asked > len(MODEL_NAMES) * 10  # the profiles were read, not skipped


# --- the chat page ---------------------------------------------------------------------------


def png(path: Path) -> bytes:
    """A 1x1 PNG, written to `path`."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )
    path.write_bytes(data)
    return data


def test_the_chat_page_offers_attachments_only_for_what_the_agent_takes(
    write: Write, tmp_path: Path
) -> None:
    sync_api = playwright_api()
    expect = sync_api.expect
    looker = image(write, inputs="[text, image]")
    picture = tmp_path / "cat.png"
    picture_bytes = png(picture)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture\n", encoding="utf-8")
    sent: list[Any] = []

    with (
        deploy_process(str(WEATHER), str(looker), "--model", "test") as (_, base),
        chromium_page(sync_api, lambda url: url.startswith(base + "/"), 1100, 800) as (
            page,
            problems,
        ),
    ):
        page.set_default_timeout(15_000)
        expect.set_options(timeout=15_000)
        page.on(
            "request",
            lambda r: sent.append(r.post_data_json) if r.url == base + "/v1/chat" else None,
        )
        page.goto(base + "/")
        expect(page.get_by_test_id("agent-name")).to_have_text("looker")
        attach = page.get_by_test_id("attach-button")
        expect(attach).to_be_visible()
        picker = page.get_by_test_id("attach-input")
        assert picker.get_attribute("accept") == "image/*"

        # a file of a kind the agent does not take is refused on the page
        picker.set_input_files([str(picture), str(notes)])
        expect(page.get_by_test_id("attachment")).to_have_count(1)
        expect(page.get_by_test_id("attachment")).to_contain_text("cat.png")
        expect(page.get_by_test_id("page-error")).to_contain_text("does not take notes.txt")

        box = page.get_by_test_id("message-input")
        box.fill("What is in this picture?")
        box.press("Enter")
        turn = page.get_by_test_id("turn").nth(0)
        expect(turn).to_have_attribute("data-status", "done")
        expect(turn.get_by_test_id("user-attachment")).to_have_text("cat.png")
        expect(page.get_by_test_id("attachment")).to_have_count(0)  # sent: the tray is empty
        (body,) = sent
        (attachment,) = body["attachments"]
        assert (attachment["media_type"], attachment["name"]) == ("image/png", "cat.png")
        assert base64.b64decode(attachment["data"]) == picture_bytes

        # an agent that takes only text offers no attachments
        page.get_by_test_id("agent-select").select_option("weather")
        expect(page.get_by_test_id("agent-name")).to_have_text("weather")
        expect(attach).to_be_hidden()
        assert problems == []
