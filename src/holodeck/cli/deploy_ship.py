"""`holodeck deploy --build` and `--emit`: the agent as an image, and the manifests that
run it. Both read the definition as written (no `${VAR}` resolved), so no secret reaches
the image or a manifest. The command's options arrive as one `Shipment`:

    ship(Shipment(target=Path("examples/weather"), emit="compose", output=Path("out")))
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import click

from holodeck.config.loader import load_agent
from holodeck.deploy_targets import manifests
from holodeck.deploy_targets.build_context import DEFAULT_BASE_IMAGE, write_context
from holodeck.deploy_targets.container_tool import (
    build_command,
    find_tool,
    push_command,
    run_tool,
)
from holodeck.deploy_targets.variables import agent_variables
from holodeck.errors import ConfigurationError
from holodeck.spec.archives.pack import image_files
from holodeck.spec.models.agent_spec import AgentSpec

Emitted = Literal["kubernetes", "compose", "dockerfile"]


@dataclass(frozen=True)
class Shipment:
    """What `holodeck deploy --build` or `--emit` was asked: the agent at `target`, shipped
    as an image (`emit` None) or as the files `emit` names, written to `output`; the
    image's name (`tag`, in `registry` when pushed there), what it is built from
    (`base_image`, `wheels`), and how it runs (`model`, the `replicas` of kubernetes)."""

    target: Path
    emit: Emitted | None = None
    output: Path | None = None
    tag: str | None = None
    base_image: str | None = None
    registry: str | None = None
    wheels: Path | None = None
    replicas: int | None = None
    model: str | None = None

    @classmethod
    def from_command(
        cls, paths: tuple[Path, ...], *, build: bool, emit: str | None, **given: Any
    ) -> Shipment:
        """`holodeck deploy`'s shipping options as click gives them (`given`: the fields
        above but `target`), refused when they ask for two things at once."""
        if build and emit:
            raise ConfigurationError(
                "give --build or --emit, not both",
                hint="build the image first, then write manifests naming it with --tag",
            )
        target = _one_target(paths, "--build" if build else f"--emit {emit}")
        return cls(target=target, emit=cast("Emitted | None", emit), **given)


def _one_target(paths: tuple[Path, ...], flag: str) -> Path:
    if len(paths) > 1:
        raise ConfigurationError(
            f"{flag} ships one agent, and {len(paths)} paths were given",
            hint=f"run `holodeck deploy PATH {flag}` once per agent",
        )
    return paths[0] if paths else Path()


def ship(shipment: Shipment) -> None:
    """Build the image, or write the files `shipment.emit` names."""
    # as written: a `${VAR}` stays a reference for the container's environment
    spec = load_agent(shipment.target, expand_env=False)
    if shipment.emit is None:
        build_image(spec, shipment)
    elif shipment.emit == "dockerfile":
        emit_build_context(spec, shipment)
    else:
        emit_manifests(spec, shipment)


def image_reference(spec: AgentSpec, shipment: Shipment) -> str:
    """The image's name: --tag as given, else the `deployment.registry` block's, else
    `<agent name>:latest`; --push REGISTRY puts it in that registry (instead of the one
    it names, if any)."""
    tag, registry = shipment.tag, shipment.registry
    reference = tag or _configured_reference(spec) or f"{_image_name(spec.name)}:latest"
    if registry:
        host, _, path = reference.partition("/")
        if path and ("." in host or ":" in host or host == "localhost"):
            reference = path  # another registry's name: moved to this one
        reference = f"{registry.rstrip('/')}/{reference}"
    return reference


def _configured_reference(spec: AgentSpec) -> str | None:
    block = spec.deployment.registry if spec.deployment is not None else None
    if block is None:
        return None
    name = f"{block.url.rstrip('/')}/{block.repository.strip('/')}"
    if block.tag_strategy == "custom" and block.custom_tag is not None:
        return f"{name}:{block.custom_tag}"
    if block.tag_strategy == "latest":
        return f"{name}:latest"
    ask = ["rev-parse", "--short", "HEAD"]
    if block.tag_strategy == "git_tag":
        ask = ["describe", "--tags", "--exact-match"]
    try:
        done = subprocess.run(
            ["git", *ask], cwd=spec.root, capture_output=True, text=True, check=False
        )
    except OSError:
        done = None
    if done is None or done.returncode != 0 or not done.stdout.strip():
        raise ConfigurationError(
            f"deployment.registry.tag_strategy `{block.tag_strategy}` tags the image with "
            f"the {'commit' if block.tag_strategy == 'git_sha' else 'tag'} of {spec.root}, "
            "which git could not tell",
            hint="commit (or tag) the agent's folder, pass --tag, or set "
            "`tag_strategy: custom` with a `custom_tag`",
        )
    return f"{name}:{done.stdout.strip()}"


def _image_name(name: str) -> str:
    # image names are lower case letters, digits and separators
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return cleaned or "agent"


def build_image(spec: AgentSpec, shipment: Shipment) -> str:
    """Write the context (in `shipment.output`, or a temporary directory), build, push if
    asked; return the image's reference."""
    tool = find_tool()  # before anything is written: no tool, no half-done work
    reference = image_reference(spec, shipment)
    with tempfile.TemporaryDirectory(prefix="holodeck-build-") as scratch:
        output = shipment.output
        directory = output if output is not None else Path(scratch) / "context"
        build_args = _write_context(spec, shipment, directory)
        click.echo(f"holodeck: building {reference} with {tool} from {directory}")
        platform = _platform(spec)
        command = build_command(
            tool, directory, reference, platform=platform, build_args=build_args
        )
        run_tool(command, "the build")
    click.echo(f"holodeck: built {reference}")
    if shipment.registry:
        run_tool(push_command(tool, reference), "the push")
        click.echo(f"holodeck: pushed {reference}")
    return reference


def emit_build_context(spec: AgentSpec, shipment: Shipment) -> None:
    """`--emit dockerfile`: the context `--build` would build, for another builder."""
    output = _needs_output(shipment, "dockerfile")
    args = _write_context(spec, shipment, output)
    reference = image_reference(spec, shipment)
    command = build_command("podman", output, reference, platform=_platform(spec), build_args=args)
    click.echo(f"holodeck: wrote the build context to {output}; build it with")
    click.echo(f"  {' '.join(command)}")


def _platform(spec: AgentSpec) -> str | None:
    """`deployment.platform`: the architecture the image is built for (linux/arm64)."""
    return spec.deployment.platform if spec.deployment is not None else None


def _needs_output(shipment: Shipment, kind: str) -> Path:
    if shipment.output is None:
        raise ConfigurationError(
            f"--emit {kind} writes files: give the directory with -o DIR",
            hint=f"holodeck deploy {shipment.target} --emit {kind} -o {kind}/",
        )
    return shipment.output


def emit_manifests(spec: AgentSpec, shipment: Shipment) -> None:
    """Write the manifests `shipment.emit` names (kubernetes, compose) into its output."""
    kind = shipment.emit
    assert kind is not None
    output = _needs_output(shipment, kind)
    model = shipment.model

    files = [path for _, path in image_files(spec.root)]
    port = spec.deployment.port if spec.deployment is not None else 8000
    shape = manifests.sized(
        spec,
        manifests.Shape(
            image=image_reference(spec, shipment),
            port=port,
            variables=agent_variables(spec, files),
            args=["--model", model] if model else [],
        ),
        shipment.replicas,
    )
    if kind == "kubernetes":
        objects = manifests.kubernetes(spec, shape)  # refused before anything is written
        output.mkdir(parents=True, exist_ok=True)
        written = output / f"{manifests.resource_name(spec.name)}.yaml"
        comment = manifests.kubernetes_comment(spec)
        written.write_text(manifests.to_yaml(objects, comment), encoding="utf-8")
        click.echo(f"holodeck: wrote {', '.join(o['kind'] for o in objects)} to {written}")
        if shape.variables:
            secret = manifests.secret_name(spec)
            keys = " ".join(f"--from-literal={v}=..." for v in shape.variables)
            click.echo(f"  the agent reads {', '.join(shape.variables)} from the Secret {secret}:")
            click.echo(f"  kubectl create secret generic {secret} {keys}")
        for note in (comment, manifests.scaling_note(spec)):
            if note is not None:
                click.echo("  " + " ".join(note.split()))
    else:
        written = output / "compose.yaml"
        document = manifests.compose(spec, shape)
        output.mkdir(parents=True, exist_ok=True)
        written.write_text(manifests.to_yaml([document]), encoding="utf-8")
        click.echo(f"holodeck: wrote {written}; run it with `docker compose -f {written} up`")


def _write_context(spec: AgentSpec, shipment: Shipment, directory: Path) -> list[str]:
    """Write the build context to `directory`; the build arguments it needs (an offline
    context installs only from its own wheels)."""
    base_image = shipment.base_image
    context = write_context(
        spec,
        shipment.target,
        directory,
        base_image=base_image or DEFAULT_BASE_IMAGE,
        wheels=shipment.wheels,
        model=shipment.model,
    )
    args = [f"BASE_IMAGE={base_image}"] if base_image else []
    if context.offline:
        args.append("PIP_NO_INDEX=1")
    return args
