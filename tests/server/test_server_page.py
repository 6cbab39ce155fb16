"""The chat page served at `/` by `holodeck deploy`, driven in headless Chromium against
a real server process running the offline `test` model."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from browser import chromium_page, playwright_api
from server_harness import WEATHER, deploy_process

QUESTION = "What's the weather in Paris? /call *"  # `/call *`: the offline model calls every tool
WEATHER_DESCRIPTION = (
    "description: Answers questions about current weather and tomorrow's forecast."
)


@pytest.fixture
def sync_api() -> Any:
    return playwright_api()


def get_json(url: str, key: str | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url)
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@contextmanager
def deployed(*agents: Path) -> Iterator[str]:
    """`holodeck deploy AGENT... --model test`; its base URL once /health answers."""
    with deploy_process(*map(str, agents), "--model", "test") as (_, base):
        yield base


@contextmanager
def browser_page(sync_api: Any, base: str, width: int = 1100) -> Iterator[tuple[Any, list[str]]]:
    """A page that may only reach `base`; the list collects what else it tried and the
    page's script errors."""
    with chromium_page(sync_api, lambda url: url.startswith(base + "/"), width, 800) as (
        page,
        problems,
    ):
        page.set_default_timeout(15_000)
        sync_api.expect.set_options(timeout=15_000)  # a first turn on a busy machine
        yield page, problems


def ask(page: Any, text: str, *, press_enter: bool = True) -> None:
    box = page.get_by_test_id("message-input")
    box.fill(text)
    if press_enter:
        box.press("Enter")
    else:
        page.get_by_role("button", name="Send").click()


def test_chat_page_streams_answers_and_tool_calls_in_one_session(
    sync_api: Any, tmp_path: Path
) -> None:
    expect = sync_api.expect
    with (
        deployed(WEATHER) as base,
        browser_page(sync_api, base) as (page, problems),
    ):
        page.goto(base + "/")
        expect(page).to_have_title("weather · HoloDeck")
        expect(page.get_by_test_id("agent-name")).to_have_text("weather")
        expect(page.get_by_test_id("agent-description")).to_contain_text(
            "current weather and tomorrow's forecast"
        )
        expect(page.get_by_test_id("agent-select")).to_be_hidden()  # only one agent
        expect(page.get_by_test_id("api-key-form")).to_be_hidden()

        box = page.get_by_test_id("message-input")
        box.fill("first line")
        box.press("Shift+Enter")  # a new line, not a message
        expect(box).to_have_value("first line\n")
        expect(page.get_by_test_id("turn")).to_have_count(0)

        ask(page, QUESTION)
        first = page.get_by_test_id("turn").nth(0)
        expect(first.get_by_test_id("user-message")).to_have_text(QUESTION)
        expect(first).to_have_attribute("data-status", "done")
        expect(page.get_by_role("button", name="Send")).to_be_enabled()
        expect(page.get_by_test_id("message-input")).to_have_value("")

        answer = first.get_by_test_id("answer")
        expect(answer).to_be_visible()
        expect(answer).to_contain_text("get_weather")
        expect(answer).to_contain_text("no weather data")  # from the tools' results
        expect(first.get_by_test_id("usage")).to_contain_text("tokens")

        calls = first.get_by_test_id("tool-call")
        expect(calls).to_have_count(2)
        for name in ("get_weather", "get_forecast"):
            call = first.locator(f'[data-testid="tool-call"][data-tool-name="{name}"]')
            expect(call).to_be_visible()
            expect(call.get_by_test_id("tool-name")).to_have_text(name)
            expect(call.get_by_test_id("tool-state")).to_contain_text("done")
            result = call.get_by_test_id("tool-result")
            expect(result).to_be_hidden()  # collapsed until opened
            call.locator("summary").click()
            expect(call.get_by_test_id("tool-args")).to_contain_text('"city"')
            expect(result).to_be_visible()
            expect(result).to_contain_text("no weather data")

        ask(page, "And tomorrow? /call *", press_enter=False)
        second = page.get_by_test_id("turn").nth(1)
        expect(second).to_have_attribute("data-status", "done")
        expect(second.get_by_test_id("answer")).to_contain_text("get_forecast")

        conversation = page.get_by_test_id("conversation")
        session_id = conversation.get_attribute("data-session-id")
        assert session_id
        status, session = get_json(f"{base}/v1/sessions/{session_id}")
        assert status == 200, session
        said = [m["content"] for m in session["messages"] if m["role"] == "user"]
        assert said == [QUESTION, "And tomorrow? /call *"]
        called = [m["name"] for m in session["messages"] if m["role"] == "tool_call"]
        assert called.count("get_weather") == 2

        # a new conversation forgets the session and the turns on the page
        page.get_by_role("button", name="New conversation").click()
        expect(page.get_by_test_id("turn")).to_have_count(0)
        ask(page, "Hello again")
        expect(page.get_by_test_id("turn").nth(0)).to_have_attribute("data-status", "done")
        fresh = conversation.get_attribute("data-session-id")
        assert fresh and fresh != session_id
        status, session = get_json(f"{base}/v1/sessions/{fresh}")
        assert [m["content"] for m in session["messages"] if m["role"] == "user"] == ["Hello again"]

        assert problems == []


def test_chat_page_asks_for_the_api_key_and_then_answers(sync_api: Any, tmp_path: Path) -> None:
    expect = sync_api.expect
    agent = tmp_path / "weather"
    shutil.copytree(WEATHER, agent, ignore=shutil.ignore_patterns("__pycache__"))
    with (agent / "agent.yaml").open("a", encoding="utf-8") as spec:
        spec.write("\ndeployment:\n  auth:\n    type: api_key\n    api_keys: [k-123]\n")

    with deployed(agent) as base:
        assert get_json(f"{base}/v1/agents")[0] == 401
        with browser_page(sync_api, base, width=390) as (page, problems):  # a phone's width
            page.goto(base + "/")
            form = page.get_by_test_id("api-key-form")
            expect(form).to_be_visible()
            expect(form).to_contain_text("This server needs an API key")

            page.get_by_test_id("api-key-input").fill("wrong")
            page.get_by_role("button", name="Use key").click()
            expect(page.get_by_test_id("api-key-reason")).to_contain_text(
                "not one of this server's keys"
            )
            expect(form).to_be_visible()
            assert page.evaluate("localStorage.getItem('holodeck.apiKey')") is None

            page.get_by_test_id("api-key-input").fill("k-123")
            page.get_by_test_id("api-key-input").press("Enter")
            expect(form).to_be_hidden()
            expect(page.get_by_test_id("agent-name")).to_have_text("weather")
            assert page.evaluate("localStorage.getItem('holodeck.apiKey')") == "k-123"

            ask(page, QUESTION)
            turn = page.get_by_test_id("turn").nth(0)
            expect(turn).to_have_attribute("data-status", "done")
            expect(turn.get_by_test_id("answer")).to_contain_text("no weather data")
            expect(
                turn.locator('[data-testid="tool-call"][data-tool-name="get_weather"]')
            ).to_be_visible()
            expect(page.get_by_role("button", name="Send")).to_be_in_viewport()

            session_id = page.get_by_test_id("conversation").get_attribute("data-session-id")
            status, session = get_json(f"{base}/v1/sessions/{session_id}", key="k-123")
            assert status == 200, session
            assert [m["content"] for m in session["messages"] if m["role"] == "user"] == [QUESTION]

            # the key is remembered: a reload asks for nothing
            page.reload()
            expect(page.get_by_test_id("agent-name")).to_have_text("weather")
            expect(form).to_be_hidden()

            # a key refused while chatting (here: revoked once) is asked for again, and
            # the message goes out once it is given
            refused: list[str] = []

            def revoked_once(route: Any) -> None:
                if refused:
                    route.fallback()
                    return
                refused.append(route.request.headers.get("authorization", ""))
                error = {
                    "type": "unauthorized",
                    "message": "the API key is not one of this server's keys",
                    "hint": "check the key",
                }
                route.fulfill(
                    status=401,
                    content_type="application/json",
                    body=json.dumps({"error": error, "request_id": "r-1"}),
                )

            page.route("**/v1/chat", revoked_once)
            ask(page, "Still there? /call *")
            expect(form).to_be_visible()
            assert refused == ["Bearer k-123"]
            expect(page.get_by_test_id("turn")).to_have_count(0)
            expect(page.get_by_test_id("message-input")).to_have_value("Still there? /call *")
            page.get_by_test_id("api-key-input").fill("k-123")
            page.get_by_role("button", name="Use key").click()
            expect(form).to_be_hidden()
            turn = page.get_by_test_id("turn").nth(0)
            expect(turn.get_by_test_id("user-message")).to_have_text("Still there? /call *")
            expect(turn).to_have_attribute("data-status", "done")
            expect(turn.get_by_test_id("answer")).to_contain_text("no weather data")

            assert problems == []


def test_chat_page_picks_an_agent_and_nests_a_sub_agents_calls_under_its_call(
    sync_api: Any, tmp_path: Path
) -> None:
    expect = sync_api.expect
    agent = tmp_path / "weather"
    shutil.copytree(WEATHER, agent, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(WEATHER, agent / "helper", ignore=shutil.ignore_patterns("__pycache__"))
    helper_spec = agent / "helper" / "agent.yaml"
    helper_spec.write_text(
        helper_spec.read_text(encoding="utf-8")
        .replace("name: weather", "name: helper", 1)
        .replace(WEATHER_DESCRIPTION, "description: Helps the weather agent.", 1),
        encoding="utf-8",
    )
    spec = agent / "agent.yaml"
    helper_tool = (
        "  - type: agent\n    name: helper\n    description: Ask the helper.\n    path: helper\n"
    )
    text = spec.read_text(encoding="utf-8")
    spec.write_text(
        text.replace("\nevaluations:", helper_tool + "\nevaluations:", 1), encoding="utf-8"
    )

    with (
        deployed(agent, agent / "helper") as base,
        browser_page(sync_api, base) as (page, problems),
    ):
        page.goto(base + "/")
        chooser = page.get_by_test_id("agent-select")
        expect(chooser).to_be_visible()
        expect(chooser.locator("option")).to_have_text(["helper", "weather"])
        expect(page.get_by_test_id("agent-name")).to_have_text("helper")  # the first
        expect(page.get_by_test_id("agent-description")).to_have_text("Helps the weather agent.")
        chooser.select_option("weather")
        expect(page.get_by_test_id("agent-name")).to_have_text("weather")

        # the helper calls what the task given to it asks for
        ask(page, '/call get_weather /call get_forecast /call helper {"task": "Paris? /call *"}')
        turn = page.get_by_test_id("turn").nth(0)
        expect(turn).to_have_attribute("data-status", "done")
        session_id = page.get_by_test_id("conversation").get_attribute("data-session-id")
        assert get_json(f"{base}/v1/sessions/{session_id}")[1]["agent"] == "weather"

        top = turn.locator('[data-testid="tool-calls"] > [data-testid="tool-call"]')
        expect(top).to_have_count(3)
        helper = turn.locator('[data-testid="tool-call"][data-tool-name="helper"]')
        helper.locator("> summary").click()
        inner = helper.get_by_test_id("tool-call")
        expect(inner).to_have_count(2)
        expect(inner.nth(0)).to_contain_text("get_weather")
        expect(inner.nth(0)).to_contain_text("by helper")
        expect(inner.nth(1)).to_contain_text("get_forecast")
        written = helper.get_by_test_id("sub-agent-text")
        expect(written).to_be_visible()
        expect(written).to_contain_text("no weather data")

        answer = turn.get_by_test_id("answer")
        expect(answer).to_contain_text("helper: get_weather")
        expect(answer.get_by_test_id("tool-call")).to_have_count(0)
        assert problems == []


def test_chat_page_stops_a_turn_and_shows_failures(sync_api: Any, tmp_path: Path) -> None:
    expect = sync_api.expect
    agent = tmp_path / "weather"
    shutil.copytree(WEATHER, agent, ignore=shutil.ignore_patterns("__pycache__"))
    tools = agent / "tools" / "weather.py"
    source = tools.read_text(encoding="utf-8")
    slow = source.replace(
        'def get_forecast(city: str, unit: str = "celsius") -> dict[str, object]:\n',
        'def get_forecast(city: str, unit: str = "celsius") -> dict[str, object]:\n'
        "    import time\n\n    time.sleep(3)\n",
        1,
    )
    assert slow != source
    tools.write_text(slow, encoding="utf-8")

    with (
        deployed(agent) as base,
        browser_page(sync_api, base) as (page, problems),
    ):
        page.goto(base + "/")
        ask(page, QUESTION)
        turn = page.get_by_test_id("turn").nth(0)
        weather = turn.locator('[data-testid="tool-call"][data-tool-name="get_weather"]')
        forecast = turn.locator('[data-testid="tool-call"][data-tool-name="get_forecast"]')
        expect(weather.get_by_test_id("tool-state")).to_contain_text("done")
        expect(forecast.get_by_test_id("tool-state")).to_have_text("running…")
        page.get_by_role("button", name="Stop").click()
        expect(turn).to_have_attribute("data-status", "stopped")
        expect(turn.get_by_test_id("turn-stopped")).to_be_visible()
        expect(forecast.get_by_test_id("tool-state")).to_have_text("stopped")
        expect(page.get_by_role("button", name="Send")).to_be_visible()
        session_id = page.get_by_test_id("conversation").get_attribute("data-session-id")
        status, session = get_json(f"{base}/v1/sessions/{session_id}")
        assert status == 404 or session["messages"] == []  # the stopped turn is not kept

        # a refusal shows its message and hint
        refusal = {
            "error": {
                "type": "overloaded",
                "message": "the server is busy (64 turns running, 256 waiting)",
                "hint": "retry shortly",
            },
            "request_id": "r-1",
        }
        page.route(
            "**/v1/chat",
            lambda route: route.fulfill(
                status=503, content_type="application/json", body=json.dumps(refusal)
            ),
        )
        ask(page, "Are you there?")
        refused = page.get_by_test_id("turn").nth(1)
        expect(refused).to_have_attribute("data-status", "error")
        expect(refused.get_by_test_id("turn-error")).to_contain_text("the server is busy")
        expect(refused.get_by_test_id("turn-error")).to_contain_text("retry shortly")

        # an error event ends a streamed answer: the text so far stays, the error shows
        events = [
            ("session", {"session_id": "s-1", "agent": "weather", "request_id": "r-2"}),
            ("text", {"text": "Looking it", "agent": ""}),
            ("text", {"text": " up…", "agent": ""}),
            (
                "error",
                {
                    "error": {
                        "type": "model_error",
                        "message": "the model failed",
                        "hint": "check the provider's status",
                    },
                    "request_id": "r-2",
                },
            ),
        ]
        stream = ": ping\r\n\r\n" + "".join(
            f"event: {name}\r\ndata: {json.dumps(data)}\r\n\r\n" for name, data in events
        )
        page.unroute("**/v1/chat")
        page.route(
            "**/v1/chat",
            lambda route: route.fulfill(status=200, content_type="text/event-stream", body=stream),
        )
        ask(page, "Try again")
        failed = page.get_by_test_id("turn").nth(2)
        expect(failed).to_have_attribute("data-status", "error")
        expect(failed.get_by_test_id("answer")).to_have_text("Looking it up…")
        expect(failed.get_by_test_id("turn-error")).to_contain_text("the model failed")
        expect(failed.get_by_test_id("turn-error")).to_contain_text("check the provider's status")
        assert problems == []
