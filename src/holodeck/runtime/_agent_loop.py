"""One run of an agent's model loop (pydantic-ai's), as a turn needs it: under the turn's
limits, with the session's own toolsets and the turn's settings, its text deltas emitted
into the turn's stream; then its outcome as a `FinalMessage`, and provider failures as
errors a user can act on. The top agent's turn (`TurnRunner`) and a sub-agent called as
a tool (`run_nested`) both run through here."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai import AgentRetries, UsageLimits
from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    UserContent,
)
from pydantic_ai.run import AgentRunResult, AgentRunResultEvent
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.usage import RunUsage

from holodeck.errors import InputRefused, LimitReached, ModelOutputError, ToolError
from holodeck.llm.errors import ProviderError, explain
from holodeck.runtime._approval import Pending
from holodeck.runtime._client_tools import client_toolset
from holodeck.runtime._events import FinalMessage, TextDelta, Usage
from holodeck.runtime._input_guard import InputBlocked
from holodeck.runtime._limits import TurnLimits, turn_limits
from holodeck.runtime._turn import CURRENT_TURN, RunningTurn

if TYPE_CHECKING:
    from holodeck.runtime._agent import Agent
    from holodeck.runtime._attachments import Attachment

OUTPUT_RETRIES = 2


async def drive(
    agent: Agent,
    content: str | Sequence[UserContent] | None,
    turn: RunningTurn,
    history: list[ModelMessage],
    usage: Any = None,
    limits: TurnLimits | None = None,
    deferred: DeferredToolResults | None = None,
    handoffs: Sequence[Any] = (),
    capabilities: Sequence[Any] = (),
) -> AgentRunResult[Any]:
    """Run the turn under `limits` (default: the agent's own caps); a cap that stops
    it is raised as `LimitReached`, carrying what the turn used (`spent`). `handoffs`
    are the transfer tools offered (output functions: a call ends the run);
    `capabilities` are added to the agent's for this run."""
    limits = limits or turn_limits(agent.spec.limits, agent.most_turn_requests)
    counted = usage if usage is not None else RunUsage()
    try:
        return await _run(
            agent,
            content,
            turn,
            history,
            counted,
            limits.usage_limits,
            deferred,
            handoffs,
            capabilities,
        )
    except UsageLimitExceeded as exc:
        reached = limits.reached(exc)
        if reached is None:
            raise
        reached.spent = counted
        raise reached from None


async def _run(
    agent: Agent,
    content: str | Sequence[UserContent] | None,
    turn: RunningTurn,
    history: list[ModelMessage],
    usage: RunUsage,
    limits: UsageLimits,
    deferred: DeferredToolResults | None = None,
    handoffs: Sequence[Any] = (),
    capabilities: Sequence[Any] = (),
) -> AgentRunResult[Any]:
    result: AgentRunResult[Any] | None = None
    own = await turn.scope.toolsets_for(agent) if turn.scope is not None else []
    asked = turn.settings if not turn.agent else None  # sub-agents keep their own
    output_type: Any = asked.output_type() if asked is not None else None  # None: the agent's
    pauses = agent._needs_approval is not None
    if turn.client_tools and not turn.agent:  # a call to one ends the run, deferred
        own = [*own, client_toolset(turn.client_tools)]
        pauses = True
    if handoffs or (pauses and (output_type is not None or turn.client_tools)):
        # the answer's own shape first: the offline model takes the first output tool
        output_type = [output_type or agent._output_type, *handoffs]
        if pauses:
            output_type.append(DeferredToolRequests)
    run_settings = asked.model_settings() if asked is not None else None
    retries: AgentRetries | None = None
    if asked is not None and asked.schema is not None:
        retries = {"output": OUTPUT_RETRIES}
    loop = agent._agent
    run = {
        "message_history": history,
        "usage_limits": limits,
        "usage": usage,
        "toolsets": own or None,
        "deferred_tool_results": deferred,
        "output_type": output_type,
        "model_settings": run_settings,
        "retries": retries,
        "capabilities": list(capabilities) or None,
    }
    if not turn.stream_text:  # nobody shows the answer as it comes: one response each
        return await loop.run(content, **run)
    async with loop.run_stream_events(content, **run) as stream:
        async for event in stream:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                if event.part.content:
                    turn.emit(TextDelta(event.part.content, turn.agent))
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                if event.delta.content_delta:
                    turn.emit(TextDelta(event.delta.content_delta, turn.agent))
            elif isinstance(event, AgentRunResultEvent):
                result = event.result
    assert result is not None
    return result


def final_of(result: AgentRunResult[Any], turn: RunningTurn) -> FinalMessage:
    """The run's outcome: its answer, or (paused) the calls waiting for a decision."""
    run_usage = result.usage
    usage = Usage(run_usage.input_tokens, run_usage.output_tokens, run_usage.requests)
    output = result.output
    if isinstance(output, DeferredToolRequests):  # paused: no answer yet
        pending = Pending.of(result.all_messages(), output).calls
        return FinalMessage("", None, usage, tuple(turn.calls), "", pending)
    responses = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
    answered = (responses[-1].model_name or "") if responses else ""  # a fallback's, too
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    structured = None if isinstance(output, str) else output
    return FinalMessage(text, structured, usage, tuple(turn.calls), answered)


def content_of(
    agent: Agent, prompt: str, attachments: Sequence[Attachment]
) -> str | list[UserContent]:
    """The user's message as the model takes it; an attachment of a kind the agent does
    not accept is `InputRefused`."""
    if not attachments:
        return prompt
    allowed = set(agent.spec.interaction.input_modalities)
    for attachment in attachments:
        if attachment.modality not in allowed:
            raise InputRefused(
                f"{agent.spec.name} does not accept {attachment.modality} input "
                f"({attachment.name or attachment.media_type}); it declares "
                f"{', '.join(sorted(allowed))}. Add `{attachment.modality}` to "
                "interaction.modalities.input to allow it"
            )
    parts: list[UserContent] = [prompt]
    parts.extend(BinaryContent(a.data, media_type=a.media_type) for a in attachments)
    return parts


def user_error(agent: Agent, exc: BaseException) -> BaseException:
    """`exc` as a user reads it: a provider's failure explained, a loop out of
    iterations or an unusable output said plainly."""
    if isinstance(exc, ProviderError | ModelOutputError | LimitReached | asyncio.CancelledError):
        return exc
    explained = explain(exc, agent.model.provider, agent.model.name)
    if explained is not None:
        return explained
    if isinstance(exc, UsageLimitExceeded):
        return ModelOutputError(
            f"{agent.spec.name}: stopped after {agent.max_tool_iterations} tool iterations "
            "without an answer; raise execution.max_tool_iterations if the task needs more"
        )
    if isinstance(exc, UnexpectedModelBehavior):
        return ModelOutputError(f"{agent.spec.name}: the model's output was unusable: {exc}")
    return exc


async def run_nested(agent: Agent, prompt: str, turn: RunningTurn, usage: Any) -> FinalMessage:
    """Run `agent` as a sub-agent inside a parent's tool call: its events go to the
    parent's stream, its own guardrails hold, and it cannot pause for approval."""
    guards = agent.guardrails
    if guards.has("output"):  # its text is not streamed before its checks pass
        turn = replace(turn, stream_text=False)
    await agent._enter_tools()
    token = CURRENT_TURN.set(turn)
    try:
        try:
            result = await drive(agent, prompt, turn, [], usage=usage)
        except InputBlocked as blocked:
            return FinalMessage(blocked.message)
        if isinstance(result.output, DeferredToolRequests):
            raise ToolError(
                f"{agent.spec.name}: a sub-agent's tool asked for approval, which only the "
                "top agent's tools can; require approval of the sub-agent itself"
            )
        final = final_of(result, turn)
        if guards.has("output"):
            checked = await guards.check("output", final.text, turn.emit, agent=turn.agent)
            if checked.text != final.text:
                final = replace(final, text=checked.text, output=None)
    except Exception as exc:
        raise user_error(agent, exc) from None
    finally:
        CURRENT_TURN.reset(token)
    return final
