"""The official AG-UI client (`@ag-ui/client`, npm, installed in tests/js by the
Makefile) run by Node against a served agent, and the raw AG-UI stream read and checked
with the `ag-ui-protocol` Python types."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

JS = Path(__file__).resolve().parent / "js"


def node_client() -> Path:
    """tests/js, with @ag-ui/client installed; or the test is skipped saying how."""
    if shutil.which("node") is None:
        pytest.skip("needs Node (apt-get install -y nodejs)")
    if not (JS / "node_modules" / "@ag-ui" / "client" / "package.json").is_file():
        pytest.skip("needs tests/js's packages: npm ci --prefix tests/js (make test does it)")
    return JS


def run_client(url: str, thread_id: str, *messages: str, key: str | None = None) -> list[Any]:
    """One run per message on one thread, by the official client: per run, the events
    it received, its messages and state after the run, and its result or error."""
    env = {**os.environ, "HOLODECK_KEY": key or ""}
    done = subprocess.run(
        ["node", str(node_client() / "agui_run.mjs"), url, thread_id, *messages],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def run_input(thread_id: str, content: Any, run_id: str = "run-1") -> dict[str, Any]:
    return {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": "m-1", "role": "user", "content": content}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def stream_events(text: str) -> list[Any]:
    """The AG-UI events of a Server-Sent Events body, each parsed by the protocol's
    Python types (an event they do not accept fails the test)."""
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(Event)
    lines = [line for line in text.splitlines() if line.startswith("data:")]
    return [adapter.validate_json(line[5:]) for line in lines]
