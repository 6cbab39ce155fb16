"""`holodeck deploy`: serve agents over HTTP until stopped (Ctrl+C or SIGTERM)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import click

import holodeck.runtime as runtime  # these two load their names on use: `deploy --help`
import holodeck.server as server  # loads no model SDK or server framework
from holodeck.cli.run_options import harness_option, model_option
from holodeck.config.loader import load_agent
from holodeck.errors import ConfigurationError


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--host", help="Address to listen on [default: deployment.host, 127.0.0.1].")
@click.option(
    "--port", type=click.IntRange(1, 65535), help="Port [default: deployment.port, 8000]."
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="Server processes [default: deployment.workers, 1]; more than one needs "
    "memory.store sqlite, redis or postgres.",
)
@model_option
@harness_option
@click.option(
    "--allow-uploads/--no-uploads",
    default=None,
    help="Accept agent images over POST /v1/agents; their tools run on this server, so "
    "allow them only behind API keys [default: deployment.allow_uploads, off].",
)
def deploy(
    paths: tuple[Path, ...],
    host: str | None,
    port: int | None,
    workers: int | None,
    model: str | None,
    allow_uploads: bool | None,
) -> None:
    """Serve agents over HTTP: agent.yaml files, image directories or image .tar.gz.

    Each agent answers at POST /v1/chat (JSON, or Server-Sent Events with `stream: true`)
    and as a model of the OpenAI-compatible POST /v1/chat/completions; sessions live in
    the store its `memory:` block names. GET /health and /ready, a chat page at /, the
    API's schema at /openapi.json and /docs. Settings come from the `deployment:` block
    (agent.yaml, then the project's and ~/.holodeck's config.yaml); flags win.

    Exits 0 when stopped, 2 for an invalid definition or options.

    \b
    Examples:
      holodeck deploy examples/weather --model test
      holodeck deploy support.tar.gz billing/agent.yaml --port 9000
      curl -s localhost:8000/v1/chat -d '{"message": "Hi"}' -H 'Content-Type: application/json'
    """

    # a served harness agent's shell and file tools are off unless the deployment allows them
    os.environ["HOLODECK_SERVING"] = "1"
    targets = paths or (Path(),)
    specs = [load_agent(path) for path in targets]  # every problem before anything starts
    names = [spec.name for spec in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigurationError(
            f"several agents are named {', '.join(twice)}",
            hint="each served agent answers by its `name`: give them different names",
        )
    for spec in specs:
        runtime.Agent(spec, runtime.RunOptions(model=model))  # credentials and models, checked now
    deployment = specs[0].deployment
    for spec in specs[1:]:
        if spec.deployment != deployment:
            raise ConfigurationError(
                f"{spec.name} and {specs[0].name} have different `deployment:` blocks",
                hint="serve them with one `deployment:` block (a config.yaml beside them)",
            )
    options = server.ServeOptions.from_settings(
        tuple(str(p) for p in targets),
        deployment,
        host=host,
        port=port,
        workers=workers,
        model=model,
        allow_uploads=allow_uploads,
    )
    single = [spec.name for spec in specs if spec.memory.store == "memory"]
    if options.workers > 1 and single:
        raise ConfigurationError(
            f"--workers {options.workers}: {', '.join(single)} keep sessions in memory, "
            "which each process has its own of",
            hint="set `memory: {store: sqlite}` (or redis/postgres with a url), or serve "
            "with one worker",
        )
    _check_address(options.host, options.port)
    url = f"http://{options.host}:{options.port}"
    click.echo(f"holodeck: serving {', '.join(names)} at {url} (chat page {url}/, API {url}/docs)")
    server.serve(options, specs)


def _check_address(host: str, port: int) -> None:
    """Refuse a taken or foreign address now, before the agents and their servers start
    (uvicorn would find out only after)."""

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                hint="pass another --port (or deployment.port), or stop the program using it",
            ) from None
