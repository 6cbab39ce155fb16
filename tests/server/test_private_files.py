"""What a server keeps about its users (request logs, the session database, its state
directory) is created for its owner only (files 0600, directories 0700), whatever the
umask it runs under."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx2 as httpx
import pytest

from server_harness import agent_dir, deploy_process


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_a_deployed_servers_logs_sessions_and_state_are_private(tmp_path: Path, umask: int) -> None:
    root = agent_dir(tmp_path / "agent", "keeper", memory={"store": "sqlite"})
    work = tmp_path / "work"  # the state directory is .holodeck/server under it
    work.mkdir()
    home = tmp_path / "home" / "holodeck"  # missing: the server creates it
    env = {"HOLODECK_HOME": str(home)}
    with deploy_process(str(root), "--model", "test", env=env, cwd=work, umask=umask) as (
        _,
        url,
    ):
        answer = httpx.post(url + "/v1/chat", json={"message": "keep this"}, timeout=30)
        assert answer.status_code == 200, answer.text
        state = work / ".holodeck" / "server"
        database = state / "sessions.db"
        log = home / "logs" / "agent-keeper.log"
        assert database.is_file() and log.is_file()
        files = [database, log, *state.glob("sessions.db-*")]  # SQLite's -wal and -shm
        directories = [work / ".holodeck", state, tmp_path / "home", home, home / "logs"]
        assert {str(p): oct(_mode(p)) for p in files} == {str(p): "0o600" for p in files}
        assert {str(p): oct(_mode(p)) for p in directories} == {
            str(p): "0o700" for p in directories
        }


def test_a_log_file_a_rotation_starts_is_private(tmp_path: Path) -> None:
    from holodeck.server._request_log import RequestLog, RequestRecord
    from holodeck.spec.models.settings import LoggingSettings

    previous = os.umask(0o000)
    try:
        log = RequestLog(tmp_path / "logs" / "agent-x.log", LoggingSettings())
        log._handler.doRollover()
        said = RequestRecord("r", "/v1/chat", 200, started=0.0, message="hello", response="hi")
        log.write(said)
        log.close()
    finally:
        os.umask(previous)
    files = sorted((tmp_path / "logs").iterdir())
    assert len(files) == 2  # the rotated file and the new one
    assert [oct(_mode(p)) for p in files] == ["0o600", "0o600"]
    assert oct(_mode(tmp_path / "logs")) == "0o700"


def test_existing_files_and_directories_keep_their_modes(tmp_path: Path) -> None:
    from holodeck.private_files import create_private_file, private_dir

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o750)
    kept = shared / "sessions.db"
    kept.write_bytes(b"")
    kept.chmod(0o640)
    private_dir(shared)
    create_private_file(kept)
    assert (oct(_mode(shared)), oct(_mode(kept))) == ("0o750", "0o640")
