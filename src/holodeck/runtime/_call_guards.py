"""Per-call guards at run time: `tool_rules` and `tool_policies` checked on each tool
call before it runs, and the policies that ask for it on what it returned.

A denied call does not run: the model is told why (`This call was not run: ...`) and the
call is reported as one a person denied (its `error` is `denied: <reason>`), so chat,
reports, SSE and traces show it the same way. A policy that answers ASK pauses the turn
as `approval:` does (pydantic-ai's deferred tools); once approved, the call runs. A
policy that fails, or answers what it may not, denies (a guard fails closed).

    guards = CallGuards.of(spec)    # None: the agent has no rules and no policies
"""

from __future__ import annotations

import inspect
import json
import logging
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pydantic_ai.exceptions import ApprovalRequired

from holodeck.runtime._approval import DENIED
from holodeck.runtime._events import GuardrailTriggered
from holodeck.runtime._turn import CURRENT_TURN
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.call_guards import ArgumentRule, FunctionPolicy, ToolRule, matches
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.python_modules import load_module

log = logging.getLogger("holodeck.runtime")

NOT_RUN = "This call was not run: "
WITHHELD = "This call's result was withheld: "
Checker = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Refusal:
    """A call or a result the guards stopped: what the model sees, what events say."""

    reason: str
    text: str

    @property
    def error(self) -> str:
        return f"{DENIED}: {self.reason}"


@dataclass(frozen=True)
class _Policy:
    label: str
    on: frozenset[str]
    check: Checker


class CallGuards:
    """One agent's rules and policies, its policies built once (their factories called)."""

    def __init__(
        self, rules: Mapping[str, ToolRule], policies: Sequence[FunctionPolicy], root: Path
    ) -> None:
        self.rules = dict(rules)
        self.policies = tuple(
            _Policy(p.name or f"tool_policies.{i}", frozenset(p.on), _build(p, root))
            for i, p in enumerate(policies)
        )

    @classmethod
    def of(cls, spec: AgentSpec) -> CallGuards | None:
        if not spec.tool_rules and not spec.tool_policies:
            return None
        return cls(spec.tool_rules, spec.tool_policies, spec.root)

    async def before(
        self, name: str, args: dict[str, Any], meta: Mapping[str, Any], *, approved: bool
    ) -> Refusal | None:
        """Why the call must not run (None: it may). Raises pydantic-ai's
        `ApprovalRequired` when a policy asks and the call is not the approved one
        being resumed."""
        for alias in _names(name, meta):
            rule = self.rules.get(alias)
            reason = _rule_denial(rule, args) if rule is not None else None
            if reason is not None:
                return Refusal(f"{reason}, which tool_rules deny for `{alias}`", NOT_RUN + reason)
        asked = False
        event = {"type": "tool_call", "data": {"name": name, "arguments": dict(args)}}
        for policy in self.policies:
            if "tool_call" not in policy.on:
                continue
            verdict, reason = await _ask(policy, event)
            if verdict == "DENY":
                return Refusal(f"{policy.label}: {reason}", NOT_RUN + reason)
            asked = asked or verdict == "ASK"
        if asked and not approved:
            raise ApprovalRequired()
        return None

    async def after(
        self, name: str, args: dict[str, Any], result: Any
    ) -> tuple[Any, Refusal | None]:
        """What the model sees of `result` once the `tool_result` policies have read it,
        and the refusal when one withheld it."""
        for policy in self.policies:
            if "tool_result" not in policy.on:
                continue
            data = {"name": name, "arguments": dict(args), "result": result}
            answer = await _answer(policy, {"type": "tool_result", "data": data})
            verdict, reason = _verdict(policy, answer)
            if verdict == "ASK":  # nobody can be asked once the call has run
                verdict = "DENY"
                reason = "a result cannot wait for a person's approval"
            if verdict == "DENY":
                return WITHHELD + reason, Refusal(f"{policy.label}: {reason}", WITHHELD + reason)
            if isinstance(answer, dict) and "output" in answer:
                result = answer["output"]
                _report_redaction(policy.label)
        return result, None


def _build(policy: FunctionPolicy, root: Path) -> Checker:
    """The policy's checker: its function, or what its factory returns."""
    file, function = policy.callable.rsplit(":", 1)
    path = (root / file).resolve()
    found: Any = getattr(load_module(path), function, None)
    if not callable(found):
        raise ToolLoadError(f"defines no function `{function}` (tool_policies)", path)
    if policy.factory_params is None:
        return cast("Checker", found)
    try:
        checker: Any = found(**policy.factory_params)
    except Exception as exc:  # the user's factory: said where, no traceback
        raise ToolLoadError(
            f"`{function}(**factory_params)` failed: {type(exc).__name__}: {exc}", path
        ) from None
    if not callable(checker):
        raise ToolLoadError(
            f"`{function}(**factory_params)` returned {type(checker).__name__}, not the "
            "checker function",
            path,
        )
    return cast("Checker", checker)


async def _answer(policy: _Policy, event: dict[str, Any]) -> Any:
    try:
        answer = policy.check(event)
        return await answer if inspect.isawaitable(answer) else answer
    except Exception as exc:  # fails closed: the call is denied
        log.warning("tool policy %s failed, so the call is denied: %s", policy.label, exc)
        return {"result": "DENY", "reason": f"the policy failed ({type(exc).__name__})"}


async def _ask(policy: _Policy, event: dict[str, Any]) -> tuple[str, str]:
    return _verdict(policy, await _answer(policy, event))


def _verdict(policy: _Policy, answer: Any) -> tuple[str, str]:
    """(ALLOW | DENY | ASK, reason) from a policy's answer."""
    if answer is None:
        return "ALLOW", ""
    verdict = answer.get("result") if isinstance(answer, dict) else None
    verdict = verdict.upper() if isinstance(verdict, str) else None
    if verdict not in ("ALLOW", "DENY", "ASK"):
        log.warning(
            "tool policy %s answered %r; it must answer None or {'result': 'ALLOW' | "
            "'DENY' | 'ASK', 'reason': ...}, so the call is denied",
            policy.label,
            answer,
        )
        return "DENY", "the policy gave no verdict"
    reason = answer.get("reason") if isinstance(answer, dict) else None
    return verdict, str(reason) if reason else f"denied by {policy.label}"


def _report_redaction(label: str) -> None:
    turn = CURRENT_TURN.get()
    if turn is not None:
        turn.emit(GuardrailTriggered(label, "input", "redact", "tool_policy", agent=turn.agent))


def _names(name: str, meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The names a rule may give the tool: the model's, and `server.tool` for MCP."""
    server, tool = meta.get("mcp_server"), meta.get("mcp_tool")
    return (name, f"{server}.{tool}") if server is not None and tool is not None else (name,)


def _rule_denial(rule: ToolRule, args: Mapping[str, Any]) -> str | None:
    for key, value in args.items():  # the tool's own rules read its texts only
        found = _value_denial(rule, key, value) if isinstance(value, str) else None
        if found is not None:
            return found
    for key, own in rule.arguments.items():
        if key in args:
            found = _value_denial(own, key, args[key])
            if found is not None:
                return found
    return None


def _value_denial(rule: ArgumentRule, key: str, value: Any) -> str | None:
    for text in _texts(value):
        raw, plain = text, _as_path(text)
        for pattern in rule.deny:  # either spelling of a path is caught
            if matches(pattern, raw) or matches(pattern, plain):
                return f"the argument `{key}` matches `{pattern}`"
        if rule.allow is not None and not any(matches(p, plain) for p in rule.allow):
            allowed = ", ".join(f"`{p}`" for p in rule.allow)
            return f"the argument `{key}` matches none of {allowed}"
    return None


def _texts(value: Any) -> Iterator[str]:
    """Each text in an argument's value (lists and objects looked into)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif value is not None:
        yield json.dumps(value)


def _as_path(text: str) -> str:
    """`text` read as a relative path: `./a` and `b/../a` are `a`, so a rule written for
    `a` is not stepped around by another spelling of it."""
    if "/" not in text and not text.startswith("."):
        return text
    normal = posixpath.normpath(text)
    return normal[2:] if normal.startswith("./") else normal
