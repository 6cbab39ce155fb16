"""Finding Node.js's side of TypeScript tools: the harness, and the `typescript` npm
package (`$HOLODECK_NODE_MODULES`, else `node/node_modules`, else installed once with npm
under `$HOLODECK_HOME/node`)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from importlib.resources import files
from pathlib import Path

from holodeck.config.settings import holodeck_home
from holodeck.tools.errors import ToolLoadError

log = logging.getLogger("holodeck.tools.typescript")

NODE_MODULES_ENV = "HOLODECK_NODE_MODULES"
INSTALL_TIMEOUT_S = 600.0
INSTALLED_MARKER = ".holodeck-installed"


def _harness() -> Path:
    resource = files("holodeck.tools").joinpath("node", "harness.cjs")
    if isinstance(resource, Path):
        return resource
    # installed somewhere Node.js cannot read from (a zip): copy it out once
    target = _cache_prefix(os.environ) / "harness.cjs"
    data = resource.read_bytes()
    if not target.is_file() or target.read_bytes() != data:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return target


def _bundled_node_modules() -> Path | None:
    """node/node_modules next to the harness: a developer checkout after `make node`."""
    resource = files("holodeck.tools").joinpath("node", "node_modules")
    return resource if isinstance(resource, Path) and resource.is_dir() else None


def typescript_version_spec() -> str:
    """The `typescript` version range declared in node/package.json."""
    manifest = json.loads(files("holodeck.tools").joinpath("node", "package.json").read_text())
    return str(manifest["dependencies"]["typescript"])


def typescript_package(environ: Mapping[str, str] | None = None) -> Path:
    """The directory of the `typescript` npm package, installed on first need.

    Blocking (an install takes seconds): call it from a thread inside async code.
    """
    env = os.environ if environ is None else environ
    configured = env.get(NODE_MODULES_ENV)
    if configured:
        package = Path(configured).expanduser() / "typescript"
        if not (package / "package.json").is_file():
            raise ToolLoadError(
                f"{NODE_MODULES_ENV}={configured} holds no `typescript` package: point it at a "
                f"node_modules directory, e.g. after `npm install --prefix DIR typescript@5` "
                "use DIR/node_modules"
            )
        return package
    bundled = _bundled_node_modules()
    if bundled is not None and (bundled / "typescript" / "package.json").is_file():
        return bundled / "typescript"
    return _installed_typescript(_cache_prefix(env))


def _cache_prefix(env: Mapping[str, str]) -> Path:

    return holodeck_home(env) / "node"


def _installed(prefix: Path) -> bool:
    package = prefix / "node_modules" / "typescript" / "package.json"
    return package.is_file() and (prefix / INSTALLED_MARKER).is_file()


def _installed_typescript(prefix: Path) -> Path:
    package = prefix / "node_modules" / "typescript"
    if _installed(prefix):
        return package
    npm = shutil.which("npm")
    if npm is None:
        raise ToolLoadError(
            "TypeScript tools need the `typescript` npm package and npm is not on PATH to "
            f"install it: install Node.js 18+ with npm, or set {NODE_MODULES_ENV} to a "
            "node_modules directory holding `typescript`"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    with _file_lock(prefix / ".install.lock"):
        if not _installed(prefix):  # another process may have installed it meanwhile
            _npm_install(npm, prefix, f"typescript@{typescript_version_spec()}")
    return package


def _npm_install(npm: str, prefix: Path, requirement: str) -> None:
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), requirement]
    log.warning("installing the TypeScript compiler for TypeScript tools into %s", prefix)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=prefix,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolLoadError(f"`{' '.join(command)}` failed: {exc}") from None
    output = (done.stderr or done.stdout or "").strip().splitlines()[-5:]
    if done.returncode != 0 or not (prefix / "node_modules" / "typescript").is_dir():
        raise ToolLoadError(
            f"`{' '.join(command)}` failed (exit code {done.returncode}): "
            + (" | ".join(output) or "no output")
            + f"; install it yourself, or set {NODE_MODULES_ENV}"
        )
    (prefix / INSTALLED_MARKER).write_text(requirement + "\n", encoding="utf-8")
    log.info("installed %s in %.1f s", requirement, time.perf_counter() - started)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (and threads) while the block runs."""
    with path.open("a+b") as handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after 10 s; keep waiting
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
