"""`holodeck push IMAGE --to URL`: an image packed with its `${VAR}` resolved here and
uploaded with a key, to a real `holodeck deploy` process on 127.0.0.1; refused before
anything is sent for plain http to another host, an unset variable or no image."""

from __future__ import annotations

import json
import tarfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from conftest import Write
from holodeck.cli.main import cli
from server_harness import agent_dir, deploy_process

KEY = "push-key-0123456789abcdef"


@pytest.fixture(scope="module")
def served_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("served")


@pytest.fixture(scope="module")
def server(served_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`holodeck deploy` taking uploads behind one API key (run in `served_root`, where it
    keeps uploads); its base URL."""
    root = served_root
    home = tmp_path_factory.mktemp("server-home")
    desk = agent_dir(
        root / "desk",
        "desk",
        deployment={
            "allow_uploads": True,
            "auth": {"type": "api_key", "api_keys": [KEY]},
        },
    )
    env = {"HOLODECK_HOME": str(home)}
    with deploy_process(str(desk), "--model", "test", env=env, cwd=root) as (_, url):
        yield url


def image(write: Write, name: str = "billing") -> Path:
    return write(
        {
            "config.yaml": f"""
                spec_version: 1
                name: {name}
                description: Billing desk for ${{TEAM}}, reached at $${{NOT_A_VARIABLE}}
                """,
            "AGENTS.md": "You answer billing questions.\n",
            "tools/mcp/ledger.yaml": """
                name: ledger
                transport: http
                url: ${LEDGER_URL:-https://ledger.invalid/mcp}
                headers:
                  Authorization: Bearer ${LEDGER_TOKEN}
                """,
        }
    )


def push(*args: str, **env: str) -> Result:
    return CliRunner().invoke(cli, ["push", *args], env=env)


def agents(url: str) -> dict[str, Any]:
    request = urllib.request.Request(url + "/v1/agents", headers={"Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return {a["name"]: a for a in json.loads(response.read())["agents"]}


def test_an_image_is_pushed_with_its_variables_resolved_here(
    server: str, served_root: Path, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = image(write)
    monkeypatch.setenv("TEAM", "the north office")
    monkeypatch.setenv("LEDGER_TOKEN", "tok-secret")

    result = push(str(root), "--to", server + "/", HOLODECK_API_KEY=KEY)

    assert result.exit_code == 0, result.output
    assert "Pushed billing" in result.output and f"to {server}/v1/agents" in result.output
    served = agents(server)["billing"]
    assert served["uploaded"] is True
    # resolved by the client: the server never expands an upload's ${VAR}; `$${...}`
    # was the literal it means
    assert (
        served["description"] == "Billing desk for the north office, reached at ${NOT_A_VARIABLE}"
    )
    assert "${TEAM}" in (root / "config.yaml").read_text(encoding="utf-8")  # left as written
    with tarfile.open(served_root / ".holodeck" / "server" / "agents" / "billing.tar.gz") as tar:
        member = tar.extractfile("tools/mcp/ledger.yaml")
        assert member is not None
        ledger = yaml.safe_load(member.read())
    assert ledger["headers"] == {"Authorization": "Bearer tok-secret"}
    assert ledger["url"] == "https://ledger.invalid/mcp"  # the reference's default


def test_a_wrong_or_missing_key_is_refused_with_what_to_set(server: str, write: Write) -> None:
    root = image(write, "refused")
    env = {"TEAM": "t", "LEDGER_TOKEN": "x"}

    wrong = push(str(root), "--to", server, "--key", "not-the-key", **env)
    assert wrong.exit_code == 2, wrong.output
    assert "refused the image" in wrong.output and "the key was refused" in wrong.output

    missing = push(str(root), "--to", server, **env)
    assert missing.exit_code == 2, missing.output
    assert "set HOLODECK_API_KEY (or --key)" in missing.output
    assert "Traceback" not in wrong.output + missing.output
    assert "refused" not in agents(server)


def test_an_unset_variable_is_named_at_its_line_and_nothing_is_sent(
    server: str, write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = image(write, "unsent")
    monkeypatch.setenv("TEAM", "t")
    monkeypatch.delenv("LEDGER_TOKEN", raising=False)

    result = push(str(root), "--to", server, HOLODECK_API_KEY=KEY)

    assert result.exit_code == 2, result.output
    assert "tools/mcp/ledger.yaml:5" in result.output
    assert "environment variable `LEDGER_TOKEN` is not set" in result.output
    assert "unsent" not in agents(server)


@pytest.mark.parametrize(
    "url",
    ["http://agents.example.com:8000", "http://10.0.0.7:8000", "ftp://127.0.0.1/"],
)
def test_plain_http_to_another_host_is_refused_before_anything_is_read(
    write: Write, url: str
) -> None:
    root = image(write)  # its ${TEAM} is unset: the URL is refused first

    result = push(str(root), "--to", url, HOLODECK_API_KEY=KEY)

    assert result.exit_code == 2, result.output
    if url.startswith("http:"):
        assert "refusing to push to" in result.output and "over plain http" in result.output
        assert "use https://" in result.output
    else:
        assert "is not a server URL" in result.output


def test_a_server_that_is_not_there_is_an_execution_error(write: Write) -> None:
    root = write({"config.yaml": "spec_version: 1\nname: lonely\n", "AGENTS.md": "Hi.\n"})

    result = push(str(root), "--to", "http://127.0.0.1:9", HOLODECK_API_KEY=KEY)

    assert result.exit_code == 3, result.output
    assert "cannot reach http://127.0.0.1:9/v1/agents" in result.output
