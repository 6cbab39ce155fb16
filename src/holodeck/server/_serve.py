"""Running the app under uvicorn: one process, or `workers` processes sharing the port
(each builds its app from the options passed in the environment). On SIGTERM uvicorn
stops accepting, lets turns in progress finish for `shutdown_grace_seconds`, then the
lifespan closes agents, MCP servers and stores."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from types import FrameType

from fastapi import FastAPI

from holodeck.server._app import create_app
from holodeck.server._options import ServeOptions
from holodeck.spec.agent_spec import AgentSpec

OPTIONS_VAR = "HOLODECK_SERVE_OPTIONS"


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def app_from_environment() -> FastAPI:
    """The app of a worker process (uvicorn's factory)."""
    return create_app(ServeOptions.from_json(os.environ[OPTIONS_VAR]))


def serve(options: ServeOptions, specs: Sequence[AgentSpec] = ()) -> None:
    """Serve until stopped. SIGTERM is a normal stop (exit 0 once drained); Ctrl+C too.
    `specs` (the paths already loaded) spare one process reading them again; worker
    processes read their own."""
    import uvicorn

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
        from uvicorn.supervisors import Multiprocess

        from holodeck.server._tcp import TcpConfig

        os.environ[OPTIONS_VAR] = options.to_json()
        config = TcpConfig(
            "holodeck.server._serve:app_from_environment",
            factory=True,
            workers=options.workers,
            **common,  # type: ignore[arg-type]
        )
        Multiprocess(config, sockets=[config.bind_socket()]).run()
    else:  # the app's lifespan stops telemetry, as each worker's does
        uvicorn.run(create_app(options, specs), **common)  # type: ignore[arg-type]
