"""agent.yaml's `handoffs:`: each target loaded like a `type: agent` tool's path (the
load context's cycle and depth checks; its warnings become the parent's), and the tool
names the model will see checked against the agent's other tools."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from holodeck.spec.controls_check import hand_back_clash
from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.models.agent_spec import AgentSpec, HandoffSpec
from holodeck.spec.models.handoffs import HandoffEntry, transfer_tool

_BACK_IS_AUTOMATIC = (
    "a handoff target returns the conversation to the agent that handed it over with its "
    "`transfer_back_to_<agent>` tool, without listing it; remove this entry"
)


class _Loads(Protocol):
    def error(self, path: FieldPath, message: str, hint: str | None = None) -> None: ...

    def agent_at(
        self, relative: str, where: FieldPath, cycle: tuple[str, str | None]
    ) -> AgentSpec | None: ...


def read_handoffs(
    entries: Sequence[HandoffEntry], checks: _Loads, parent: str
) -> tuple[HandoffSpec, ...]:
    """The handoffs whose targets load, from the agent named `parent`; a problem with one
    is reported at its entry."""
    found: list[HandoffSpec] = []
    first: dict[str, int] = {}
    for index, entry in enumerate(entries):
        where: FieldPath = ("handoffs", index)
        if entry.name in first:
            checks.error(
                (*where, "name"),
                f"duplicate handoff `{entry.name}`",
                f"already listed as handoffs[{first[entry.name]}]; give each its own name",
            )
            continue
        first[entry.name] = index
        cycle = (
            f"handoff `{entry.name}` leads to {{found}}, an agent this conversation is "
            "handed over from already",
            _BACK_IS_AUTOMATIC,
        )
        target = checks.agent_at(entry.path, where, cycle)
        if target is None:
            continue
        clash = hand_back_clash(parent, target)
        if clash is not None:
            checks.error((*where, "path"), clash, "rename that tool")
            continue
        found.append(
            HandoffSpec(
                name=entry.name,
                tool=transfer_tool(entry.name),
                description=entry.description or target.description,
                agent=target,
            )
        )
    return tuple(found)


def check_handoff_names(
    entries: Sequence[HandoffEntry], offered: Sequence[str], checks: _Loads
) -> None:
    """A handoff's tool may not take the name of a tool the agent is offered."""
    taken = set(offered)
    for index, entry in enumerate(entries):
        tool = transfer_tool(entry.name)
        if tool in taken:
            checks.error(
                ("handoffs", index, "name"),
                f"handoff `{entry.name}` is offered as tool `{tool}`, the name of one of the "
                "agent's tools",
                "rename the handoff or the tool",
            )
