"""Saved test runs: every run is `<directory>/<run_id>.json` (the runner uses
`.holodeck/runs`), and `load_run` finds one again by id, unique id prefix, path, `latest`
or `previous`. One directory holds the runs of every agent tested there and the
optimizer's candidates: `latest` and `previous` are the test runs of one agent.

    path = save_run(run, Path(".holodeck/runs"))
    same = load_run("latest", Path(".holodeck/runs"), agent=spec.source)
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from holodeck.atomic_write import write_atomically
from holodeck.errors import InputError
from holodeck.spec.diagnostics import display_path
from holodeck.testing.dashboard._index import record_saved
from holodeck.testing.results import TestRun

_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
ALIASES = ("latest", "previous")
SEARCH_TAG = "optimize:"  # the tag `holodeck test optimize` gives each candidate's run


class RunLookupError(InputError):
    """A run reference matched no saved run, several, or an unreadable file."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "run not found"


def save_run(run: TestRun, directory: Path) -> Path:
    """Write `run` to `<directory>/<run_id>.json` (atomically) and return the path."""
    if not _SAFE_ID.match(run.run_id):
        raise ValueError(
            f"run id {run.run_id!r} cannot name a file: use letters, digits, '.', '_' and '-'"
        )
    path = directory / f"{run.run_id}.json"
    data = (run.model_dump_json(indent=2) + "\n").encode()
    write_atomically(path, data)
    record_saved(path, data)  # the runs dashboard's first view then finds it summarised
    return path


def saved_runs(directory: Path) -> list[tuple[datetime, Path]]:
    """Readable saved runs, oldest first (by start time, then file name)."""
    found = []
    for path in directory.glob("*.json") if directory.is_dir() else ():
        try:
            started = datetime.fromisoformat(json.loads(path.read_text("utf-8"))["started_at"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a run (or a damaged one): it can be neither latest nor previous
        found.append((started, path))
    return sorted(found, key=lambda item: (item[0].timestamp(), item[1].name))


def load_run(ref: str, directory: Path, agent: Path | None = None) -> TestRun:
    """The run `ref` names: a path to a run file, `latest`, `previous`, a run id saved in
    `directory`, or a prefix of exactly one such id. `latest` and `previous` are the two
    newest test runs of `agent` (its definition file, as `AgentSpec.source`), or, without
    it, of the agent the newest test run tested; optimizer candidates are never either."""
    candidate = Path(ref)
    if "/" in ref or os.sep in ref or candidate.suffix == ".json":
        if not candidate.is_file():
            raise RunLookupError(f"no run file at {ref}")
        return _read(candidate)
    if ref in ALIASES:
        return _alias(ref, directory, agent)
    exact = directory / f"{ref}.json"
    if exact.is_file():
        return _read(exact)
    matches = sorted(p for p in directory.glob("*.json") if p.stem.startswith(ref)) if ref else []
    if len(matches) == 1:
        return _read(matches[0])
    if matches:
        listed = ", ".join(p.stem for p in matches[:10])
        raise RunLookupError(f"run id prefix {ref!r} is ambiguous: it matches {listed}")
    if candidate.is_file():  # a run file in the working directory, named without .json
        return _read(candidate)
    recent = [p.stem for _, p in saved_runs(directory)[-5:]][::-1]
    hint = (
        f"recent runs: {', '.join(recent)}; or use latest / previous"
        if recent
        else f"no runs are saved in {directory} yet"
    )
    raise RunLookupError(f"no saved run matches {ref!r} ({hint})")


def is_candidate(run: TestRun) -> bool:
    """Whether `run` is a candidate of an optimizer search, not a test run."""
    return any(tag.startswith(SEARCH_TAG) for tag in run.tags)


def same_agent(run: TestRun, agent: Path) -> bool:
    """Whether `run` tested the definition at `agent`."""
    try:
        return Path(run.source).resolve() == agent.resolve()
    except OSError:
        return False


def _alias(ref: str, directory: Path, agent: Path | None) -> TestRun:
    wanted = 1 if ref == "latest" else 2
    found: list[TestRun] = []
    skipped = 0  # runs of other agents and optimizer candidates
    for _, path in reversed(saved_runs(directory)):
        try:
            run = _read(path)
        except RunLookupError:
            continue  # a damaged file is not a run
        if is_candidate(run) or (agent is not None and not same_agent(run, agent)):
            skipped += 1
            continue
        if agent is None:  # the newest test run's agent is the one compared
            agent = Path(run.source)
        found.append(run)
        if len(found) == wanted:
            return found[-1]
    whose = f" of {display_path(agent)}" if agent is not None else ""
    have = f"{len(found)} saved run{'s' if len(found) != 1 else ''}"
    others = f" besides {skipped} of other agents or optimizer searches" if skipped else ""
    raise RunLookupError(
        f"'{ref}' needs at least {wanted} saved run{'s' if wanted > 1 else ''}{whose} "
        f"in {display_path(directory)}; there {'is' if len(found) == 1 else 'are'} "
        f"{have}{others}",
        hint="run `holodeck test` on the agent again, or name the runs by id or path",
    )


def _read(path: Path) -> TestRun:
    try:
        return TestRun.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise RunLookupError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise RunLookupError(f"{path} is not a saved test run ({where}: {first['msg']})") from exc
