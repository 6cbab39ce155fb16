"""Omnigent's `type: prompt` policies (a model classifies the message against a prompt)
as judge checks under `guardrails:`: `on: [request]` is an input check, `on: [response]`
an output check, the policy's `prompt` the judge's criteria and its `llm.model` the
judge's model. What has no equal here (other phases, `ask`, labels) is an error at its
line saying what to write."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.image.executor import Report
from holodeck.spec.models.model_settings import PROVIDER_ALIASES, split_model_string

SIDES = {"request": "input", "response": "output"}
UNSUPPORTED = ("condition", "set_labels", "ask_timeout")
KNOWN = {"type", "on", "prompt", "llm", "action", "name", *UNSUPPORTED}


def take_prompt_policy(
    data: dict[str, Any], where: FieldPath, key: str | int, entry: dict[str, Any], report: Report
) -> None:
    """Add the judge check(s) `entry` stands for to `data["guardrails"]`, or report why
    it cannot be one."""
    name = str(entry.get("name", key))
    problems = _problems(entry)
    for field, message, hint in problems:
        report((*where, field) if field else where, message, hint)
    if problems:
        return
    check: dict[str, Any] = {"name": name, "judge": {"criteria": entry["prompt"]}}
    model = _judge_model(entry.get("llm"), (*where, "llm"), report)
    if model is False:
        return
    if model is not None:
        check["judge"]["model"] = model
    guardrails = data.get("guardrails", {})
    if not isinstance(guardrails, dict):
        return
    guardrails = data["guardrails"] = dict(guardrails)  # the document's own data stays
    for phase in _phases(entry):
        checks = guardrails.get(SIDES[phase], [])
        if isinstance(checks, list):
            guardrails[SIDES[phase]] = [*checks, dict(check)]


def _phases(entry: dict[str, Any]) -> list[str]:
    on = entry.get("on", ["request"])
    return [on] if isinstance(on, str) else list(on)


def _problems(entry: dict[str, Any]) -> list[tuple[str | None, str, str]]:
    found: list[tuple[str | None, str, str]] = []
    if not isinstance(entry.get("prompt"), str) or not entry["prompt"].strip():
        found.append(
            (None, "a prompt policy needs its `prompt`", "e.g. prompt: Deny medical advice.")
        )
    on = entry.get("on", ["request"])
    phases = [on] if isinstance(on, str) else on
    if not isinstance(phases, list) or not phases:
        found.append(("on", "`on` must list phases", "e.g. on: [request, response]"))
    else:
        for phase in phases:
            if phase not in SIDES:
                found.append(
                    (
                        "on",
                        f"a prompt policy on `{phase}` has no equal here: guardrails check "
                        "the user's message (`request`) and the answer (`response`)",
                        "use `on: [request]` or `on: [response]`; which tools the model may "
                        "use is written under `tools_policy:`",
                    )
                )
    actions = entry.get("action", ["allow", "deny"])
    actions = [actions] if isinstance(actions, str) else actions
    if not isinstance(actions, list) or any(a not in ("allow", "deny") for a in actions):
        found.append(
            (
                "action",
                "a guardrail allows or blocks: only `allow` and `deny` have an equal here",
                "write `action: [allow, deny]` (a denied message is blocked)",
            )
        )
    for field in UNSUPPORTED:
        if field in entry:
            found.append(
                (
                    field,
                    f"`{field}` has no equal here (guardrails keep no labels or approvals)",
                    f"remove `{field}`",
                )
            )
    for field in entry:
        if field not in KNOWN:
            found.append((field, f"`{field}` is not a prompt policy field", f"remove `{field}`"))
    return found


def _judge_model(llm: Any, where: FieldPath, report: Report) -> dict[str, str] | bool | None:
    """The judge's `{provider, name}` from `llm.model`; None: the agent's; False: reported."""
    if llm is None:
        return None
    if not isinstance(llm, dict) or set(llm) - {"model"}:
        report(
            where,
            "only `llm.model` carries over to a guardrail's judge",
            "write `llm: {model: provider/name}`; the judge uses the run's timeouts and retries",
        )
        return False
    text = llm.get("model")
    parts = split_model_string(text) if isinstance(text, str) else None
    if parts is None:
        report((*where, "model"), f"`{text}` is not `provider/model`", "e.g. openai/gpt-4o-mini")
        return False
    provider, name = parts
    return {"provider": PROVIDER_ALIASES.get(provider, provider), "name": name}
