"""Saved scans: every scan is `.holodeck/scans/<scan_id>.json`, beside the test runs in
`.holodeck/runs`, so that `holodeck test view` lists them next to the runs.

    path = save_scan(scan, SCANS_DIR)
    found = ScanShelf(scans_beside(Path(".holodeck/runs"))).digests()
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from holodeck.atomic_write import write_atomically
from holodeck.errors import InputError
from holodeck.testing.redteam.results import Scan

SCANS_DIR = Path(".holodeck") / "scans"
_SCAN_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def new_scan_id() -> str:
    """A scan's id: when it started, then a few random letters (as run ids are made)."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def save_scan(scan: Scan, directory: Path) -> Path:
    """Write `scan` to `<directory>/<scan_id>.json` (atomically) and return the path."""
    path = directory / f"{scan.scan_id}.json"
    write_atomically(path, (scan.model_dump_json(indent=2) + "\n").encode())
    return path


def scans_beside(runs: Path) -> Path:
    """Where the scans of the project whose test runs are in `runs` are saved."""
    return runs.parent / SCANS_DIR.name


class PluginRate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plugin: str
    severity: str
    attacks: int
    passed: int
    failed: int
    errors: int
    pass_rate: float | None
    skipped: str | None = None


class ScanDigest(BaseModel):
    """What the dashboard's first page shows of a scan: its counts and each plugin's
    pass rate, without the attacks."""

    model_config = ConfigDict(extra="forbid")

    scan_id: str
    agent: str
    model: str
    seed: int
    strategies: list[str]
    offline: bool
    started_at: datetime
    duration_ms: float
    attacks: int
    passed: int
    failed: int
    errors: int
    plugins: list[PluginRate]


class UnknownScan(InputError):
    """No saved scan has this id."""


class DamagedScan(InputError):
    """The scan's file is there but is not a saved scan."""


@dataclass(frozen=True)
class Shelved:
    """A file in the scans directory that is not a scan, and why."""

    file: str
    reason: str


class ScanShelf:
    """The scans saved in one directory. Scans are few and small: each listing reads
    them all again."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def digests(self) -> tuple[list[ScanDigest], list[Shelved]]:
        """Every saved scan's digest (oldest first) and the files that are not scans."""
        found, skipped = [], []
        paths = sorted(self.directory.glob("*.json")) if self.directory.is_dir() else []
        for path in paths:
            try:
                found.append(digest(self.load(path.stem)))
            except (UnknownScan, DamagedScan) as exc:
                skipped.append(Shelved(path.name, str(exc)))
        found.sort(key=lambda d: (d.started_at.timestamp(), d.scan_id))
        return found, skipped

    def load(self, scan_id: str) -> Scan:
        """The whole scan saved as `<scan_id>.json` (its id is its file's name)."""
        path = self.directory / f"{scan_id}.json"
        if not _SCAN_ID.match(scan_id) or not path.is_file():
            raise UnknownScan(f"no saved scan {scan_id!r}")
        try:
            scan = Scan.model_validate_json(path.read_bytes())
        except OSError as exc:
            raise DamagedScan(f"cannot be read: {exc.strerror or exc}") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise DamagedScan(f"not a saved scan ({where}: {first['msg']})") from exc
        return scan.model_copy(update={"scan_id": scan_id})


def digest(scan: Scan) -> ScanDigest:
    return ScanDigest(
        scan_id=scan.scan_id,
        agent=scan.agent,
        model=scan.model,
        seed=scan.seed,
        strategies=scan.strategies,
        offline=scan.offline,
        started_at=scan.started_at,
        duration_ms=scan.duration_ms,
        attacks=len(scan.attacks),
        passed=sum(a.status == "pass" for a in scan.attacks),
        failed=len(scan.failed),
        errors=len(scan.errors),
        plugins=[PluginRate(**p.model_dump(), pass_rate=p.pass_rate) for p in scan.plugins],
    )
