"""The workspace tools: files confined to the workspace, a shell command and a Python
snippet in the sandbox, and named terminals that keep their state and close with the
session. Shell, code and terminal tests run real bubblewrap sandboxes (skipped where it is
not installed: `make sandbox`)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from holodeck.sandbox import Sandbox, SandboxLimits
from holodeck.tools.workspace import CommandTools, Terminals, WorkspaceError, WorkspaceFiles
from processes import running
from server_harness import until

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sandbox)"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def answer():\n    return 41\n\n\nprint(answer())\n")
    (root / "README.md").write_text("# Demo\nanswer is 41\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


def test_read_gives_the_lines_asked_for(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    assert files.read_file("src/app.py", 2, 2) == "    return 41\n"
    assert files.read_file("src/app.py").startswith("def answer():")
    with pytest.raises(WorkspaceError, match="no such file"):
        files.read_file("missing.py")


@pytest.mark.parametrize(
    ("name", "reason"),
    [("../secret.txt", "`..` is refused"), ("/etc/passwd", "absolute paths are refused")],
)
def test_paths_out_of_the_workspace_are_refused(workspace: Path, name: str, reason: str) -> None:
    files = WorkspaceFiles(workspace)
    with pytest.raises(WorkspaceError, match=reason):
        files.read_file(name)
    with pytest.raises(WorkspaceError, match=reason):
        files.write_file(name, "x")


def test_a_symlink_out_of_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    (workspace / "out").symlink_to(tmp_path)
    files = WorkspaceFiles(workspace)
    with pytest.raises(WorkspaceError, match="symlink leads outside"):
        files.read_file("link.txt")
    with pytest.raises(WorkspaceError, match="symlink leads outside"):
        files.write_file("out/new.txt", "x")
    assert not (tmp_path / "new.txt").exists()
    assert "secret" not in files.glob_files("**/*")
    assert "outside" not in files.grep_files("outside")


def test_write_makes_folders_and_list_shows_them(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    assert files.write_file("docs/a.txt", "hello\n") == "wrote 6 characters to docs/a.txt"
    assert (workspace / "docs" / "a.txt").read_text() == "hello\n"
    assert files.list_folder() == "README.md\ndocs/\nsrc/"


def test_edit_replaces_one_exact_place(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    files.edit_file("src/app.py", "return 41", "return 42")
    assert "return 42" in (workspace / "src" / "app.py").read_text()
    with pytest.raises(WorkspaceError, match="old_text was not found"):
        files.edit_file("src/app.py", "return 43", "return 44")
    (workspace / "twice.txt").write_text("x = 1\nx = 1\n")
    with pytest.raises(WorkspaceError, match="appears 2 times"):
        files.edit_file("twice.txt", "x = 1", "x = 2")
    assert (workspace / "twice.txt").read_text() == "x = 1\nx = 1\n"


def test_glob_and_grep_find_files_and_lines(workspace: Path) -> None:
    files = WorkspaceFiles(workspace)
    assert files.glob_files("**/*.py") == "src/app.py"
    assert files.grep_files(r"\b41\b") == "README.md:2: answer is 41\nsrc/app.py:2:     return 41"
    assert files.grep_files("41", glob="**/*.md") == "README.md:2: answer is 41"
    with pytest.raises(WorkspaceError, match="not a regular expression"):
        files.grep_files("(")


@needs_bwrap
def test_the_shell_runs_in_the_workspace_with_its_exit_code(workspace: Path) -> None:
    commands = CommandTools(Sandbox(workspace, limits=SandboxLimits(timeout=10)))
    answer = asyncio.run(commands.shell("python3 src/app.py; ls /root; exit 3"))
    assert answer.startswith("exit code 3\nstdout:\n41\n")
    answer = asyncio.run(commands.shell("sleep 30", timeout=0.5))
    assert answer.startswith("timed out")


@needs_bwrap
def test_code_runs_in_a_fresh_interpreter_each_call(workspace: Path) -> None:
    commands = CommandTools(Sandbox(workspace))
    first = asyncio.run(commands.run_python("import os\nx = 5\nprint(x * 2, os.getcwd())"))
    assert first == f"exit code 0\nstdout:\n10 {workspace}\n"
    second = asyncio.run(commands.run_python("print(x)"))
    assert "NameError" in second and second.startswith("exit code 1")


@needs_bwrap
def test_terminals_keep_their_state_and_close_with_the_session(workspace: Path) -> None:
    async def session() -> tuple[list[str], list[int]]:
        seen = []
        async with Terminals(Sandbox(workspace)) as terminals:
            await terminals.open("build")
            await terminals.open("other")
            await terminals.write("build", "cd src; GREETING=hi")
            await terminals.write("build", 'echo "$GREETING from $(pwd)"')
            seen.append(await terminals.read("build", wait=5))
            await terminals.write("other", "pwd")
            seen.append(await terminals.read("other", wait=5))
            await terminals.write("other", "sleep 2468.25 &")
            with pytest.raises(WorkspaceError, match="no terminal named 'nope'"):
                await terminals.read("nope")
            pids = [t.process.pid for t in terminals._open.values()]
        return seen, pids

    seen, pids = asyncio.run(session())
    assert seen == [f"hi from {workspace}/src\n", f"{workspace}\n"]
    until(
        lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids) and not running("2468.25"),
        5,
        "the terminals to end with their session",
    )
