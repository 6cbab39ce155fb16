"""An image's listed sub-agents (`tools.agents`): each found under agents/ by its directory
name or by the `name:` its config.yaml declares, loaded through the load context, and a
warning for each agents/ directory that is not listed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from holodeck.spec.diagnostics import FieldPath, SpecError, did_you_mean
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.load_context import MAX_DEPTH
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.yaml.source import read_yaml


def image_subagents(
    image: ImageReading, handed_to: frozenset[str] = frozenset()
) -> dict[str, AgentSpec]:
    """Listed sub-agents, each found by its directory name or by the `name:` its
    config.yaml declares (Omnigent matches the declared name). `handed_to`: the agents
    inline `type: handoff` entries name, reached without being listed."""
    listed = image.config.tools.agents
    for name, count in Counter(listed).items():
        if count > 1:
            image.error(("tools", "agents"), f"sub-agent `{name}` is listed twice")
    declared = declared_agent_names(image)
    found: dict[str, AgentSpec] = {}
    for index, name in enumerate(dict.fromkeys(listed)):
        directory = _find_subagent(image, name, index, declared)
        if directory is None:
            continue
        if image.ctx.is_loading(directory):
            image.error(("tools", "agents", index), f"sub-agent `{name}` calls itself")
            continue
        if len(image.ctx.stack) >= MAX_DEPTH:
            image.error(("tools", "agents", index), f"sub-agents nest deeper than {MAX_DEPTH}")
            continue
        image.register_tool(name, image.doc.diagnostic(("tools", "agents", index), ""))
        try:
            found[name] = image.ctx.load_definition(directory, image.ctx.nested(image.root))
        except SpecError as exc:
            image.ctx.collector.extend(exc.diagnostics)
            continue
        # its warnings are the parent's too: `--strict` would fail on them
        image.ctx.collector.extend(found[name].warnings)
    for directory, own in declared.items():
        if image.single_file:
            break  # a single-file agent's directory holds others' agents too
        reached = {*listed, *handed_to}
        if directory.name not in reached and own not in reached:
            image.warn(
                directory,
                f"sub-agent `{own or directory.name}` is not listed in tools.agents; "
                "it cannot be called",
            )
    return found


def declared_agent_names(image: ImageReading) -> dict[Path, str | None]:
    """agents/<dir>/ -> the `name:` its config.yaml declares, if any."""
    agents_dir = image.root / "agents"
    if not agents_dir.is_dir():
        return {}
    names: dict[Path, str | None] = {}
    for directory in sorted(p for p in agents_dir.iterdir() if p.is_dir()):
        config = directory / "config.yaml"
        if not config.is_file():
            continue
        try:
            data = read_yaml(config).data
        except SpecError:
            data = None  # reported when the sub-agent is loaded
        own = data.get("name") if isinstance(data, dict) else None
        names[directory] = own if isinstance(own, str) else None
    return names


def _find_subagent(
    image: ImageReading, name: str, index: int, declared: dict[Path, str | None]
) -> Path | None:
    matches = [d for d, own in declared.items() if name in (d.name, own)]
    where: FieldPath = ("tools", "agents", index)
    if len(matches) > 1:
        image.error(
            where,
            f"sub-agent `{name}` is ambiguous: "
            + " and ".join(
                f"agents/{d.name}/ ({'its directory' if d.name == name else 'its name:'})"
                for d in matches
            ),
            "give each sub-agent its own `name:` in its config.yaml",
        )
        return None
    if not matches:
        present = [own or d.name for d, own in declared.items()]
        image.error(
            where,
            f"no sub-agent `{name}`: no agents/{name}/ with a config.yaml, and no "
            f"sub-agent declares `name: {name}`",
            did_you_mean(name, present) or f"create {image.root / 'agents' / name}/config.yaml",
        )
        return None
    return matches[0]
