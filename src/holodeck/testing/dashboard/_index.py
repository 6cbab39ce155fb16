"""The runs saved in one directory, read lazily: a run's digest is computed once per
version of its file, known by (name, mtime, size), and kept in memory and in a small
index file beside the runs (`.dashboard-index`), so a dashboard over 1,000 large runs
parses only the runs that are new or changed since it last looked.

    index = RunIndex(Path(".holodeck/runs"))
    digests, skipped = index.digests()
    run = index.load(digests[-1].run_id)
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from holodeck.atomic_write import write_atomically
from holodeck.errors import InputError
from holodeck.testing.dashboard._digest import RunDigest, read_digest
from holodeck.testing.results import TestRun

INDEX_NAME = ".dashboard-index"  # not *.json: run lookups (`latest`, prefixes) skip it
_FORMAT = 2  # bump when RunDigest changes: an older index is rebuilt (2: cost_usd)
_RUN_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")  # as run_store names files


class UnknownRun(InputError):
    """No saved run has this id."""


class DamagedRun(InputError):
    """The run's file is there but is not a saved test run."""


@dataclass(frozen=True)
class Skipped:
    file: str
    reason: str


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True)

    mtime_ns: int
    size: int
    digest: RunDigest | None
    problem: str | None = None  # why the file is not a run (then `digest` is None)


class _IndexFile(BaseModel):
    """`.dashboard-index`: parsed in one call (1,000 entries in milliseconds)."""

    format: int
    files: dict[str, _Entry]


class RunIndex:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._entries: dict[str, _Entry] | None = None
        self.version = 0  # changes whenever a run is added, changed or removed
        self._lock = threading.Lock()  # requests are answered on several threads

    def digests(self) -> tuple[list[RunDigest], list[Skipped]]:
        """Every saved run's digest (oldest first) and the files that are not runs."""
        _, found, skipped = self.listing()
        return found, skipped

    def listing(self) -> tuple[int, list[RunDigest], list[Skipped]]:
        """`digests()` with the version of the directory they are of (see `version`)."""
        version, entries = self._refresh()
        found = [e.digest for e in entries.values() if e.digest is not None]
        found.sort(key=lambda d: (d.started_at.timestamp(), d.run_id))
        skipped = [
            Skipped(name, e.problem or "") for name, e in entries.items() if e.digest is None
        ]
        return version, found, sorted(skipped, key=lambda s: s.file)

    def load(self, run_id: str) -> TestRun:
        """The whole run saved as `<run_id>.json` (its id is its file's name)."""
        path = self.directory / f"{run_id}.json"
        if not _RUN_ID.match(run_id) or not path.is_file():
            raise UnknownRun(run_id)
        run = _read(path)
        return run.model_copy(update={"run_id": run_id})

    def _refresh(self) -> tuple[int, dict[str, _Entry]]:
        with self._lock:
            known = self._entries if self._entries is not None else self._read_index()
            current: dict[str, _Entry] = {}
            changed = False
            for item in _run_files(self.directory):
                stat = item.stat()
                old = known.get(item.name)
                if old is not None and (old.mtime_ns, old.size) == (stat.st_mtime_ns, stat.st_size):
                    current[item.name] = old
                    continue
                current[item.name] = _summarize(Path(item.path), stat.st_mtime_ns, stat.st_size)
                changed = True
            if changed or current.keys() != known.keys():
                self._write_index(current)
            if self._entries is None or changed or current.keys() != self._entries.keys():
                self.version += 1
            self._entries = current
            return self.version, current

    def _read_index(self) -> dict[str, _Entry]:
        try:
            found = _IndexFile.model_validate_json((self.directory / INDEX_NAME).read_bytes())
        except (OSError, ValidationError):
            return {}  # no index yet, or a damaged one: the runs are read again
        return found.files if found.format == _FORMAT else {}

    def _write_index(self, entries: dict[str, _Entry]) -> None:
        body = _IndexFile(format=_FORMAT, files=entries).model_dump_json()
        # in a read-only directory the digests stay in memory, for this dashboard only
        with contextlib.suppress(OSError):
            write_atomically(self.directory / INDEX_NAME, body.encode())


def record_saved(path: Path, data: bytes) -> None:
    """Add the run just saved as `path` (its bytes `data`) to its directory's index, so the
    dashboard's first view does not parse it: `holodeck test` pays a few milliseconds per
    run instead of the dashboard paying for every run at once. Two runs saved at the same
    time may lose one entry; that run is then read by the next view, like any new file."""
    index = RunIndex(path.parent)
    entries = dict(index._read_index())
    try:
        stat = path.stat()
    except OSError:
        return
    entries[path.name] = _Entry(
        mtime_ns=stat.st_mtime_ns, size=stat.st_size, digest=read_digest(path.stem, data)
    )
    index._write_index(entries)


def _run_files(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as found:
            return [
                item
                for item in found
                if item.name.endswith(".json")
                and _RUN_ID.match(item.name[: -len(".json")])
                and item.is_file()
            ]
    except FileNotFoundError:
        return []


def _summarize(path: Path, mtime_ns: int, size: int) -> _Entry:
    run_id = path.name[: -len(".json")]
    try:
        found = read_digest(run_id, path.read_bytes())
    except OSError as exc:
        problem = f"cannot be read: {exc.strerror or exc}"
    except ValidationError as exc:
        problem = _not_a_run(exc)
    else:
        return _Entry(mtime_ns=mtime_ns, size=size, digest=found)
    return _Entry(mtime_ns=mtime_ns, size=size, digest=None, problem=problem)


def _read(path: Path) -> TestRun:
    try:
        return TestRun.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise DamagedRun(f"cannot be read: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        raise DamagedRun(_not_a_run(exc)) from exc


def _not_a_run(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "file"
    return f"not a saved test run ({where}: {first['msg']})"
