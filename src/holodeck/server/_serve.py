"""Running the app under uvicorn: one process, or `workers` processes sharing the port.
Workers start with an allow-listed environment (`config.child_env`) and read their
options and the server's variables from a file only this user can read, removed when
the server stops: API keys never sit in a worker's `/proc/<pid>/environ`. On SIGTERM
uvicorn stops accepting, lets turns in progress finish for `shutdown_grace_seconds`,
then the lifespan closes agents, MCP servers and stores."""

from __future__ import annotations

import json
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from holodeck.config.child_env import child_environment
from holodeck.config.own_process import quiet_program
from holodeck.server._app import create_app
from holodeck.server._options import ServeOptions
from holodeck.server._tcp import TcpConfig
from holodeck.spec.models.agent_spec import AgentSpec

OPTIONS_FILE_VAR = "HOLODECK_SERVE_OPTIONS_FILE"


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def app_from_environment() -> FastAPI:
    """The app of a worker process (uvicorn's factory): its options and the server's
    variables (provider keys its agents use) come from the hand-off file."""
    handed = json.loads(Path(os.environ[OPTIONS_FILE_VAR]).read_text(encoding="utf-8"))
    # this process is the server's own: its agents see the variables the server was
    # started with; they are set after start, so /proc/<pid>/environ does not show them
    os.environ.update(handed["environ"])
    quiet_program()
    return create_app(ServeOptions.from_json(handed["options"]))


@contextmanager
def _worker_hand_off(options: ServeOptions) -> Iterator[None]:
    """While workers are started: the options and variables in a 0600 file, and this
    process's environment cut to the allow-list workers inherit (restored after)."""
    descriptor, name = tempfile.mkstemp(prefix="holodeck-serve-", suffix=".json")
    saved = dict(os.environ)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump({"options": options.to_json(), "environ": saved}, out)
        os.environ.clear()
        os.environ.update(child_environment(saved, {OPTIONS_FILE_VAR: name}))
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        Path(name).unlink(missing_ok=True)


def serve(options: ServeOptions, specs: Sequence[AgentSpec] = ()) -> None:
    """Serve until stopped. SIGTERM is a normal stop (exit 0 once drained); Ctrl+C too.
    `specs` (the paths already loaded) spare one process reading them again; worker
    processes read their own."""

    # uvicorn re-raises the signal that stopped it once it has drained: make SIGTERM's
    # end a clean exit rather than death by signal
    signal.signal(signal.SIGTERM, _stopped)

    common = {
        "host": options.host,
        "port": options.port,
        # the streams' own grace period ends first; this bounds the whole drain
        "timeout_graceful_shutdown": int(options.shutdown_grace_seconds) + 5,
        "log_level": "info",
        "proxy_headers": False,
    }
    if options.workers > 1:
        config = TcpConfig(
            "holodeck.server._serve:app_from_environment",
            factory=True,
            workers=options.workers,
            **common,  # type: ignore[arg-type]
        )
        with _worker_hand_off(options):  # workers are started (and restarted) in run()
            Multiprocess(config, sockets=[config.bind_socket()]).run()
    else:  # the app's lifespan stops telemetry, as each worker's does
        uvicorn.run(create_app(options, specs), **common)  # type: ignore[arg-type]
