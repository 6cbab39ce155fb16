"""Controls an operator puts on an agent: spend caps (`limits:`) and which of its tools
the model is offered (`tools_policy:`). The runtime enforces both in one place, so chat,
test and the server obey them alike."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import Field

from holodeck.spec.models.base import NonEmpty, Strict


class Caps(Strict):
    """Ceilings on what a turn, a session or an API key's day may use; unset: no cap."""

    max_cost_usd: Annotated[Decimal, Field(gt=0)] | None = Field(
        default=None,
        description="US dollars, priced from the price list bundled with pydantic-ai; "
        "the agent's model must be on it.",
    )
    max_tokens: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Input and output tokens together."
    )
    max_requests: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Model requests (each tool round is one)."
    )
    max_tool_calls: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Tool calls the model may make."
    )


class Limits(Strict):
    """`limits:`: caps per turn, per session, and (when served) per API key per day.
    Reaching one ends the turn with a `limit_reached` error; nothing of it is kept."""

    turn: Caps | None = None
    session: Caps | None = None
    key_daily: Caps | None = Field(
        default=None,
        description="Per API key per UTC day, on `holodeck deploy` (a server without keys: "
        "per server).",
    )


def overlay_limits(base: Limits | None, top: Limits | None) -> Limits | None:
    """agent.yaml's caps over config.yaml's, cap by cap."""
    if base is None or top is None:
        return top or base
    merged: dict[str, Caps | None] = {}
    for scope in ("turn", "session", "key_daily"):
        low, high = getattr(base, scope), getattr(top, scope)
        if low is None or high is None:
            merged[scope] = high or low
        else:
            merged[scope] = Caps.model_validate(
                {**low.model_dump(exclude_unset=True), **high.model_dump(exclude_unset=True)}
            )
    return Limits.model_validate(merged)


class ToolsPolicy(Strict):
    """`tools_policy:`: glob patterns (`*`, `?`, `[...]`) over every tool name the agent
    has (functions, `server.tool` for MCP tools, search tools, sub-agents, builtins). A tool
    is offered when it matches `allow` (if given) and no `deny` pattern."""

    allow: list[NonEmpty] | None = Field(
        default=None, description="Only tools matching one of these are offered."
    )
    deny: list[NonEmpty] = Field(
        default_factory=list, description="Tools matching one of these are never offered."
    )

    def allows(self, name: str, *aliases: str) -> bool:
        """Whether a tool is offered; `aliases` are other names it goes by (an MCP tool's
        `server.tool` beside the name the model sees)."""
        from fnmatch import fnmatchcase

        names = (name, *aliases)
        if any(fnmatchcase(n, p) for p in self.deny for n in names):
            return False
        if self.allow is None:
            return True
        return any(fnmatchcase(n, p) for p in self.allow for n in names)


class Approval(Strict):
    """`approval:`: tools whose calls wait for a person's decision. Patterns are globs over
    every tool name the agent has, as in `tools_policy` (`server.tool` for MCP tools). A
    tool entry's own `approval: required` does the same for that tool."""

    require: list[NonEmpty] = Field(
        default_factory=list,
        description="Calls of tools matching one of these wait for a person to approve "
        "or deny them.",
    )

    def requires(self, name: str, *aliases: str) -> bool:
        """Whether a call of this tool (`aliases`: other names it goes by) waits."""
        from fnmatch import fnmatchcase

        return any(fnmatchcase(n, p) for p in self.require for n in (name, *aliases))
