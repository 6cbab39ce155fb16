"""`load_definition`: agent.yaml files, image directories and image archives, dispatched on
what the path is (the top agent and every sub-agent). `holodeck.config.loader.load_agent`
adds the environment and settings and is the entry point."""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.agent_spec import AgentSpec
from holodeck.spec.agent_yaml_loader import load_agent_yaml
from holodeck.spec.archive import cached_extract
from holodeck.spec.archive_locations import cache_entry, in_archive
from holodeck.spec.diagnostics import Diagnostic, SpecError
from holodeck.spec.image_loader import load_image
from holodeck.spec.load_context import LoadContext

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def load_definition(target: Path, ctx: LoadContext) -> AgentSpec:
    """Dispatch on what `target` is; used for the top agent and every sub-agent."""

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
        return load_archive(target, ctx)
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
