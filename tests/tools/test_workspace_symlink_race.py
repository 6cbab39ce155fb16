"""The file tools' paths cannot be redirected out of the workspace by a symlink swapped
in between the check of a path and the opening of its file: while another thread keeps
replacing a folder of the workspace with a symlink to a folder outside, no write, edit
or read ever reaches the outside folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from holodeck.tools.workspace import WorkspaceError, WorkspaceFiles

ROUNDS = 2000
# `inner` (a real folder the check resolves to) and a symlink to the outside folder
# trade places atomically (renameat2 RENAME_EXCHANGE), over and over
SWAP = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
inner, link = (os.fsencode(p) for p in sys.argv[1:3])
while True:
    if libc.renameat2(-100, inner, -100, link, 2) != 0:
        raise SystemExit(os.strerror(ctypes.get_errno()))
"""


def test_a_symlink_swapped_in_mid_call_never_leads_outside(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "inner").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (work / "inner" / "secret.txt").write_text("mine", encoding="utf-8")
    (work / "sub").symlink_to("inner")  # a symlink inside is followed: the real path is checked
    (work / "link").symlink_to(outside, target_is_directory=True)
    files = WorkspaceFiles(work)
    # another process swaps `inner` for a symlink out and back, as fast as it can
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAP, str(work / "inner"), str(work / "link")]
    )
    read_outside = 0
    try:
        for _ in range(ROUNDS):
            for call in (
                lambda: files.write_file("sub/written.txt", "x"),
                lambda: files.read_file("sub/secret.txt"),
            ):
                try:
                    said = call()
                except WorkspaceError:
                    continue  # refused
                except OSError:
                    continue  # the path changed under the call: it failed
                read_outside += said == "secret"
    finally:
        swapper.kill()
        swapper.wait()
    assert not (outside / "written.txt").exists()
    assert read_outside == 0


def test_a_symlink_inside_the_workspace_still_works(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "real").mkdir(parents=True)
    (work / "alias").symlink_to(work / "real", target_is_directory=True)
    files = WorkspaceFiles(work)
    assert (
        files.write_file("alias/a.txt", "through the alias") == "wrote 17 characters to real/a.txt"
    )
    assert files.read_file("alias/a.txt") == "through the alias"
    assert files.edit_file("alias/a.txt", "the alias", "it") == "edited real/a.txt"
    (work / "out").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(WorkspaceError, match="symlink leads outside"):
        files.write_file("out/b.txt", "no")
