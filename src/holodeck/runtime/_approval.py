"""Human approval (`approval:`): which tool calls wait for a person's decision, and the
state of a turn paused on them.

A call that needs approval is not run: pydantic-ai's deferred tools end the run with the
pending calls (`DeferredToolRequests`), and the turn ends paused, its messages kept in
the session as `Pending`. Once every call is decided, `Session.resume()` runs the turn on
with the decisions (`DeferredToolResults`): an approved call runs, a denied one returns
its reason to the model, which answers knowing it was refused.

A call of a tool the client runs (`client_tools`, pydantic-ai's external tools) pauses
the turn the same way; its "decision" is the result the client sends back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.toolsets import AbstractToolset

from holodeck.errors import SessionError
from holodeck.runtime._events import ApprovalRequired, ToolCallFinished, ToolCallStarted
from holodeck.runtime._turn import RunningTurn
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.tools import AgentTool, FunctionTool, McpTool, PromptTool

DENIED = "denied"  # the start of a denied call's `error`: "denied: <reason>"


def needs_approval(spec: AgentSpec) -> Callable[[str, dict[str, Any]], bool] | None:
    """Whether a call of a tool (its name and `ToolDefinition.metadata`) waits for a
    decision; None when the agent requires approval of nothing."""
    named = {
        t.name
        for t in spec.tools
        if isinstance(t, FunctionTool | PromptTool | AgentTool) and t.approval == "required"
    }
    servers = {t.name for t in spec.tools if isinstance(t, McpTool) and t.approval == "required"}
    patterns = spec.approval
    if not named and not servers and (patterns is None or not patterns.require):
        if any("tool_call" in p.on for p in spec.tool_policies):  # a policy may ask
            return lambda name, meta: False
        return None

    def needs(name: str, meta: dict[str, Any]) -> bool:
        server, tool = meta.get("mcp_server"), meta.get("mcp_tool")
        if server is not None and server in servers:
            return True
        if name in named:
            return True
        aliases = (f"{server}.{tool}",) if server is not None and tool is not None else ()
        return patterns is not None and patterns.requires(name, *aliases)

    return needs


def with_approval(
    toolset: AbstractToolset[Any], needs: Callable[[str, dict[str, Any]], bool] | None
) -> AbstractToolset[Any]:
    """`toolset` whose calls that need approval stop the run as deferred, unless the
    call is the approved one being resumed. Outermost, so that a paused call is reported
    only when it runs (its `ToolCallStarted` comes once it is approved)."""
    if needs is None:
        return toolset

    def required(ctx: RunContext[Any], tool: ToolDefinition, args: dict[str, Any]) -> bool:
        return needs(tool.name, tool.metadata or {})

    return toolset.approval_required(required)


@dataclass(frozen=True)
class Decision:
    """A person's answer to a call waiting for approval."""

    approve: bool
    reason: str | None = None
    output: Any = None  # the result of a call the client ran

    def result(self) -> ToolApproved | ToolDenied:
        if self.approve:
            return ToolApproved()
        return ToolDenied(self.reason or "The user denied this tool call.")


@dataclass
class Pending:
    """A turn paused on calls waiting for approval: its messages so far (the last is
    the model's response with the calls), the calls, and the decisions taken so far."""

    messages: list[ModelMessage]
    calls: tuple[ApprovalRequired, ...]
    decisions: dict[str, Decision] = field(default_factory=dict)

    @classmethod
    def of(cls, messages: list[ModelMessage], requests: DeferredToolRequests) -> Pending:
        calls = tuple(
            ApprovalRequired(c.tool_call_id, c.tool_name, c.args_as_dict())
            for c in requests.approvals
        ) + tuple(
            ApprovalRequired(c.tool_call_id, c.tool_name, c.args_as_dict(), client=True)
            for c in requests.calls
        )
        return cls(messages, calls)

    @property
    def undecided(self) -> tuple[ApprovalRequired, ...]:
        return tuple(c for c in self.calls if c.call_id not in self.decisions)

    def call(self, call_id: str) -> ApprovalRequired | None:
        return next((c for c in self.calls if c.call_id == call_id), None)

    def results(self) -> DeferredToolResults:
        client = {c.call_id for c in self.calls if c.client}
        approvals: dict[str, bool | ToolApproved | ToolDenied] = {
            i: d.result() for i, d in self.decisions.items() if i not in client
        }
        outputs = {i: d.output for i, d in self.decisions.items() if i in client}
        return DeferredToolResults(calls=outputs, approvals=approvals)

    def report_denied(self, turn: RunningTurn) -> None:
        """Denied calls in the turn's stream, as calls that ended with `denied: reason`
        (they never run: pydantic-ai answers the model for them)."""
        for call in self.calls:
            decision = self.decisions.get(call.call_id)
            if decision is None or decision.approve or call.client:
                continue
            error = f"{DENIED}: {decision.reason or 'the user denied this tool call'}"
            turn.started.append(call.call_id)
            turn.emit(ToolCallStarted(call.call_id, call.name, call.args))
            finished = ToolCallFinished(call.call_id, call.name, call.args, None, error, 0.0)
            turn.finished[call.call_id] = finished
            turn.emit(finished)

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": ModelMessagesTypeAdapter.dump_python(self.messages, mode="json"),
            "calls": [
                {"id": c.call_id, "name": c.name, "args": c.args, "client": c.client}
                for c in self.calls
            ],
            "decisions": {
                i: {"approve": d.approve, "reason": d.reason, "output": d.output}
                for i, d in self.decisions.items()
            },
        }

    @classmethod
    def from_dict(cls, raw: Any) -> Pending:
        try:
            messages = ModelMessagesTypeAdapter.validate_python(raw["messages"])
            calls = tuple(
                ApprovalRequired(c["id"], c["name"], dict(c["args"]), client=bool(c.get("client")))
                for c in raw["calls"]
            )
            decisions = {
                str(i): Decision(bool(d["approve"]), d.get("reason"), d.get("output"))
                for i, d in dict(raw.get("decisions") or {}).items()
            }
        except (KeyError, TypeError, ValueError) as exc:
            problem = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
            raise SessionError(f"the session's paused turn is damaged ({problem})") from None
        return cls(list(messages), calls, decisions)
