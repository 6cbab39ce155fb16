"""Omnigent's `policies:` (also under `guardrails:`): a `cost_budget` policy is a session
cost cap here (`limits.session.max_cost_usd`), a `prompt` policy a judge check under
`guardrails:`, a `function` policy a check on tool calls and results (`tool_policies`);
a policy of another kind has no equal yet and is an error saying so, rather than a rule
silently not applied. So is `guardrails.labels`; `ask_timeout` only
tunes waiting for an answer that never comes here, so it is a warning."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.image.executor import Report
from holodeck.spec.image.function_policies import take_function_policy
from holodeck.spec.image.prompt_policies import take_prompt_policy

AMOUNT_KEYS = ("max_usd", "max_cost_usd", "limit_usd")
OMNIGENT_ONLY = {
    "labels": (
        "`guardrails.labels` has no equal here: guardrails keep no state between turns",
        "remove `labels`; checks are written under `guardrails: {input: [...], output: [...]}`",
    ),
}
# Tunes only how long Omnigent waits for a person to answer a policy that asks: here a
# call a policy asks about waits for its decision with no time limit (and a guardrail
# never asks), so it is a warning (--strict: error).
ASK_TIMEOUT = (
    "`guardrails.ask_timeout` limited how long Omnigent waits for a person to answer a "
    "policy that asks; here a guardrail never asks, and a tool call a policy asks about "
    "waits for its decision with no time limit",
    "remove `ask_timeout`",
)
SCOPES = {"session": "session", "turn": "turn", "run": "turn", "daily": "key_daily"}


def take_policies(data: dict[str, Any], report: Report) -> None:
    """Move the cost budgets of `policies:` / `guardrails.policies` into `limits:`."""
    found: list[tuple[FieldPath, Any]] = []
    if "policies" in data:
        found.append((("policies",), data.pop("policies")))
    guardrails = data.get("guardrails")
    if isinstance(guardrails, dict):
        for name in OMNIGENT_ONLY:
            if name in guardrails:
                report(("guardrails", name), *OMNIGENT_ONLY[name])
        if "ask_timeout" in guardrails:
            report(("guardrails", "ask_timeout"), *ASK_TIMEOUT, warning=True)
        taken = ("policies", "ask_timeout", *OMNIGENT_ONLY)
        rest = {k: v for k, v in guardrails.items() if k not in taken}
        if "policies" in guardrails:
            found.append((("guardrails", "policies"), guardrails["policies"]))
        if rest:
            data["guardrails"] = rest  # HoloDeck's own `input:` / `output:` checks
        else:
            del data["guardrails"]
    for where, policies in found:
        entries = _entries(policies)
        if entries is None:
            report(where, "policies must be a list or a mapping of policies", None)
            continue
        for key, entry in entries:
            _take(data, (*where, key), key, entry, report)


def _entries(policies: Any) -> list[tuple[str | int, Any]] | None:
    if isinstance(policies, dict):
        return list(policies.items())
    if isinstance(policies, list):
        return list(enumerate(policies))
    return None


def _take(
    data: dict[str, Any], where: FieldPath, key: str | int, entry: Any, report: Report
) -> None:
    kind = entry.get("type", key) if isinstance(entry, dict) else None
    if kind == "prompt" and isinstance(entry, dict):
        take_prompt_policy(data, where, key, entry, report)
        return
    if kind == "function" and isinstance(entry, dict):
        take_function_policy(data, where, key, entry, report)
        return
    if kind != "cost_budget" or not isinstance(entry, dict):
        report(
            where,
            f"policy `{kind if isinstance(kind, str) else key}` has no equal here; only "
            "`cost_budget`, `prompt` and `function` policies are enforced",
            "remove it; caps on tokens, requests and tool calls are written under `limits:`, "
            "which tools are offered under `tools_policy:`, checks on messages and "
            "answers under `guardrails: {input: [...], output: [...]}`, and checks on tool "
            "calls under `tool_rules:`",
        )
        return
    amounts = [k for k in AMOUNT_KEYS if k in entry]
    scope = SCOPES.get(str(entry.get("scope", "session")))
    if len(amounts) != 1 or scope is None:
        report(
            where,
            "a cost_budget policy needs one amount ("
            + ", ".join(f"`{k}`" for k in AMOUNT_KEYS)
            + ") and a `scope` of session (default), turn or daily",
            "e.g. {type: cost_budget, max_usd: 0.50}, or write `limits: {session: "
            "{max_cost_usd: 0.50}}`",
        )
        return
    limits = data.setdefault("limits", {})
    if not isinstance(limits, dict):
        return
    caps = dict(limits.get(scope) or {})
    if "max_cost_usd" in caps:
        report(where, f"`limits.{scope}.max_cost_usd` is given twice", "keep one of them")
        return
    caps["max_cost_usd"] = entry[amounts[0]]
    limits[scope] = caps
