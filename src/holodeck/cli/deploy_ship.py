"""`holodeck deploy --build` and `--emit`: the agent as an image, and the manifests that
run it. Both read the definition as written (no `${VAR}` resolved), so no secret reaches
the image or a manifest."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import click

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


def image_reference(spec: AgentSpec, tag: str | None, registry: str | None) -> str:
    """The image's name: --tag as given, else the `deployment.registry` block's, else
    `<agent name>:latest`; --push REGISTRY puts it in that registry (instead of the one
    it names, if any)."""
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


def build_image(
    spec: AgentSpec,
    target: Path,
    *,
    tag: str | None,
    base_image: str | None,
    registry: str | None,
    wheels: Path | None,
    output: Path | None,
    model: str | None,
) -> str:
    """Write the context (in `output`, or a temporary directory), build, push if asked;
    return the image's reference."""
    tool = find_tool()  # before anything is written: no tool, no half-done work
    reference = image_reference(spec, tag, registry)
    with tempfile.TemporaryDirectory(prefix="holodeck-build-") as scratch:
        directory = output if output is not None else Path(scratch) / "context"
        build_args = _write_context(spec, target, directory, base_image, wheels, model)
        click.echo(f"holodeck: building {reference} with {tool} from {directory}")
        platform = _platform(spec)
        command = build_command(
            tool, directory, reference, platform=platform, build_args=build_args
        )
        run_tool(command, "the build")
    click.echo(f"holodeck: built {reference}")
    if registry:
        run_tool(push_command(tool, reference), "the push")
        click.echo(f"holodeck: pushed {reference}")
    return reference


def emit_build_context(
    spec: AgentSpec,
    target: Path,
    output: Path | None,
    *,
    tag: str | None,
    base_image: str | None,
    registry: str | None,
    wheels: Path | None,
    model: str | None,
) -> None:
    """`--emit dockerfile`: the context `--build` would build, for another builder."""
    output = _needs_output(output, "dockerfile", target)
    args = _write_context(spec, target, output, base_image, wheels, model)
    reference = image_reference(spec, tag, registry)
    command = build_command("podman", output, reference, platform=_platform(spec), build_args=args)
    click.echo(f"holodeck: wrote the build context to {output}; build it with")
    click.echo(f"  {' '.join(command)}")


def _platform(spec: AgentSpec) -> str | None:
    """`deployment.platform`: the architecture the image is built for (linux/arm64)."""
    return spec.deployment.platform if spec.deployment is not None else None


def _needs_output(output: Path | None, kind: str, target: Path) -> Path:
    if output is None:
        raise ConfigurationError(
            f"--emit {kind} writes files: give the directory with -o DIR",
            hint=f"holodeck deploy {target} --emit {kind} -o {kind}/",
        )
    return output


def one_target(paths: tuple[Path, ...], flag: str) -> Path:
    if len(paths) > 1:
        raise ConfigurationError(
            f"{flag} ships one agent, and {len(paths)} paths were given",
            hint=f"run `holodeck deploy PATH {flag}` once per agent",
        )
    return paths[0] if paths else Path()


def emit_manifests(
    spec: AgentSpec,
    target: Path,
    kind: str,
    output: Path | None,
    *,
    tag: str | None,
    replicas: int | None,
    registry: str | None,
    model: str | None,
) -> None:
    """Write `kind`'s manifests (kubernetes, compose) into `output`."""
    output = _needs_output(output, kind, target)

    files = [path for _, path in image_files(spec.root)]
    port = spec.deployment.port if spec.deployment is not None else 8000
    shape = manifests.sized(
        spec,
        manifests.Shape(
            image=image_reference(spec, tag, registry),
            port=port,
            variables=agent_variables(spec, files),
            args=["--model", model] if model else [],
        ),
        replicas,
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


def _write_context(
    spec: AgentSpec,
    target: Path,
    directory: Path,
    base_image: str | None,
    wheels: Path | None,
    model: str | None,
) -> list[str]:
    """Write the build context to `directory`; the build arguments it needs (an offline
    context installs only from its own wheels)."""
    context = write_context(
        spec,
        target,
        directory,
        base_image=base_image or DEFAULT_BASE_IMAGE,
        wheels=wheels,
        model=model,
    )
    args = [f"BASE_IMAGE={base_image}"] if base_image else []
    if context.offline:
        args.append("PIP_NO_INDEX=1")
    return args
