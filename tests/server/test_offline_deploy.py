"""`holodeck deploy --model test`: the served offline model calls no tool on its own, and a
message that says `/call TOOL` gets that tool called with arguments from its words."""

from __future__ import annotations

import httpx2 as httpx

from server_harness import WEATHER, deploy_process


def test_a_deployed_offline_agent_calls_a_tool_only_when_the_message_asks() -> None:
    with deploy_process(str(WEATHER), "--model", "test") as (_, url):
        plain = httpx.post(
            url + "/v1/chat", json={"message": "What's the weather in Oslo?"}, timeout=30
        )
        assert plain.status_code == 200, plain.text
        assert plain.json()["tool_calls"] == []
        assert plain.json()["response"] == "Test answer to: What's the weather in Oslo?"

        asked = httpx.post(
            url + "/v1/chat",
            json={"message": "What's the weather in Oslo? /call get_weather"},
            timeout=30,
        )
        assert asked.status_code == 200, asked.text
        body = asked.json()
        (call,) = body["tool_calls"]
        assert (call["name"], call["args"]["city"]) == ("get_weather", "Oslo")
        assert "no weather data" not in body["response"]
        assert body["response"] == "city Oslo, temperature 6 °C, conditions overcast"

        unknown = httpx.post(url + "/v1/chat", json={"message": "Hi /call get_tides"}, timeout=30)
        assert unknown.json()["tool_calls"] == []
        assert "/call get_tides: this agent has no tool get_tides" in unknown.json()["response"]
