"""Load-time checks of an agent's controls: a cost cap on a model with no known price
(an error: the cap could never be enforced), a `tools_policy` or `approval.require`
pattern that matches none of the agent's tools (a warning, except where an MCP server's
tools may match), and guardrails that could never run (a judge with no model)."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from holodeck.spec.diagnostics import Collector, FieldPath, Severity
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.controls import Approval, Limits, ToolsPolicy
from holodeck.spec.models.guardrails import Guardrails
from holodeck.spec.models.handoffs import back_tool
from holodeck.spec.models.long_term_memory import memory_tool_names
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import Settings
from holodeck.spec.models.tools import McpTool
from holodeck.spec.models.workspace_settings import acting_tool_names
from holodeck.spec.yaml.document import YamlDocument


def check_tools_policy(
    policy: ToolsPolicy | None,
    tools: Sequence[str],
    mcp_servers: Sequence[str],
    doc: YamlDocument,
    collector: Collector,
    where: FieldPath = ("tools_policy",),
    *,
    strict: bool = False,
) -> None:
    """Warn at its line about each pattern that matches no tool the agent has. A pattern
    an MCP server's tools could match (`server.*`, `*`) is not reported: those tools are
    only known once the server runs."""
    if policy is None:
        return
    for key, patterns in (("allow", policy.allow or []), ("deny", policy.deny)):
        _check_patterns(patterns, (*where, key), tools, mcp_servers, doc, collector, strict)


def check_approval(
    approval: Approval | None,
    tools: Sequence[str],
    mcp_servers: Sequence[str],
    doc: YamlDocument,
    collector: Collector,
    *,
    strict: bool = False,
) -> None:
    """`approval.require` patterns are checked as `tools_policy`'s are: one that matches
    no tool is reported at its line."""
    if approval is not None:
        where = ("approval", "require")
        _check_patterns(approval.require, where, tools, mcp_servers, doc, collector, strict)


def _check_patterns(
    patterns: Sequence[str],
    where: FieldPath,
    tools: Sequence[str],
    mcp_servers: Sequence[str],
    doc: YamlDocument,
    collector: Collector,
    strict: bool,
) -> None:
    severity = Severity.ERROR if strict else Severity.WARNING
    for index, pattern in enumerate(patterns):
        if any(fnmatchcase(name, pattern) for name in tools):
            continue
        if _may_match_mcp(pattern, mcp_servers):
            continue
        listed = ", ".join(tools) or "none"
        collector.add(
            doc.diagnostic(
                (*where, index),
                f"`{pattern}` matches none of the agent's tools",
                hint=f"its tools: {listed}"
                + ("; an MCP tool is written `server.tool`" if mcp_servers else ""),
                severity=severity,
            )
        )


def _may_match_mcp(pattern: str, servers: Sequence[str]) -> bool:
    if not servers:
        return False
    if pattern[:1] in ("*", "?", "["):
        return True
    head = pattern.split(".", 1)[0]
    return any(fnmatchcase(server, head) or pattern.startswith(server) for server in servers)


def check_cost_caps(
    limits: Limits | None,
    model: ModelSettings | None,
    settings: Settings,
    doc: YamlDocument,
    collector: Collector,
    where: FieldPath,
    model_where: FieldPath,
) -> None:
    """A cost cap needs a model with a price: report, at the cap's line, a model (or a
    fallback) the price list bundled with pydantic-ai does not hold."""
    scopes = [
        scope
        for scope in ("turn", "session", "key_daily")
        if limits is not None
        and (caps := getattr(limits, scope)) is not None
        and caps.max_cost_usd is not None
    ]
    if not scopes or model is None:
        return
    for settings_of in [model, *model.fallback_settings()]:
        unpriced = _why_unpriced(settings_of, settings)
        if unpriced is None:
            continue
        scope = scopes[0]
        path = (*where, scope, "max_cost_usd")
        # a cap from config.yaml is reported at the model it cannot price
        located = path in doc.positions
        collector.add(
            doc.diagnostic(
                path if located else model_where,
                f"limits.{scope}.max_cost_usd cannot be enforced: {unpriced}",
                hint="price it with `cost: {input_per_million: ..., output_per_million: ...}` "
                "in its model block, use a model on that price list, or cap `max_tokens` / "
                "`max_requests` instead of the cost",
            )
        )
        return


def _why_unpriced(model: ModelSettings, settings: Settings) -> str | None:
    """Why the model cannot be priced, or None when it can."""
    kind = settings.provider_type(model.provider)
    if kind is None or model.cost is not None:  # unknown provider: reported as such
        return None
    name = model.name or ""
    provider = {"azure_openai": "azure", "together_ai": "together", "fireworks_ai": "fireworks"}
    provider_id = provider.get(kind.value, kind.value)
    from genai_prices import Usage, calc_price  # imported only when a cost cap is set

    try:
        calc_price(Usage(input_tokens=1, output_tokens=1), name, provider_id=provider_id)
    except LookupError:
        return f"no price is known for `{model.provider}/{name}`"
    return None


def effective_tools(spec: AgentSpec) -> tuple[list[str], list[str], list[str]]:
    """The tools the model is offered and those `tools_policy` keeps from it (MCP
    servers' tools aside), and the MCP servers whose tools are only known once they run."""
    names = {t.name for t in spec.tools if not isinstance(t, McpTool)}
    names |= set(spec.subagents) | {b.name for b in spec.builtins}
    if spec.skills:
        names.add("load_skill")
    names |= set(memory_tool_names(spec.memory.long_term))
    names |= set(acting_tool_names(spec.workspace))
    policy = spec.tools_policy
    offered = sorted(n for n in names if policy is None or policy.allows(n))
    denied = sorted(names - set(offered))
    servers = sorted(t.name for t in spec.tools if isinstance(t, McpTool))
    return offered, denied, servers


def hand_back_clash(parent: str, target: AgentSpec) -> str | None:
    """Why `target` cannot be handed to by the agent named `parent`: one of its own tools
    takes the name its hand-back tool needs (`transfer_back_to_<parent>`); else None."""
    tool = back_tool(parent)
    offered, denied, _ = effective_tools(target)
    if tool in {*offered, *denied, *(h.tool for h in target.handoffs)}:
        return (
            f"agent `{target.name}` has a tool named `{tool}`, the name of the tool that "
            f"hands the conversation back to `{parent}`"
        )
    return None


def check_guardrails(
    guardrails: Guardrails | None,
    model: ModelSettings | None,
    structured: bool,
    settings: Settings,
    doc: YamlDocument,
    collector: Collector,
) -> None:
    """Settings that could never work, at their lines: a judge check with no model to
    judge (none of its own and none for the agent) or naming an unknown provider, and
    output checks on a structured answer (its JSON is not text a check can change)."""
    if guardrails is None:
        return
    for side in ("input", "output"):
        for index, check in enumerate(getattr(guardrails, side)):
            where: FieldPath = ("guardrails", side, index)
            if check.judge is not None:
                judge = check.judge.model or model
                if judge is None:
                    collector.add(
                        doc.diagnostic(
                            (*where, "judge"),
                            "this judge check has no model to ask: the agent has none",
                            hint="give the check `judge: {criteria: ..., model: {provider: "
                            "openai, name: gpt-4o-mini}}`, or the agent a model",
                        )
                    )
                elif settings.provider_type(judge.provider) is None and check.judge.model:
                    collector.add(
                        doc.diagnostic(
                            (*where, "judge", "model", "provider"),
                            f"unknown provider `{judge.provider}` for this judge",
                            hint="a provider type (openai, anthropic, ...) or the name of a "
                            "config.yaml provider entry",
                        )
                    )
            if side == "output" and structured:
                collector.add(
                    doc.diagnostic(
                        where,
                        "output checks cannot apply to a structured answer (response_format)",
                        hint="remove the output check, or the response_format",
                    )
                )
