"""Every tool call, whatever its kind, passes here: it is announced, timed, recorded
and shielded, so a failing tool never stops the turn (the model then sees "", or the
"blocked: ..." of a request the outbound policy refused).

Where the announcements go is the runtime's business: it passes a `CallObserver`."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_ai import RunContext, WrapperToolset
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry
from pydantic_ai.toolsets import ToolsetTool

from holodeck.errors import ToolError
from holodeck.llm.cassette import CassetteMiss
from holodeck.net import OutboundBlocked
from holodeck.runtime._call_guards import CallGuards
from holodeck.tools.middleware import Middleware, ToolCall

log = logging.getLogger("holodeck.tools")

# Not tool failures: signals to pydantic-ai (ask the model to retry, defer), and a replay
# that has no recorded answer, which must stop the run rather than look like a tool error.
_CONTROL = (ModelRetry, CallDeferred, ApprovalRequired, CassetteMiss)
FAILED_RESULT = ""


class CallObserver(Protocol):
    """Told of each call as it starts and ends (the runtime turns these into events)."""

    def caller(self) -> str:
        """Which agent is calling: "" for the top agent, a path for sub-agents."""
        ...

    def started(self, call_id: str, name: str, args: dict[str, Any]) -> None: ...

    def finished(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        result: Any,
        error: str | None,
        duration_ms: float,
    ) -> None: ...


@dataclass
class ObservedToolset(WrapperToolset[Any]):
    observer: CallObserver
    middleware: Middleware = field(default_factory=Middleware)
    # per-tool limits: a call past its limit fails like any other (the model gets "")
    timeouts: dict[str, float] = field(default_factory=dict)
    # `logging.redact_content`: a failure is reported (events, logs, traces) by its
    # exception type alone, since its text often quotes the arguments
    redact_errors: bool = False
    guards: CallGuards | None = None  # `tool_rules`, `tool_policies`

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        observer = self.observer
        call_id = ctx.tool_call_id or uuid.uuid4().hex
        if self.guards is not None:  # a call that waits for a person is not reported yet
            meta = tool.tool_def.metadata or {}
            refusal = await self.guards.before(
                name, tool_args, meta, approved=ctx.tool_call_approved
            )
            if refusal is not None:  # never runs; reported as a call a person denied
                observer.started(call_id, name, dict(tool_args))
                observer.finished(call_id, name, dict(tool_args), refusal.text, refusal.error, 0)
                return refusal.text
        call = ToolCall(name, dict(tool_args), agent=observer.caller())
        observer.started(call_id, name, dict(tool_args))
        started = time.perf_counter()
        error: str | None = None

        async def invoke(args: dict[str, Any] | None = None) -> Any:
            if args is not None:
                call.args = dict(args)
            limit = self.timeouts.get(name)
            if limit is None:
                return await self.wrapped.call_tool(name, call.args, ctx, tool)
            try:
                async with asyncio.timeout(limit):
                    return await self.wrapped.call_tool(name, call.args, ctx, tool)
            except TimeoutError:
                raise ToolTimeout(f"no result after {limit:g} s (the tool's timeout)") from None

        async def retry(args: dict[str, Any] | None = None) -> Any:
            call.attempt += 1
            return await invoke(args)

        result: Any = FAILED_RESULT
        try:
            await self.middleware.run_before(call)
            result = await self.middleware.run_after(call, await invoke())
            if self.guards is not None:
                result, refusal = await self.guards.after(name, call.args, result)
                error = refusal.error if refusal is not None else None
        except _CONTROL as control:  # e.g. a timeout or bad arguments: the model retries
            error = self._reported(_describe(control))
            raise
        except Exception as exc:  # a tool's failure is the model's problem, not the turn's
            recovered, outcome = await self.middleware.recover(call, exc, retry)
            if recovered:
                result = outcome
                error = None if call.attempt > 1 else self._reported(_describe(exc))
            else:
                error = self._reported(_describe(outcome))
                log.warning("tool %s failed: %s", name, error)
                if isinstance(outcome, OutboundBlocked):  # the model learns why, and stops
                    result = str(outcome)
        finally:
            # cancelled calls (an interrupted turn) end without a finished event
            if not _cancelling():
                elapsed = (time.perf_counter() - started) * 1000
                observer.finished(call_id, name, call.args, result, error, elapsed)
        return result

    def _reported(self, error: str) -> str:
        return error_type(error) if self.redact_errors else error


class ToolTimeout(ToolError):
    """A tool gave no result within its timeout."""


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _describe(error: BaseException) -> str:
    """`Type: text`, so that `error_type` finds the type again."""
    name = type(error).__name__
    text = str(error)
    if not text or text == name:
        return name
    return text if text.startswith(f"{name}:") else f"{name}: {text}"


def error_type(error: str) -> str:
    """The exception type of a failure as tool calls report it (`ValueError: ...`)."""
    return error.split(":", 1)[0]
