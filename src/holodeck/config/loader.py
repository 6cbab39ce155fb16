"""Where loading starts: `load_agent` reads agent.yaml files, image directories and image
archives, with the environment (`.env`, the process) and the settings (global and project
config.yaml) the definition is read with. Every definition, the top agent's and each
sub-agent's, goes through `load_definition`, which dispatches on what the path is to the
format's loader (`spec.agent_yaml.loader`, `spec.image.loader`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from holodeck.config.api_keys import missing_key
from holodeck.config.env_vars import environment_for
from holodeck.config.settings import holodeck_home, settings_and_problems
from holodeck.spec.agent_yaml.loader import load_agent_yaml
from holodeck.spec.archives.locations import cache_entry, in_archive
from holodeck.spec.archives.unpack import cached_extract
from holodeck.spec.diagnostics import Diagnostic, Severity, SpecError
from holodeck.spec.image.loader import load_image
from holodeck.spec.image.single_file import is_single_file_agent
from holodeck.spec.load_context import LoadContext, SourceCheck
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.settings import Settings

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def load_agent(
    path: str | Path,
    *,
    strict: bool = False,
    expand_env: bool = True,
    environ: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    source_check: SourceCheck | None = None,
    check_keys: bool = False,
) -> AgentSpec:
    """Load and validate an agent definition.

    `path` is an agent.yaml, a directory holding agent.yaml or config.yaml (an
    agent image), or an image `.tar.gz`. Raises `SpecError` listing every problem.

    `expand_env=False` leaves `${VAR}` untouched: use it for bundles uploaded to a
    server, whose references must never be resolved against the server's secrets.
    `strict` turns warnings about keys beyond spec_version 1 into errors.
    `source_check` also checks search tools' data files against their field mappings.
    `check_keys` also reports a model that needs an API key nothing gives (a warning, an
    error with `strict`), for `holodeck validate`; a run says so when it calls the model.
    """
    target = Path(path).expanduser()
    base_env = dict(os.environ if environ is None else environ)
    cache_dir = holodeck_home(base_env) / "cache" / "images"
    archive, target = target, unpacked(target, cache_dir)
    project_dir = _project_dir(target)
    env = environment_for(project_dir, base_env) if expand_env else None
    problems: list[Diagnostic] = []
    files: tuple[Path, ...] = ()
    looked_up: tuple[Path, ...] = ()
    if settings is None:
        # A broken config.yaml must not hide the agent's own errors: the agent is
        # loaded with what could be read, and both files' problems come out together.
        loaded, problems = settings_and_problems(
            project_dir if _is_agent_yaml_project(target) else None, env or base_env
        )
        settings, files, looked_up = loaded.settings, loaded.files, loaded.looked_up
    context = LoadContext(
        env=env,
        settings=settings,
        cache_dir=cache_dir,
        load_definition=load_definition,
        strict=strict,
        source_check=source_check,
        settings_files=files,
        settings_looked_up=looked_up,
        refused_stores=frozenset(
            str(d.path[1])
            for d in problems
            if d.severity is Severity.ERROR and len(d.path) > 1 and d.path[0] == "vectorstores"
        ),
    )
    try:
        if archive != target:
            spec = load_archive(archive, context, target)
        else:
            spec = load_definition(target, context)
    except SpecError as exc:
        raise SpecError([*problems, *exc.diagnostics]) from None
    if strict:  # config.yaml's warnings (keys with no effect here) are errors too
        problems = [
            replace(d, severity=Severity.ERROR, message=d.message.removeprefix("ignored: "))
            for d in problems
        ]
    if check_keys and env is not None:
        key = missing_key(spec, settings, env, strict=strict)
        if key is not None and archive != target:
            key = in_archive([key], archive, cache_entry(target, cache_dir))[0]
        problems.extend([key] if key is not None else [])
    if any(d.severity is Severity.ERROR for d in problems):
        raise SpecError([*problems, *spec.warnings])
    if problems:
        spec = spec.model_copy(update={"warnings": (*problems, *spec.warnings)})
    return spec


def load_definition(target: Path, ctx: LoadContext) -> AgentSpec:
    """Dispatch on what `target` is; used for the top agent and every sub-agent."""
    if target.is_dir():
        if (target / "agent.yaml").is_file():
            return _load_yaml_file(target / "agent.yaml", ctx)
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
        return load_archive(target, ctx)
    if target.is_file():
        if target.name == "config.yaml" and not (target.parent / "agent.yaml").is_file():
            return load_image(target.parent, ctx)
        return _load_yaml_file(target, ctx)
    raise SpecError(
        [
            Diagnostic(
                f"no such file or directory: {target}",
                file=target,
                hint="check the path; `holodeck init NAME` creates a new agent",
            )
        ]
    )


def _load_yaml_file(path: Path, ctx: LoadContext) -> AgentSpec:
    """An agent.yaml, or an Omnigent single-file agent (its `executor:` and `prompt:`
    are an image's keys, not agent.yaml's)."""
    if is_single_file_agent(path):
        return load_image(path.parent, ctx, single_file=path)
    return load_agent_yaml(path, ctx)


def load_archive(archive: Path, ctx: LoadContext, root: Path | None = None) -> AgentSpec:
    """The image in `archive` (unpacked at `root`, if done already), with every problem
    located in the archive (`support.tar.gz!/config.yaml:3:1`), not in the cache."""
    root = unpacked(archive, ctx.cache_dir) if root is None else root
    entry = cache_entry(root, ctx.cache_dir)
    try:
        spec = load_definition(root, ctx)
    except SpecError as exc:
        raise SpecError(in_archive(exc.diagnostics, archive, entry)) from None
    return spec.model_copy(update={"warnings": tuple(in_archive(spec.warnings, archive, entry))})


def unpacked(target: Path, cache_dir: Path) -> Path:
    """`target`, or where the image archive `target` is unpacked (once per content)."""
    if not (target.name.endswith(ARCHIVE_SUFFIXES) and target.is_file()):
        return target
    return cached_extract(target, cache_dir)


def _project_dir(target: Path) -> Path:
    return target if target.is_dir() else target.parent


def _is_agent_yaml_project(target: Path) -> bool:
    if target.is_dir():
        return (target / "agent.yaml").is_file()
    return target.name != "config.yaml" or (target.parent / "agent.yaml").is_file()
