"""`holodeck push`: send an agent image to a running server (`POST /v1/agents`), packed
with its `${VAR}` references resolved here, where the author's environment is."""

from __future__ import annotations

import json
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from holodeck.config.env_vars import environment_for
from holodeck.config.loader import load_agent
from holodeck.errors import ConfigurationError, ExecutionError
from holodeck.net import loopback_name
from holodeck.spec.archives.resolved_pack import pack_resolved
from holodeck.spec.archives.unpack import human_size

KEY_VARIABLE = "HOLODECK_API_KEY"
SERVER_VARIABLE = "HOLODECK_SERVER"
TIMEOUT_S = 300.0  # the server unpacks and loads the image before it answers


@click.command(
    "push",
    epilog="Exit codes: 0 served, 2 invalid image, URL or key, or the server refused the "
    "image, 3 the server could not be reached or failed.",
)
@click.argument("image", type=click.Path(path_type=Path))
@click.option(
    "--to",
    "server",
    required=True,
    envvar=SERVER_VARIABLE,
    help=f"The server's base URL, e.g. https://agents.example.com [env: {SERVER_VARIABLE}].",
)
@click.option(
    "--key",
    envvar=KEY_VARIABLE,
    default=None,
    help=f"An API key of the server's deployment.auth.api_keys [env: {KEY_VARIABLE}; prefer "
    "the variable: a command line is visible to other users of the machine].",
)
def push(image: Path, server: str, key: str | None) -> None:
    """Send an agent image directory to a running `holodeck deploy` server.

    The image is checked, then packed as `holodeck pack` packs it, with every
    `${VAR}` in config.yaml, tools/mcp/*.yaml and tests/*.yaml (sub-agents' too)
    resolved from this environment and the image's .env: a server never expands an
    uploaded image's variables itself. Resolved values travel in the archive, so the
    URL must be https://, or http:// to this machine (localhost, 127.0.0.1, ::1).
    The server must allow uploads (`holodeck deploy --allow-uploads`).

    \b
    Examples:
      export HOLODECK_API_KEY=...   # a key of the server's deployment.auth.api_keys
      holodeck push my-image --to https://agents.example.com
      holodeck push my-image --to http://127.0.0.1:8000
    """
    endpoint = _endpoint(server)
    if image.is_file():
        raise ConfigurationError(
            f"{image} is a file: push takes an agent image directory, whose ${{VAR}} "
            "references it resolves here",
            hint="push the directory it was packed from, or send an archive as it is: "
            "curl --data-binary @IMAGE.tar.gz -H 'Content-Type: application/gzip' URL/v1/agents",
        )
    load_agent(image, strict=False)  # every problem, unset variables too, at its line
    with tempfile.TemporaryDirectory(prefix="holodeck-push-") as scratch:
        archive = Path(scratch) / "image.tar.gz"
        packed = pack_resolved(image, archive, environment_for(image.resolve()))
        status = _upload(endpoint, archive.read_bytes(), key)
    state = status.get("status", "loading")
    click.echo(
        f"Pushed {status.get('name', image.name)} ({human_size(packed.archive_bytes)}) "
        f"to {endpoint}: {state}."
    )
    if state == "failed":
        raise ExecutionError(
            f"the server took the image but the agent did not start: {status.get('error')}",
            hint="fix what it says, then push again; `holodeck validate` and `holodeck chat` "
            "run the image here first",
        )


def _endpoint(server: str) -> str:
    """`server`'s `/v1/agents` URL; refuses a scheme but https, and http to another host."""
    parts = urlsplit(server.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"--to {server!r} is not a server URL",
            hint="give the base URL the server answers at, e.g. https://agents.example.com "
            "or http://127.0.0.1:8000",
        )
    if parts.scheme == "http" and not loopback_name(parts.hostname):
        raise ConfigurationError(
            f"refusing to push to {server} over plain http: the image carries the values "
            "of its ${VAR} references (keys among them), readable by anyone on the way",
            hint="use https:// (put the server behind TLS), or push over http only to this "
            "machine (localhost, 127.0.0.1, ::1), e.g. through an SSH tunnel",
        )
    base = server.strip().rstrip("/").removesuffix("/v1/agents")
    return base + "/v1/agents"


def _upload(endpoint: str, data: bytes, key: str | None) -> dict[str, Any]:
    """POST the archive; the server's answer, or its refusal as an error to fix."""
    headers = {"Content-Type": "application/gzip"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(endpoint, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
            return answer
    except urllib.error.HTTPError as refused:
        raise _refusal(endpoint, refused, key) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ExecutionError(
            f"cannot reach {endpoint}: {reason}",
            hint="check the URL and that `holodeck deploy --allow-uploads` runs there",
        ) from None


def _refusal(endpoint: str, refused: urllib.error.HTTPError, key: str | None) -> Exception:
    try:
        body = json.loads(refused.read())
        error = body.get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    said = error.get("message") or f"{refused.code} {refused.reason}"
    hint = error.get("hint")
    if refused.code == 401:
        hint = (
            f"set {KEY_VARIABLE} (or --key) to a key of the server's deployment.auth.api_keys"
            if not key
            else "the key was refused: check it against the server's deployment.auth.api_keys"
        )
    text = f"{endpoint} refused the image: {said}"
    if refused.code >= 500:
        return ExecutionError(text, hint=hint or "see the server's log")
    return ConfigurationError(text, hint=hint)
