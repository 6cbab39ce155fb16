"""The official A2A JavaScript SDK (`@a2a-js/sdk`, npm, pinned in tests/js) as a second
client of a `holodeck deploy` process behind a key: it reads the public card, is refused
without the key, then sends (blocking and streamed), reads, cancels a task that returned
at once, and gets the specification's code for a task that does not exist."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from server_harness import WAITING_TOOL, agent_dir, deploy_process, function_tool

JS = Path(__file__).resolve().parents[1] / "js"
KEY = "k-js-secret"
# the SDK's TaskState numbers (the protocol's enum)
WORKING, COMPLETED, CANCELED = 2, 3, 5


def run_js_client(url: str, key: str) -> dict[str, Any]:
    if shutil.which("node") is None:
        pytest.skip("needs Node (apt-get install -y nodejs)")
    if not (JS / "node_modules" / "@a2a-js" / "sdk" / "package.json").is_file():
        pytest.skip("needs tests/js's packages: npm ci --prefix tests/js (make test does it)")
    done = subprocess.run(
        ["node", str(JS / "a2a_run.mjs"), url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOLODECK_KEY": key},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_javascript_sdk_reads_the_card_then_sends_gets_and_cancels_with_the_key(
    tmp_path: Path,
) -> None:
    agent = agent_dir(
        tmp_path / "desk",
        "desk",
        tools=[function_tool("wait_here")],
        python=WAITING_TOOL,
        deployment={"auth": {"type": "api_key", "api_keys": [{"name": "js", "key": KEY}]}},
    )
    env = {"HOLODECK_HOME": str(tmp_path / "home")}
    with deploy_process(str(agent), "--model", "test", env=env) as (_, url):
        got = run_js_client(url, KEY)

    assert got["card"]["name"] == "desk" and got["card"]["streaming"] is True
    assert got["card"]["schemes"] == ["bearer"]
    assert got["card"]["url"].endswith("/a2a/desk")
    assert "401" in got["without_key"]["error"]["message"], got["without_key"]

    blocking = got["blocking"]
    assert blocking["state"] == COMPLETED and blocking["answer"], blocking
    streaming = got["streaming"]
    kinds = [e["kind"] for e in streaming["events"]]
    assert kinds[0] == "task" and kinds[-1] == "statusUpdate", streaming
    assert streaming["events"][-1]["state"] == COMPLETED and streaming["answer"]
    assert got["get"] == {"id": blocking["id"], "state": COMPLETED, "history": 1}
    assert got["cancel"] == {"started": WORKING, "cancelled": CANCELED, "read": CANCELED}
    unknown = got["unknown"]["error"]
    assert unknown["code"] == -32001 and "no-such-task" in unknown["message"], unknown
