"""`holodeck deploy`: serve agents over HTTP until stopped (Ctrl+C or SIGTERM)."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any, Literal

import click

import holodeck.runtime as runtime  # these two load their names on use: `deploy --help`
import holodeck.server as server  # loads no model SDK or server framework
from holodeck.cli.run_options import harness_option, model_option
from holodeck.config.loader import load_agent
from holodeck.deploy_targets.build_context import IN_IMAGE_VAR
from holodeck.errors import ConfigurationError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.sandbox_check import unwalled


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
@click.option(
    "--build",
    is_flag=True,
    help="Build an OCI image of the agent (podman, buildah or docker) instead of serving.",
)
@click.option("--tag", help="--build: the image's name [default: <agent name>:latest].")
@click.option(
    "--base-image",
    help="--build: the Python 3.11+ image to build on [default: python:3.11-slim-bookworm].",
)
@click.option("--push", "registry", metavar="REGISTRY", help="--build: push the image there.")
@click.option(
    "--wheels",
    type=click.Path(path_type=Path, file_okay=False),
    help="--build: install only these wheels (an offline build): holodeck's and its "
    "dependencies', for the image's Python.",
)
@click.option(
    "--emit",
    type=click.Choice(["kubernetes", "compose", "dockerfile"]),
    help="Instead of serving, write into -o DIR manifests that run the agent's image "
    "(kubernetes, compose), or the build context of its image (dockerfile).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, file_okay=False),
    help="--emit: the directory for the manifests; --build: keep the build context there.",
)
@click.option(
    "--replicas",
    type=click.IntRange(1, 1000),
    help="--emit kubernetes: the replicas the autoscaler starts from [default: 1].",
)
def deploy(
    paths: tuple[Path, ...],
    build: bool,
    emit: str | None,
    model: str | None,
    harness: Literal["none"] | None,
    **given: Any,
) -> None:
    """Serve agents over HTTP: agent.yaml files, image directories or image .tar.gz.

    Each agent answers at POST /v1/chat (JSON, or Server-Sent Events with `stream: true`)
    and as a model of the OpenAI-compatible POST /v1/chat/completions; it also speaks
    AG-UI (POST /awp), A2A (/a2a/NAME, its card at /.well-known/agent-card.json) and MCP
    (/mcp, one tool per agent); sessions live in the store its `memory:` block names.
    --build makes a container image, --emit kubernetes|compose writes manifests.
    GET /health and /ready, a chat page at /, the
    API's schema at /openapi.json and /docs. Settings come from the `deployment:` block
    (agent.yaml, then the project's and ~/.holodeck's config.yaml); flags win.

    Exits 0 when stopped, 2 for an invalid definition or options.

    \b
    Examples:
      holodeck deploy examples/weather --model test
      holodeck deploy support.tar.gz billing/agent.yaml --port 9000
      curl -s localhost:8000/v1/chat -d '{"message": "Hi"}' -H 'Content-Type: application/json'
      holodeck deploy examples/weather --build --tag weather:1.0
      holodeck deploy examples/weather --emit kubernetes -o k8s/
    """
    # how this machine serves (ServeOptions' fields); the rest of `given` ships the agent
    serving = {name: given.pop(name) for name in ("host", "port", "workers", "allow_uploads")}
    if build or emit:
        _refuse_serving_flags(serving)
        if harness is not None:
            raise ConfigurationError(
                "--harness: how this machine runs the agent, not how its image does",
                hint="leave --harness out of --build/--emit; set HOLODECK_HARNESS=none in "
                "the container's environment to run it in HoloDeck's own loop there",
            )
        from holodeck.cli import deploy_ship  # the image and manifest code, only when asked

        shipment = deploy_ship.Shipment.from_command(
            paths, build=build, emit=emit, model=model, **given
        )
        deploy_ship.ship(shipment)
        return

    _refuse_shipping_flags(given)
    targets = paths or (Path(),)
    specs = _agents_to_serve(targets, runtime.RunOptions(model=model, harness=harness))
    options = server.ServeOptions.from_settings(
        tuple(str(p) for p in targets), specs[0].deployment, model=model, harness=harness, **serving
    )
    _serve(options, specs)


def _refuse_serving_flags(serving: dict[str, object]) -> None:
    """--build and --emit ship the agent: the image's own server reads the block."""
    given = [f"--{name.replace('_', '-')}" for name, value in serving.items() if value is not None]
    if given:
        raise ConfigurationError(
            f"{', '.join(given)}: how this machine serves, not the image's server",
            hint="set them in the agent's `deployment:` block (port, workers, "
            "allow_uploads), which the image's `holodeck deploy` reads; it listens on "
            "all of the container's addresses",
        )


def _refuse_shipping_flags(shipping: dict[str, object]) -> None:
    """Serving here builds nothing: a flag that only shapes an image or manifests would
    be silently dropped."""
    flag = {"registry": "push", "output": "o"}
    given = [
        f"-{flag[name]}" if name == "output" else f"--{flag.get(name, name).replace('_', '-')}"
        for name, value in shipping.items()
        if value is not None
    ]
    if given:
        raise ConfigurationError(
            f"{', '.join(given)}: only with --build or --emit, which ship the agent; "
            "serving here builds nothing",
            hint="add --build (an image) or --emit kubernetes|compose|dockerfile, or "
            "leave those flags out",
        )


def _agents_to_serve(targets: tuple[Path, ...], options: runtime.RunOptions) -> list[AgentSpec]:
    """The agents at `targets`, each loaded and built once as the server will: every
    problem is found before anything starts."""
    specs = [load_agent(path) for path in targets]
    names = [spec.name for spec in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigurationError(
            f"several agents are named {', '.join(twice)}",
            hint="each served agent answers by its `name`: give them different names",
        )
    for spec in specs:
        _refuse_cloud_target(spec)
        _refuse_unwalled(spec)
    _check_agents(specs, options)
    deployment = specs[0].deployment
    for spec in specs[1:]:
        if spec.deployment != deployment:
            raise ConfigurationError(
                f"{spec.name} and {specs[0].name} have different `deployment:` blocks",
                hint="serve them with one `deployment:` block (a config.yaml beside them)",
            )
    return specs


def _serve(options: server.ServeOptions, specs: list[AgentSpec]) -> None:
    """Serve `specs` as `options` say, until stopped."""
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
    names = ", ".join(spec.name for spec in specs)
    click.echo(f"holodeck: serving {names} at {url} (chat page {url}/, API {url}/docs)")
    server.serve(options, specs)


def _check_agents(specs: list[AgentSpec], options: runtime.RunOptions) -> None:
    """Build each agent as the server will (credentials, models, tool code), now, and
    close it: the check leaves nothing open (no modules held, no threads, no servers)."""
    hosting = runtime.Hosting(served=True)  # as the server builds them (create_app)
    for spec in specs:
        agent = runtime.Agent(spec, options, hosting=hosting)
        try:
            agent.prepare()
        finally:
            asyncio.run(agent.aclose())


def _refuse_cloud_target(spec: AgentSpec) -> None:
    """A `target` here meant "deploy to that cloud": refused, except by the server of an
    image `--build` made (the cloud runs that image, so it serves)."""
    target = spec.deployment.target if spec.deployment is not None else None
    if target is not None and os.environ.get(IN_IMAGE_VAR) != "1":
        raise ConfigurationError(
            f"{spec.name}: `deployment.target` names a cloud ({target.provider}) to deploy "
            "to; `holodeck deploy` serves the agent on this machine and deploys to no cloud",
            hint="build an image with `holodeck deploy PATH --build --push REGISTRY`, write "
            "manifests with `holodeck deploy PATH --emit kubernetes -o DIR` (sized by "
            "`target`), or remove `target` to serve here",
        )


def _refuse_unwalled(spec: AgentSpec) -> None:
    """Serving lets anyone with a key steer the model: commands without a sandbox need
    the definition to say it means them."""
    names = unwalled(spec, acknowledged=False)
    if names:
        raise ConfigurationError(
            f"{', '.join(names)}: `sandbox: {{type: none}}` would run the model's commands "
            "on this server without walls",
            hint="remove `type: none` (commands then run in bubblewrap), or add "
            "`i_understand_this_is_unsafe: true` to the sandbox block to serve it anyway",
        )


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
