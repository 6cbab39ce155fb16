"""The file tools of a workspace: read (line ranges), write, edit (one exact replacement),
list, glob and grep. They run in HoloDeck's process, every path resolved inside the
workspace (`_paths`); results are capped so a big file never floods the model's context.

    files = WorkspaceFiles(Path("work"))
    files.edit_file("app.py", "return 1", "return 2")
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

from holodeck.tools.workspace._errors import WorkspaceError
from holodeck.tools.workspace._paths import inside, open_real, relative, resolve

MAX_CHARS = 100_000  # of one result
MAX_MATCHES = 200  # of glob and grep
MAX_GREP_FILE = 2 * 1024 * 1024  # bigger files are not searched


class WorkspaceFiles:
    """Files under `root`, as the model reads and changes them."""

    def __init__(self, root: Path, *, max_chars: int = MAX_CHARS) -> None:
        self.root = root.resolve()
        self.max_chars = max_chars

    def _text(self, name: str) -> tuple[Path, str]:
        path = resolve(self.root, name)
        if not path.is_file():
            raise WorkspaceError(f"{name}: no such file in the workspace")
        with os.fdopen(open_real(self.root, path, os.O_RDONLY), "rb") as opened:
            if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
                raise WorkspaceError(f"{name}: no such file in the workspace")
            data = opened.read()
        try:
            return path, data.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkspaceError(f"{name}: not a UTF-8 text file") from None

    def _write(self, target: Path, text: str, *, make_folders: bool = False) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        descriptor = open_real(self.root, target, flags, make_folders=make_folders)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as opened:
            opened.write(text)

    def _capped(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return text
        return text[: self.max_chars] + f"\n[... cut at {self.max_chars} of {len(text)} chars]"

    def read_file(self, path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Lines `start_line` to `end_line` (1-based, inclusive; default to the end)."""
        _, text = self._text(path)
        lines = text.splitlines(keepends=True)
        if start_line < 1 or (end_line is not None and end_line < start_line):
            raise WorkspaceError(
                f"{path}: lines {start_line}-{end_line} is not a range; lines start at 1"
            )
        return self._capped("".join(lines[start_line - 1 : end_line]))

    def write_file(self, path: str, content: str) -> str:
        """Write `content` to `path`, making its folders."""
        target = resolve(self.root, path)
        if target.is_dir():
            raise WorkspaceError(f"{path}: is a folder")
        self._write(target, content, make_folders=True)
        return f"wrote {len(content)} characters to {relative(self.root, target)}"

    def edit_file(self, path: str, old_text: str, new_text: str) -> str:
        """Replace the one place `old_text` appears in `path` with `new_text`."""
        target, text = self._text(path)
        if not old_text:
            raise WorkspaceError(f"{path}: old_text is empty; give the exact text to replace")
        count = text.count(old_text)
        if count == 0:
            raise WorkspaceError(
                f"{path}: old_text was not found; read the file and give its exact text, "
                "spaces and line breaks included"
            )
        if count > 1:
            raise WorkspaceError(
                f"{path}: old_text appears {count} times; give more of the text around it "
                "so it appears once"
            )
        self._write(target, text.replace(old_text, new_text, 1))
        return f"edited {relative(self.root, target)}"

    def list_folder(self, path: str = ".") -> str:
        """The entries of folder `path`, folders ending in `/`."""
        folder = resolve(self.root, path)
        if not folder.is_dir():
            raise WorkspaceError(f"{path}: no such folder in the workspace")
        names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir())
        return self._capped("\n".join(names)) if names else "(empty)"

    def _files(self, pattern: str) -> list[Path]:
        given = PurePosixPath(pattern)
        if given.is_absolute() or ".." in given.parts:
            raise WorkspaceError(f"{pattern}: patterns are relative to the workspace, no `..`")
        found = []
        for path in self.root.glob(pattern):
            # a symlink matched by the pattern may lead out: it is left out
            if inside(self.root, path.resolve()):
                found.append(path)
        return sorted(found)

    def glob_files(self, pattern: str) -> str:
        """Paths matching `pattern` (`**/*.py`), relative to the workspace."""
        found = [relative(self.root, path) for path in self._files(pattern)]
        if not found:
            return "(no match)"
        more = len(found) - MAX_MATCHES
        listed = "\n".join(found[:MAX_MATCHES])
        return listed + (f"\n[... {more} more]" if more > 0 else "")

    def grep_files(self, pattern: str, glob: str = "**/*") -> str:
        """Lines matching the regular expression `pattern` in files matching `glob`, as
        `path:line: text`."""
        try:
            expression = re.compile(pattern)
        except re.error as error:
            raise WorkspaceError(f"{pattern}: not a regular expression ({error})") from None
        hits: list[str] = []
        for path in self._files(glob):
            if not path.is_file() or path.stat().st_size > MAX_GREP_FILE:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable: not searched
            for number, line in enumerate(text.splitlines(), 1):
                if expression.search(line):
                    hits.append(f"{relative(self.root, path)}:{number}: {line[:500]}")
                    if len(hits) > MAX_MATCHES:
                        return "\n".join(hits[:MAX_MATCHES]) + "\n[... more matches cut]"
        return "\n".join(hits) if hits else "(no match)"
