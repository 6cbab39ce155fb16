"""Omnigent's `type: function` policies as `tool_policies`: the `handler` (a dotted
path, `policies.check`, or `policies.py:check`) names a function in a file of the
image's folder, built with its `factory_params`; it sees each tool call (`on:
[tool_call]`) and what a call returned (`tool_result`). Omnigent's own built-in
handlers (`omnigent.policies.builtins...`) and other phases have no equal here, and
are errors saying what to write."""

from __future__ import annotations

import re
from typing import Any

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.image.executor import Report
from holodeck.spec.yaml.document import YamlDocument

PHASES = ("tool_call", "tool_result")
KNOWN = {"type", "handler", "callable", "factory_params", "on", "name", "description"}
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_FILE = re.compile(r"^[^:]+\.py:[A-Za-z_][A-Za-z0-9_]*$")


def take_function_policy(
    data: dict[str, Any], where: FieldPath, key: str | int, entry: dict[str, Any], report: Report
) -> None:
    """Add the policy `entry` stands for to `data["tool_policies"]`, or report why it
    cannot be one."""
    ok = True
    for field in entry:
        if field not in KNOWN:
            message = f"`{field}` is not a function policy field"
            report((*where, field), message, f"remove `{field}`")
            ok = False
    handler = entry.get("handler", entry.get("callable"))
    target = _callable(handler)
    if target is None:
        ok = False
        field = "handler" if "handler" in entry or "callable" not in entry else "callable"
        if isinstance(handler, str) and handler.startswith("omnigent."):
            report(
                (*where, field),
                f"Omnigent's built-in policy `{handler}` has no equal here",
                "write your own check in a file of the image (e.g. `handler: policies.check`"
                "), or use `tool_rules:` for patterns over a tool's arguments",
            )
        else:
            report(
                (*where, field),
                "a function policy needs `handler`: a dotted path to a function in the "
                "image's folder, or `file.py:function`",
                "e.g. handler: policies.check (policies.py beside config.yaml)",
            )
    params = entry.get("factory_params")
    if params is not None and not isinstance(params, dict):
        report((*where, "factory_params"), "`factory_params` must be a mapping", None)
        ok = False
    phases = _phases(entry.get("on", list(PHASES)), (*where, "on"), report)
    if not ok or phases is None:
        return
    name = entry.get("name") or (key if isinstance(key, str) else ".".join(map(str, where)))
    policy: dict[str, Any] = {"name": str(name), "callable": target}
    policy["on"] = phases
    if params is not None:
        policy["factory_params"] = params
    existing = data.get("tool_policies", [])
    if isinstance(existing, list):
        data["tool_policies"] = [*existing, policy]


def _callable(handler: Any) -> str | None:
    """`file.py:function` for a handler, or None when it names no file of the image."""
    if not isinstance(handler, str) or handler.startswith("omnigent."):
        return None
    if _FILE.match(handler):
        return handler
    if _DOTTED.match(handler):
        module, function = handler.rsplit(".", 1)
        return module.replace(".", "/") + ".py:" + function
    return None


def _phases(on: Any, where: FieldPath, report: Report) -> list[str] | None:
    phases = [on] if isinstance(on, str) else on
    if not isinstance(phases, list) or not phases:
        report(where, "`on` must list phases", "e.g. on: [tool_call, tool_result]")
        return None
    wrong = [p for p in phases if p not in PHASES]
    if wrong:
        report(
            where,
            f"a function policy on `{wrong[0]}` has no equal here: function policies see "
            "tool calls (`tool_call`) and their results (`tool_result`)",
            "use `on: [tool_call]` and/or `tool_result`; checks on messages and answers are "
            "`type: prompt` policies or `guardrails:`",
        )
        return None
    return list(dict.fromkeys(phases))


def policy_origin(doc: YamlDocument, index: int, name: str | None) -> FieldPath:
    """Where the `index`th tool policy (named `name`) was written: `tool_policies` or an
    Omnigent `policies:` entry (by its key, or its place in a list)."""
    keys: list[str | int] = [k for k in (name,) if k is not None]
    if name is not None and (place := re.fullmatch(r"(?:guardrails\.)?policies\.(\d+)", name)):
        keys.append(int(place.group(1)))
    candidates: list[FieldPath] = [("tool_policies", index)]
    for base in (("policies",), ("guardrails", "policies")):
        candidates += [(*base, k) for k in keys]
    for found in candidates:
        if found in doc.positions:
            field = "callable" if found[0] == "tool_policies" else "handler"
            return (*found, field)
    return ("tool_policies", index, "callable")
