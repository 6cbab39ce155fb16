"""`holodeck test view`: a dashboard of saved test runs, served on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import click

from holodeck.errors import InputError
from holodeck.testing import dashboard

RUNS = Path(".holodeck") / "runs"
SCANS = Path(".holodeck") / "scans"  # `holodeck redteam` saves scans there


@click.command(
    "test view",
    epilog="Exit codes: 0 stopped (Ctrl+C), 2 no saved runs there or the port is taken.",
)
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@click.option("--no-open", is_flag=True, help="Print the URL; do not open a browser.")
def view(path: Path, port: int, no_open: bool) -> None:
    """Browse saved test runs in a local web page.

    PATH is an agent (agent.yaml, image directory or .tar.gz: the runs saved beside
    it), a project directory (its .holodeck/runs) or a runs directory. The page
    shows each agent's pass rate and metric averages over time, every case of a
    run (turns, tool calls, metrics, ground truth), and runs compared side by
    side, regressions first. It is served on 127.0.0.1 only.

    \b
    Examples:
      holodeck test view
      holodeck test view examples/weather --port 9000 --no-open
    """
    import uvicorn  # only when serving: `holodeck test view --help` stays fast

    directory = runs_directory(path)
    index = dashboard.RunIndex(directory.resolve())
    digests, skipped = index.digests()  # read now, so the first page is answered at once
    listener = _listen(port)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    count = f"{len(digests)} run{'' if len(digests) == 1 else 's'}"
    damaged = f", {len(skipped)} damaged file(s) skipped" if skipped else ""
    click.echo(f"Runs dashboard: {url}  ({count} in {directory}{damaged})")
    click.echo("Press Ctrl+C to stop.")
    if not no_open and _has_display():
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(dashboard.create_dashboard(index), log_level="warning", log_config=None)
    uvicorn.Server(config).run(sockets=[listener])


def runs_directory(path: Path) -> Path:
    """Where the runs PATH names are saved (see the command's help)."""
    if not path.exists():
        raise InputError(
            f"{path} does not exist",
            hint="pass an agent, a project directory or a .holodeck/runs directory",
        )
    base = path.parent if path.is_file() else path
    if (base / RUNS).is_dir() or (base / SCANS).is_dir():  # red-team scans are listed too
        return base / RUNS
    if path.is_dir() and (path.name == "runs" or any(path.glob("*.json"))):
        return path
    if base.resolve() != Path.cwd().resolve() and RUNS.is_dir():
        return RUNS  # `holodeck test AGENT` saves runs where it was started: here
    raise InputError(
        f"no saved runs in {base / RUNS}",
        hint=f"`holodeck test {path}` saves each run under .holodeck/runs in the directory "
        "it is started in; run it, or pass that directory",
    )


def _listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise InputError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}",
            hint="choose another --port, or --port 0 for any free one",
        ) from exc
    return listener


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
