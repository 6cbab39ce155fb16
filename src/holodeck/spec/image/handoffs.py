"""Omnigent's inline handoffs in config.yaml:

    tools:
      billing_desk: {type: handoff, target_agent: billing, description: Invoices.}

The model is offered the tool `billing_desk`; calling it transfers the conversation to
`target_agent`, found as `tools.agents` entries are (agents/<dir> by its directory name
or the `name:` its config.yaml declares) or named by an inline `{type: agent}` entry."""

from __future__ import annotations

from collections.abc import Sequence

from holodeck.spec.controls_check import hand_back_clash
from holodeck.spec.diagnostics import FieldPath, SpecError, did_you_mean
from holodeck.spec.image.inline_tools import InlineTool
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.image.subagents import declared_agent_names
from holodeck.spec.load_context import MAX_DEPTH
from holodeck.spec.models.agent_spec import AgentSpec, HandoffSpec
from holodeck.spec.python_tools import is_valid_tool_name

HANDOFF_KEYS = frozenset({"type", "target_agent", "description"})
_BACK_IS_AUTOMATIC = (
    "the agent a conversation is handed to returns it with its `transfer_back_to_<agent>` "
    "tool, without a handoff of its own; remove this entry"
)


def handed_to(entries: Sequence[InlineTool]) -> frozenset[str]:
    """The agents the inline handoffs name."""
    return frozenset(
        str(e.data["target_agent"])
        for e in entries
        if e.kind == "handoff" and isinstance(e.data.get("target_agent"), str)
    )


def image_handoffs(
    image: ImageReading,
    entries: Sequence[InlineTool],
    subagents: dict[str, AgentSpec],
    parent: str,
) -> tuple[HandoffSpec, ...]:
    """The inline handoffs whose targets load, from the agent named `parent`; `subagents`
    are the image's listed and inline sub-agents, which a handoff may name."""
    found: list[HandoffSpec] = []
    for entry in (e for e in entries if e.kind == "handoff"):
        path = entry.path
        image.register_tool(entry.name, image.doc.diagnostic(path, ""))
        if not is_valid_tool_name(entry.name):
            image.error(
                path,
                f"tool name `{entry.name}` is not valid for model providers",
                "use letters, digits, `_` or `-` (at most 64 characters)",
            )
            continue
        for key in entry.data:
            if key not in HANDOFF_KEYS:
                image.error(
                    (*path, key),
                    f"`{key}` is not a setting of a handoff",
                    "a handoff takes `target_agent` (the agent taking the conversation) "
                    "and `description`",
                )
        target = entry.data.get("target_agent")
        description = entry.data.get("description")
        if not isinstance(target, str) or not target:
            image.error(
                (*path, "target_agent"),
                "a handoff needs `target_agent`: the agent taking the conversation over",
                "name an agents/<dir> sub-agent (its directory or its `name:`) or an "
                "inline `type: agent` entry",
            )
            continue
        if description is not None and not isinstance(description, str):
            image.error((*path, "description"), "`description` must be text")
            continue
        agent = subagents.get(target) or _load(image, target, (*path, "target_agent"))
        if agent is None:
            continue
        clash = hand_back_clash(parent, agent)
        if clash is not None:
            image.error((*path, "target_agent"), clash, "rename that tool")
            continue
        found.append(
            HandoffSpec(
                name=entry.name,
                tool=entry.name,
                description=description or agent.description,
                agent=agent,
            )
        )
    return tuple(found)


def _load(image: ImageReading, name: str, where: FieldPath) -> AgentSpec | None:
    """agents/<dir> whose directory or declared `name:` is `name`, loaded as the image's
    sub-agents are."""
    declared = declared_agent_names(image)
    matches = [d for d, own in declared.items() if name in (d.name, own)]
    if len(matches) != 1:
        if matches:
            image.error(
                where,
                f"agent `{name}` is ambiguous: "
                + " and ".join(f"agents/{d.name}/" for d in matches)
                + " both answer to it",
                "give each sub-agent its own `name:` in its config.yaml",
            )
        elif name in (image.config.name, image.root.name):
            image.error(where, f"handoff to `{name}`, the agent itself", _BACK_IS_AUTOMATIC)
        else:
            present = [own or d.name for d, own in declared.items()]
            image.error(
                where,
                f"no agent `{name}` to hand off to: no agents/{name}/ with a config.yaml, "
                f"no sub-agent declaring `name: {name}`, and no inline `type: agent` entry "
                "of that name",
                did_you_mean(name, present) or f"create {image.root / 'agents' / name}/config.yaml",
            )
        return None
    directory = matches[0]
    if image.ctx.is_loading(directory):
        image.error(
            where,
            f"handoff to `{name}`, an agent this conversation is handed over from already",
            _BACK_IS_AUTOMATIC,
        )
        return None
    if len(image.ctx.stack) >= MAX_DEPTH:
        image.error(where, f"agents nest deeper than {MAX_DEPTH}")
        return None
    try:
        agent = image.ctx.load_definition(directory, image.ctx.nested(image.root))
    except SpecError as exc:
        image.ctx.collector.extend(exc.diagnostics)
        return None
    image.ctx.collector.extend(agent.warnings)  # `--strict` would fail on them
    return agent
