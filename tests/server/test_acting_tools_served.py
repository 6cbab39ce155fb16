"""Acting tools on a server: each session's commands run in a folder of its own under the
server's state folder, in the sandbox; `sandbox: {type: none}` needs an acknowledgement
to be served and is refused as an upload."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from holodeck.cli.main import cli
from server_harness import Serve, agent_dir

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox)"
)


def _shell(command: str) -> str:
    return "/call shell " + json.dumps({"command": command})


@needs_bwrap
def test_each_server_session_gets_a_workspace_under_the_state_folder(
    serve: Serve,
    tmp_path: Path,
) -> None:
    root = agent_dir(tmp_path / "coder", name="coder", builtins=["shell"])
    (root / "secret.txt").write_text("the agent's own file")
    state = tmp_path / "state"
    old = state / "work" / "forgotten"
    old.mkdir(parents=True)
    long_ago = time.time() - 8 * 24 * 3600
    os.utime(old, (long_ago, long_ago))
    with serve(root) as server:
        one = server.chat(_shell("echo one > mine.txt; ls"), session_id="s-one")
        two = server.chat(_shell("ls; cat " + str(root / "secret.txt")), session_id="s-two")
    assert one.status_code == 200 and two.status_code == 200, (one.text, two.text)
    assert (state / "work" / "s-one" / "mine.txt").read_text() == "one\n"
    seen = two.json()["tool_calls"][0]["result"]
    assert "mine.txt" not in seen and "the agent's own file" not in seen
    assert not old.exists()  # unused for longer than sessions are kept


def _image(config: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, text in {"config.yaml": config, "AGENTS.md": "You help.\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_an_upload_without_a_sandbox_is_refused(serve: Serve, tmp_path: Path) -> None:
    root = agent_dir(tmp_path / "host", name="host")
    config = (
        "spec_version: 1\nname: loose\ninstructions: AGENTS.md\n"
        "os_env:\n  type: caller_process\n  sandbox: {type: none}\n"
    )
    with serve(root, allow_uploads=True) as server:
        refused = server.client.post(
            "/v1/agents", content=_image(config), headers={"Content-Type": "application/gzip"}
        )
    assert refused.status_code == 422, refused.text
    assert "`sandbox: {type: none}` is refused for an uploaded agent" in refused.text


def test_deploy_refuses_an_unwalled_agent_unless_acknowledged(tmp_path: Path) -> None:
    root = agent_dir(tmp_path / "loose", name="loose", builtins=["shell"], sandbox={"type": "none"})
    result = CliRunner().invoke(cli, ["deploy", str(root), "--port", "1"])
    assert result.exit_code != 0
    assert "would run the model's commands on this server without walls" in result.output
    assert "i_understand_this_is_unsafe: true" in result.output
    assert "Traceback" not in result.output
