"""The sandbox's walls, with real bubblewrap processes: what a command may write, read,
reach and see, and that its time, process and file-size limits stop it and leave nothing
running. The tests that need bubblewrap are skipped where it is not installed
(`make sandbox` installs it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import textwrap
import threading
import time
import urllib.request
from collections.abc import Coroutine, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import ValidationError

from holodeck.sandbox import CommandResult, Sandbox, SandboxLimits, SandboxUnavailable
from holodeck.spec.models.sandbox_settings import SandboxSettings
from local_http import LocalHTTPServer
from processes import running
from server_harness import until

T = TypeVar("T")

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox)"
)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside /tmp, which the sandbox replaces with its own: what is hidden
    there is hidden by the sandbox's rules, not by its private /tmp."""
    root = Path(tempfile.mkdtemp(prefix="holodeck-sandbox-", dir="/var/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _gone(marker: str, within: float = 5.0) -> bool:
    until(lambda: not running(marker), within, f"no process running {marker}")
    return True


@needs_bwrap
def test_a_command_writes_in_the_workspace_and_nowhere_else(outside: Path) -> None:
    workspace = outside / "work"
    workspace.mkdir()
    (outside / "notes.txt").write_text("kept\n")
    sandbox = Sandbox(workspace)
    result = run(
        sandbox.shell(
            f"echo made > made.txt; echo spoiled >> {outside}/notes.txt; "
            f"echo new > {outside}/new.txt; echo x > /usr/holodeck-test; echo done"
        )
    )
    assert (workspace / "made.txt").read_text() == "made\n"
    assert (outside / "notes.txt").read_text() == "kept\n"
    assert not (outside / "new.txt").exists()
    assert not Path("/usr/holodeck-test").exists()
    assert "Read-only file system" in result.stderr
    assert result.stdout == "done\n"


@needs_bwrap
def test_write_paths_are_writable_too(outside: Path) -> None:
    workspace, build = outside / "work", outside / "build"
    workspace.mkdir()
    build.mkdir()
    sandbox = Sandbox(workspace, SandboxSettings(write_paths=["../build"]), base=workspace)
    result = run(sandbox.shell(f"echo built > {build}/out.txt"))
    assert result.exit_code == 0, result.stderr
    assert (build / "out.txt").read_text() == "built\n"


@needs_bwrap
def test_home_config_and_the_servers_env_are_invisible(outside: Path) -> None:
    home = outside / "home"
    (home / ".holodeck").mkdir(parents=True)
    (home / ".holodeck" / "config.yaml").write_text("api_key: home-secret\n")
    server = outside / "server"
    workspace = server / ".holodeck" / "work" / "session-1"
    workspace.mkdir(parents=True)
    (server / ".env").write_text("OPENAI_API_KEY=server-secret\n")
    (workspace / "task.txt").write_text("the task\n")
    command = (
        f"cat task.txt; cat {home}/.holodeck/config.yaml; cat $HOME/.holodeck/config.yaml; "
        f"cat {server}/.env; ls -a {home} {server}"
    )
    environ = {"PATH": os.environ["PATH"], "HOME": str(home)}

    # without the hidden folders the files would be read: the test can tell
    open_view = Sandbox(workspace, environ={"PATH": os.environ["PATH"], "HOME": "/nonexistent"})
    assert "server-secret" in run(open_view.shell(command)).stdout

    sandbox = Sandbox(workspace, hidden=[server], environ=environ)
    result = run(sandbox.shell(command))
    assert result.stdout.startswith("the task\n")
    assert "home-secret" not in result.stdout
    assert "server-secret" not in result.stdout
    assert ".env" not in result.stdout
    # the home folder is empty; of the server's folder, only the way to the workspace shows
    assert run(sandbox.shell(f"ls -A {home}")).stdout == ""
    assert run(sandbox.shell(f"ls -A {server}")).stdout == ".holodeck\n"


@needs_bwrap
def test_a_command_cannot_reach_a_service_on_loopback(outside: Path) -> None:
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args: object) -> None:
            pass

    server = LocalHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        with urllib.request.urlopen(url, timeout=5) as answer:  # reachable from here
            assert answer.read() == b"reached"
        code = f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=3).read())"
        result = run(Sandbox(outside).run(["python3", "-c", code]))
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code != 0
    assert "reached" not in result.stdout
    assert "URLError" in result.stderr


@needs_bwrap
def test_provider_keys_stay_outside_and_passthrough_adds_names(outside: Path) -> None:
    environ = {
        "PATH": os.environ["PATH"],
        "HOME": str(outside),
        "OPENAI_API_KEY": "sk-parent",
        "PIP_INDEX_URL": "https://mirror.example/simple",
    }
    settings = SandboxSettings(env_passthrough=["PIP_INDEX_URL"])
    result = run(Sandbox(outside, settings, environ=environ).shell("env"))
    assert "sk-parent" not in result.stdout
    assert "OPENAI_API_KEY" not in result.stdout
    assert "PIP_INDEX_URL=https://mirror.example/simple" in result.stdout


@needs_bwrap
def test_the_timeout_kills_the_command_and_its_children(outside: Path) -> None:
    limits = SandboxLimits(timeout=1.0)
    started = time.monotonic()
    result = run(Sandbox(outside, limits=limits).shell("sleep 1357.25 & sleep 1357.5; echo never"))
    assert time.monotonic() - started < 5
    assert result.timed_out and result.exit_code is None
    assert "never" not in result.stdout
    assert "timed out" in result.for_model()
    assert _gone("1357.25"), "the background child outlived its command"


@needs_bwrap
def test_nothing_started_by_a_finished_command_keeps_running(outside: Path) -> None:
    result = run(Sandbox(outside).shell("sleep 1358.25 >/dev/null 2>&1 & echo started"))
    assert result.exit_code == 0 and result.stdout == "started\n"
    assert _gone("1358.25")


# The kernel counts a root user's processes against no limit: when the suite runs as root,
# the process-limit tests run their commands as an ordinary user (uid 65534), as a deployed
# server does (its image runs as uid 10001).
def _as_ordinary_user(command: str, *, max_processes: int, timeout: float) -> CommandResult:
    workspace = Path(tempfile.mkdtemp(prefix="holodeck-sandbox-"))
    try:
        user: int | None = None
        if os.geteuid() == 0:
            user = 65534
            os.chown(workspace, user, user)
        limits = SandboxLimits(timeout=timeout, max_processes=max_processes)
        sandbox = Sandbox(workspace, limits=limits, user=user)
        return run(sandbox.shell(command))
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


@needs_bwrap
def test_the_process_limit_stops_new_processes() -> None:
    count = textwrap.dedent(
        """
        python3 - <<'EOF'
        import subprocess
        started = 0
        try:
            for _ in range(200):
                subprocess.Popen(["sleep", "30"])
                started += 1
        except OSError:
            pass
        print("started", started)
        EOF
        """
    )
    result = _as_ordinary_user(count, max_processes=24, timeout=20)
    started = int(result.stdout.split("started ")[1].split()[0])
    assert 5 < started < 24


@needs_bwrap
def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind() -> None:
    bomb = "bomb_4711() { bomb_4711 | bomb_4711 & }; bomb_4711; sleep 1; echo survived"
    started = time.monotonic()
    result = _as_ordinary_user(bomb, max_processes=32, timeout=3)
    assert time.monotonic() - started < 10
    # the process limit stops it: the shell goes on, or (on a busy machine, the bomb still
    # holding every slot) its own next fork is refused and it ends; or the timeout ends it
    refused = "Cannot fork" in result.stderr
    assert result.stdout == "survived\n" or refused or result.timed_out
    assert _gone("bomb_4711")


@needs_bwrap
def test_a_ten_gigabyte_write_is_stopped_by_the_file_size_limit(outside: Path) -> None:
    limits = SandboxLimits(max_file_mb=4)
    started = time.monotonic()
    result = run(Sandbox(outside, limits=limits).shell("head -c 10G /dev/zero > big; echo $?"))
    assert time.monotonic() - started < 10
    assert (outside / "big").stat().st_size <= 4 * 1024 * 1024
    assert result.stdout.strip() != "0"  # killed by SIGXFSZ: 128 + 25


@needs_bwrap
def test_long_output_keeps_its_head_and_tail_and_says_the_cut(outside: Path) -> None:
    limits = SandboxLimits(max_output_chars=1000)
    result = run(Sandbox(outside, limits=limits).shell("seq 1 100000; echo oops >&2"))
    assert result.stdout.startswith("1\n2\n3\n")
    assert result.stdout.endswith("99999\n100000\n")
    assert "bytes cut" in result.stdout
    assert len(result.stdout) < 1200
    assert result.stderr == "oops\n"
    assert result.exit_code == 0


def test_a_missing_bubblewrap_is_an_error_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sh").symlink_to(shutil.which("sh") or "/bin/sh")
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(SandboxUnavailable) as caught:
        run(Sandbox(tmp_path).shell("echo unsandboxed"))
    assert "bubblewrap" in caught.value.message
    assert "apt-get install bubblewrap" in (caught.value.hint or "")
    # only `type: none` runs commands without it
    result = run(Sandbox(tmp_path, SandboxSettings(type="none")).shell("echo plain"))
    assert result.stdout == "plain\n"


def test_settings_spell_the_sandbox_as_omnigent_does() -> None:
    assert SandboxSettings.model_validate({"type": "linux_bwrap"}).type == "bwrap"
    with pytest.raises(ValidationError, match="extra"):
        SandboxSettings.model_validate({"type": "bwrap", "read_paths": ["/"]})
    with pytest.raises(ValidationError):
        SandboxSettings.model_validate({"env_passthrough": ["NOT A NAME"]})
