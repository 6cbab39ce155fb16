"""`holodeck deploy`: serve agents over HTTP until stopped (Ctrl+C or SIGTERM)."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Literal

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
    host: str | None,
    port: int | None,
    workers: int | None,
    model: str | None,
    harness: Literal["none"] | None,
    allow_uploads: bool | None,
    build: bool,
    tag: str | None,
    base_image: str | None,
    registry: str | None,
    wheels: Path | None,
    emit: str | None,
    output: Path | None,
    replicas: int | None,
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
    if build or emit:
        serving: dict[str, object] = {"--host": host, "--port": port, "--workers": workers}
        serving["--allow-uploads"] = allow_uploads
        given = [flag for flag, value in serving.items() if value is not None]
        if given:
            raise ConfigurationError(
                f"{', '.join(given)}: how this machine serves, not the image's server",
                hint="set them in the agent's `deployment:` block (port, workers, "
                "allow_uploads), which the image's `holodeck deploy` reads; it listens on "
                "all of the container's addresses",
            )
        _ship(
            paths,
            build=build,
            emit=emit,
            output=output,
            tag=tag,
            base_image=base_image,
            registry=registry,
            wheels=wheels,
            replicas=replicas,
            model=model,
        )
        return

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
        _refuse_cloud_target(spec)
        _refuse_unwalled(spec)
    _check_agents(specs, runtime.RunOptions(model=model, harness=harness))
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
        harness=harness,
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


def _ship(
    paths: tuple[Path, ...],
    *,
    build: bool,
    emit: str | None,
    output: Path | None,
    tag: str | None,
    base_image: str | None,
    registry: str | None,
    wheels: Path | None,
    replicas: int | None,
    model: str | None,
) -> None:
    from holodeck.cli import deploy_ship  # the image and manifest code, only when asked

    if build and emit:
        raise ConfigurationError(
            "give --build or --emit, not both",
            hint="build the image first, then write manifests naming it with --tag",
        )
    target = deploy_ship.one_target(paths, "--build" if build else f"--emit {emit}")
    # as written: a `${VAR}` stays a reference for the container's environment
    spec = load_agent(target, expand_env=False)
    if build:
        deploy_ship.build_image(
            spec,
            target,
            tag=tag,
            base_image=base_image,
            registry=registry,
            wheels=wheels,
            output=output,
            model=model,
        )
        return
    if emit == "dockerfile":
        deploy_ship.emit_build_context(
            spec,
            target,
            output,
            tag=tag,
            base_image=base_image,
            registry=registry,
            wheels=wheels,
            model=model,
        )
        return
    assert emit is not None
    deploy_ship.emit_manifests(
        spec, target, emit, output, tag=tag, replicas=replicas, registry=registry, model=model
    )
