"""The shipped HoloDeck's `deployment:` block: building and pushing a container image,
deploying it to a cloud, and the protocol its server spoke. `holodeck deploy` serves the
agent over HTTP from this machine and builds no image."""

from __future__ import annotations

from typing import Any

# Keys that describe the container image and the cloud it ran in.
CONTAINER_DEPLOYMENT_KEYS = (
    "registry",
    "target",
    "runtime",
    "platform",
    "environment",
    "health_check_path",
)

# What the server speaks here, for the `protocol` message.
_SERVED = (
    "`holodeck deploy` serves one HTTP API: `POST /v1/chat` (JSON, or server-sent events "
    "with `stream: true`) and OpenAI's `POST /v1/chat/completions`"
)


def refuse_container_deployment(data: Any) -> Any:
    """`protocol: rest` says what happens here anyway, so it is dropped; the container
    keys and another protocol are refused in one message, not one per key."""
    if not isinstance(data, dict):
        return data
    if data.get("protocol") == "rest":
        data = {k: v for k, v in data.items() if k != "protocol"}
    found = [k for k in CONTAINER_DEPLOYMENT_KEYS if k in data]
    problems = []
    if "protocol" in data:
        shown = data["protocol"] if isinstance(data["protocol"], str) else "that value"
        problems.append(
            f"`protocol` chose the protocol the shipped HoloDeck's server spoke (`rest`, "
            f"`ag-ui` or `both`); {_SERVED}, and no AG-UI endpoint, so `protocol: {shown}` "
            "cannot be honoured: remove it (or write `protocol: rest`) and point AG-UI "
            "clients at an adapter over /v1/chat"
        )
    if found:
        problems.append(
            "`"
            + "`, `".join(found)
            + "` describe building a container image and deploying it to a cloud, which "
            "`holodeck deploy` does not do: here it serves the agent over HTTP from this "
            "machine. Remove them and set what the server needs: `host`, `port`, `workers`, "
            "`auth`, `rate_limit`, `cors_origins` (see docs/deploy.md); to run in a "
            "container, run `holodeck deploy --host 0.0.0.0` in your own image"
        )
    if problems:
        raise ValueError(". ".join(problems))
    return data
