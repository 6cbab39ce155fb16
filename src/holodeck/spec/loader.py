"""`load_agent`: one entry point for agent.yaml files, image directories and image archives."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from holodeck.config.env_vars import environment_for
from holodeck.config.settings import Settings, holodeck_home, load_settings
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.diagnostics import Diagnostic, SpecError
from holodeck.spec.load_context import LoadContext

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def load_agent(
    path: str | Path,
    *,
    strict: bool = False,
    expand_env: bool = True,
    environ: Mapping[str, str] | None = None,
    settings: Settings | None = None,
) -> AgentSpec:
    """Load and validate an agent definition.

    `path` is an agent.yaml, a directory holding agent.yaml or config.yaml (an
    agent image), or an image `.tar.gz`. Raises `SpecError` listing every problem.

    `expand_env=False` leaves `${VAR}` untouched: use it for bundles uploaded to a
    server, whose references must never be resolved against the server's secrets.
    `strict` turns warnings about keys beyond spec_version 1 into errors.
    """
    target = Path(path).expanduser()
    base_env = dict(os.environ if environ is None else environ)
    target = _unpacked(target, base_env)
    project_dir = _project_dir(target)
    env = environment_for(project_dir, base_env) if expand_env else None
    if settings is None:
        settings = load_settings(
            project_dir if _is_agent_yaml_project(target) else None, env or base_env
        ).settings
    return load_definition(target, LoadContext(env=env, settings=settings, strict=strict))


def load_definition(target: Path, ctx: LoadContext) -> AgentSpec:
    """Dispatch on what `target` is; used for the top agent and every sub-agent."""
    from holodeck.spec.agent_yaml_loader import load_agent_yaml
    from holodeck.spec.image_loader import load_image

    if target.is_dir():
        if (target / "agent.yaml").is_file():
            return load_agent_yaml(target / "agent.yaml", ctx)
        if (target / "config.yaml").is_file():
            return load_image(target, ctx)
        raise SpecError(
            [
                Diagnostic(
                    f"{target} holds neither agent.yaml nor config.yaml",
                    file=target,
                    hint="point at an agent.yaml, an agent image directory, or an image .tar.gz",
                )
            ]
        )
    if target.name.endswith(ARCHIVE_SUFFIXES):
        return load_definition(_unpacked(target, dict(os.environ)), ctx)
    if target.is_file():
        if target.name == "config.yaml" and not (target.parent / "agent.yaml").is_file():
            return load_image(target.parent, ctx)
        return load_agent_yaml(target, ctx)
    raise SpecError(
        [
            Diagnostic(
                f"no such file or directory: {target}",
                file=target,
                hint="check the path; `holodeck init NAME` creates a new agent",
            )
        ]
    )


def _unpacked(target: Path, env: Mapping[str, str]) -> Path:
    if not (target.name.endswith(ARCHIVE_SUFFIXES) and target.is_file()):
        return target
    from holodeck.spec.archive import cached_extract

    return cached_extract(target, holodeck_home(env) / "cache" / "images")


def _project_dir(target: Path) -> Path:
    return target if target.is_dir() else target.parent


def _is_agent_yaml_project(target: Path) -> bool:
    if target.is_dir():
        return (target / "agent.yaml").is_file()
    return target.name != "config.yaml" or (target.parent / "agent.yaml").is_file()
