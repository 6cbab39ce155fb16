"""A build context for an agent's image: its own files (by `holodeck pack`'s rules), the
wheels to install, a requirements file naming holodeck with the extras the agent needs,
the versions they install at (the lock's pins) and the Dockerfile. One context builds
online or offline with the same Dockerfile."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from holodeck.deploy_targets.extras import needed_extras
from holodeck.deploy_targets.pins import DISTRIBUTION, locked_constraints, source_tree
from holodeck.errors import ConfigurationError, ExecutionError
from holodeck.spec.archives.pack import image_files
from holodeck.spec.models.agent_spec import AgentSpec

# Debian bookworm's Python is 3.11, the oldest holodeck supports
DEFAULT_BASE_IMAGE = "python:3.11-slim-bookworm"
AGENT_DIR = "/agent"
# set in the image: its server serves an agent whose `deployment.target` names a cloud
IN_IMAGE_VAR = "HOLODECK_IN_IMAGE"
USER_ID = 10001  # not root, and no name to create: a base image needs no useradd
_ARCHIVES = (".tar.gz", ".tgz")
OWN_WHEELS = "holodeck_agents-*.whl"  # the distribution's name, as wheel file names spell it
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class BuildContext:
    """What `write_context` made."""

    directory: Path
    entry: str  # the definition's path inside the image
    port: int
    extras: list[str]
    offline: bool  # every wheel is in the context: build with PIP_NO_INDEX=1
    agent_files: list[Path]  # on this machine, for the variables they refer to


def write_context(
    spec: AgentSpec,
    target: Path,
    directory: Path,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    wheels: Path | None = None,
    model: str | None = None,
) -> BuildContext:
    """Fill `directory` (new or empty) with the context that builds `spec`'s image."""
    if directory.exists() and any(directory.iterdir()):
        raise ConfigurationError(
            f"{directory} is not empty",
            hint="give -o a new or empty directory: the build context is written there",
        )
    agent_dir = directory / "agent"
    agent_dir.mkdir(parents=True)
    entry, copied = _copy_agent(spec, target, agent_dir)
    wheel_dir, own_dir = directory / "wheels", directory / "holodeck"
    wheel_dir.mkdir()
    own_dir.mkdir()
    if wheels is not None:
        _copy_wheels(wheels, wheel_dir)
    own = _holodeck_wheel(wheel_dir, own_dir)
    extras = needed_extras(spec)
    (directory / "requirements.txt").write_text(
        "".join(f"{line}\n" for line in wheel_requirements(own, extras)), encoding="utf-8"
    )
    (directory / "constraints.txt").write_text(
        "".join(f"{line}\n" for line in locked_constraints()), encoding="utf-8"
    )
    port = spec.deployment.port if spec.deployment is not None else 8000
    entrypoint = ["holodeck", "deploy", entry, "--host", "0.0.0.0", "--port", str(port)]
    cmd = ["--model", model] if model else []
    (directory / "Dockerfile").write_text(
        render_dockerfile(
            name=spec.name, base_image=base_image, port=port, entrypoint=entrypoint, cmd=cmd
        ),
        encoding="utf-8",
    )
    return BuildContext(directory, entry, port, extras, wheels is not None, copied)


def render_dockerfile(
    *, name: str, base_image: str, port: int, entrypoint: list[str], cmd: list[str]
) -> str:
    import jinja2  # only when a Dockerfile is written

    template = resources.files("holodeck.deploy_targets").joinpath("Dockerfile.j2")
    source = template.read_text(encoding="utf-8")
    text: str = jinja2.Template(source, keep_trailing_newline=True).render(
        name=name,
        base_image=base_image,
        port=port,
        uid=USER_ID,
        in_image=IN_IMAGE_VAR,
        entrypoint=json.dumps(entrypoint),  # exec form: no shell between the signal and us
        cmd=json.dumps(cmd),
    )
    return text


def _copy_agent(spec: AgentSpec, target: Path, agent_dir: Path) -> tuple[str, list[Path]]:
    """Copy the definition; return its path in the image and the files copied."""
    if target.is_file() and target.name.endswith(_ARCHIVES):
        shutil.copyfile(target, agent_dir / target.name)
        root, entry = spec.root, f"{AGENT_DIR}/{target.name}"
        files = [path for _, path in image_files(root)]
        return entry, files
    root = spec.root.resolve()
    if spec.format == "image":
        entry = AGENT_DIR
    else:
        entry = f"{AGENT_DIR}/{spec.source.resolve().relative_to(root).as_posix()}"
    files = []
    for rel, path in image_files(root):
        destination = agent_dir / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        files.append(path)
    return entry, files


def _copy_wheels(source: Path, wheel_dir: Path) -> None:
    found = sorted(source.glob("*.whl")) if source.is_dir() else []
    if not found:
        raise ConfigurationError(
            f"--wheels {source}: no wheel files there",
            hint="fill it on a machine with the index, at the versions the image pins: pip "
            f"wheel -w DIR -c requirements.lock '{DISTRIBUTION}[EXTRAS]' (with the image's "
            "Python version; requirements.lock is holodeck's, also written into the context "
            "as constraints.txt), then pass --wheels DIR",
        )
    for wheel in found:
        shutil.copyfile(wheel, wheel_dir / wheel.name)


def wheel_requirements(wheel: Path, extras: list[str]) -> list[str]:
    """The requirements `wheel` declares, with those of `extras` (its metadata's
    Requires-Dist, whose other markers pip evaluates in the image)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode("utf-8")
    found = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement, _, marker = line.removeprefix("Requires-Dist:").strip().partition(";")
        extra = _EXTRA.search(marker)
        if extra is None:
            found.append(line.removeprefix("Requires-Dist:").strip())
        elif extra.group(1) in extras and not requirement.startswith("holodeck"):
            found.append(requirement.strip())
    return found


def _holodeck_wheel(wheel_dir: Path, own_dir: Path) -> Path:
    """holodeck's own wheel, in `own_dir`: one given with --wheels (moved out of
    `wheel_dir`), else built from this source tree."""
    given = sorted(wheel_dir.glob(OWN_WHEELS))
    if given:
        for wheel in given[:-1]:
            wheel.unlink()
        return given[-1].rename(own_dir / given[-1].name)
    source = source_tree()
    if source is None:
        raise ConfigurationError(
            "holodeck's wheel is needed in the image, and this installation has no source "
            "tree to build it from",
            hint=f"pass --wheels DIR holding {OWN_WHEELS} (pip download {DISTRIBUTION} -d DIR)",
        )
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    done = subprocess.run(
        [*command, "-w", str(own_dir), str(source)], capture_output=True, text=True, check=False
    )
    built = sorted(own_dir.glob(OWN_WHEELS))
    if done.returncode != 0 or not built:
        reason = (done.stderr.strip().splitlines() or ["pip gave no reason"])[-1]
        raise ExecutionError(
            f"could not build holodeck's wheel from {source}: {reason}",
            hint=f"pass --wheels DIR holding {OWN_WHEELS}",
        )
    return built[-1]
