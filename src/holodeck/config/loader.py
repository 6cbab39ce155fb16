"""`load_agent`: one entry point for agent.yaml files, image directories and image
archives, with the environment (`.env`, the process) and the settings (global and
project config.yaml) the definition is read with."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from holodeck.config.env_vars import environment_for
from holodeck.config.settings import holodeck_home, settings_and_problems
from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.diagnostics import Diagnostic, Severity, SpecError
from holodeck.spec.load_context import LoadContext, SourceCheck
from holodeck.spec.loader import load_archive, load_definition, unpacked
from holodeck.spec.settings_models import Settings


def load_agent(
    path: str | Path,
    *,
    strict: bool = False,
    expand_env: bool = True,
    environ: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    source_check: SourceCheck | None = None,
) -> AgentSpec:
    """Load and validate an agent definition.

    `path` is an agent.yaml, a directory holding agent.yaml or config.yaml (an
    agent image), or an image `.tar.gz`. Raises `SpecError` listing every problem.

    `expand_env=False` leaves `${VAR}` untouched: use it for bundles uploaded to a
    server, whose references must never be resolved against the server's secrets.
    `strict` turns warnings about keys beyond spec_version 1 into errors.
    `source_check` also checks search tools' data files against their field mappings.
    """
    target = Path(path).expanduser()
    base_env = dict(os.environ if environ is None else environ)
    cache_dir = holodeck_home(base_env) / "cache" / "images"
    archive, target = target, unpacked(target, cache_dir)
    project_dir = _project_dir(target)
    env = environment_for(project_dir, base_env) if expand_env else None
    problems: list[Diagnostic] = []
    if settings is None:
        # A broken config.yaml must not hide the agent's own errors: the agent is
        # loaded with what could be read, and both files' problems come out together.
        loaded, problems = settings_and_problems(
            project_dir if _is_agent_yaml_project(target) else None, env or base_env
        )
        settings = loaded.settings
    context = LoadContext(
        env=env,
        settings=settings,
        cache_dir=cache_dir,
        strict=strict,
        source_check=source_check,
    )
    try:
        if archive != target:
            spec = load_archive(archive, context, target)
        else:
            spec = load_definition(target, context)
    except SpecError as exc:
        raise SpecError([*problems, *exc.diagnostics]) from None
    if any(d.severity is Severity.ERROR for d in problems):
        raise SpecError([*problems, *spec.warnings])
    return spec


def _project_dir(target: Path) -> Path:
    return target if target.is_dir() else target.parent


def _is_agent_yaml_project(target: Path) -> bool:
    if target.is_dir():
        return (target / "agent.yaml").is_file()
    return target.name != "config.yaml" or (target.parent / "agent.yaml").is_file()
