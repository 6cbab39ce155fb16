"""The A2A section of docs/deploy.md: its curl example runs as written against a served
agent (the address it names replaced with the test server's)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from server_harness import REPO, WEATHER, served


def a2a_section() -> str:
    text = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    start = text.index("### A2A (Agent2Agent)")
    return text[start : text.index("\n### ", start + 1)]


def documents(output: str) -> list[Any]:
    """The JSON documents printed one after another."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(output):
        if output[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(output, at)
        found.append(value)
    return found


def test_the_a2a_curl_example_runs(tmp_path: Path) -> None:
    (block,) = re.findall(r"^```bash\n(.*?)^```$", a2a_section(), flags=re.M | re.S)
    with served(WEATHER, state_dir=tmp_path) as server:
        script = block.replace("localhost:8000", server.url)
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    card, reply = documents(done.stdout)
    assert card["name"] == "weather"
    assert card["supportedInterfaces"][0]["url"] == server.url + "/a2a/weather"
    task = reply["result"]
    assert task["status"]["state"] == "completed"
    assert (
        task["artifacts"][0]["parts"][0]["text"]
        == "city Oslo, temperature 6 °C, conditions overcast"
    )
    (call,) = task["metadata"]["holodeck"]["tool_calls"]
    assert call["name"] == "get_weather"
