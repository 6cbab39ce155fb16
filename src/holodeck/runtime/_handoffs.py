"""Handoffs: the agent answering a session can transfer the conversation to another
(`handoffs:`), which then answers this message and the later ones with its own
instructions, tools and model, until it hands back.

Who answers is a stack of handoff names from the root agent (the session keeps it). The
answering agent is offered one `transfer_to_<name>` tool per handoff it declares and,
when it is not the root, `transfer_back_to_<agent>` to the agent that handed to it. They
are pydantic-ai output functions: calling one ends the agent's run (it writes no answer)
with a `HandoffCall`, and the turn goes on with the next agent from the same history
(the transfer call and its result included), so every call keeps its result. The root
agent builds each target on first use, with its own options, hosting and telemetry, and
closes them when it closes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext, ToolOutput
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart
from pydantic_ai.usage import RunUsage

from holodeck.errors import DefinitionError, ModelOutputError
from holodeck.llm.offline_script import HANDOFF_MARK
from holodeck.runtime._agent_loop import drive
from holodeck.runtime._events import HandedOff
from holodeck.runtime.harness import choose_harness
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.handoffs import back_tool

if TYPE_CHECKING:
    from pydantic_ai.messages import UserContent
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.tools import DeferredToolResults

    from holodeck.runtime._agent import Agent
    from holodeck.runtime._limits import TurnLimits
    from holodeck.runtime._turn import RunningTurn

# Transfers one turn may make: agents that hand a message back and forth end the turn
# with an error instead of running on
MAX_HANDOFFS = 5

Stack = tuple[str, ...]


@dataclass(frozen=True)
class HandoffCall:
    """A transfer tool's output: the run ends with it. `target` is the handoff to take
    the conversation; None hands it back."""

    target: str | None
    reason: str | None
    call_id: str


def chain(root: AgentSpec, stack: Sequence[str]) -> list[AgentSpec]:
    """The agents from the root to the one answering, following `stack`; a name the
    definition no longer has ends the chain there (a session saved before it changed)."""
    specs = [root]
    for name in stack:
        handoff = specs[-1].handoff(name)
        if handoff is None:
            break
        specs.append(handoff.agent)
    return specs


def valid_stack(root: AgentSpec, stack: Sequence[str]) -> Stack:
    """The longest start of `stack` the root's handoffs still lead along."""
    return tuple(stack[: len(chain(root, stack)) - 1])


def transfer_outputs(specs: Sequence[AgentSpec]) -> list[ToolOutput[HandoffCall]]:
    """The transfer tools of the last agent of `specs` (the chain to it from the root)."""
    answering = specs[-1]
    outputs = [
        _output(h.tool, h.name, h.description or f"Transfer the conversation to {h.name}.")
        for h in answering.handoffs
    ]
    if len(specs) > 1:
        previous = specs[-2].name
        outputs.append(
            _output(
                back_tool(previous),
                None,
                f"Return the conversation to {previous}, the agent that handed it to you, "
                "when the request is outside what you handle or you are done with it.",
            )
        )
    return outputs


def _output(tool: str, target: str | None, description: str) -> ToolOutput[HandoffCall]:
    def transfer(ctx: RunContext[Any], reason: str | None = None) -> HandoffCall:
        return HandoffCall(target, reason, ctx.tool_call_id or tool)

    transfer.__doc__ = (
        f"{description}\n\nArgs:\n    reason: Why the conversation is transferred, briefly."
    )
    return ToolOutput(transfer, name=tool, description=description)


def check_harnesses(spec: AgentSpec, model_override: object, *, own_loop: bool) -> None:
    """Refuse now an agent with handoffs, or a target, that runs in a harness: the
    harness runs its own loop, which cannot end a run on a transfer."""
    if not spec.handoffs or own_loop:
        return
    for agent in _reached(spec):
        if agent.harness is not None and choose_harness(agent, model_override, own_loop=own_loop):
            raise DefinitionError(
                f"{agent.source}: {agent.name} runs in the `{agent.harness}` harness, whose "
                "own loop cannot transfer a conversation, and "
                + ("it has `handoffs`" if agent is spec else "it is a handoff target")
                + f" of {spec.name}. Pass `--harness none` to run HoloDeck's own loop, or "
                "remove the handoff"
            )


def checks_output(spec: AgentSpec) -> bool:
    """Whether an agent `spec` hands over to has output guardrails of its own."""
    return any(a.guardrails is not None and a.guardrails.output for a in _reached(spec)[1:])


def _reached(spec: AgentSpec) -> list[AgentSpec]:
    """`spec` and every agent its handoffs lead to."""
    found = [spec]
    for handoff in spec.handoffs:
        found += _reached(handoff.agent)
    return found


class HandoffTargets:
    """The agents a root agent's sessions hand over to, built on first use (keyed by
    the stack that reaches them) and closed with the root."""

    def __init__(self, root: Agent, make_agent: Callable[..., Agent]) -> None:
        self.root = root
        self._make = make_agent
        self._built: dict[Stack, Agent] = {}

    def agent_for(self, stack: Stack) -> Agent:
        if not stack:
            return self.root
        built = self._built.get(stack)
        if built is None:
            root = self.root
            spec = chain(root.spec, stack)[-1]
            built = self._make(spec, root.options, telemetry=root.telemetry, hosting=root.hosting)
            self._built[stack] = built
        return built

    async def aclose(self) -> None:
        built, self._built = list(self._built.values()), {}
        for agent in built:
            await agent.aclose()


@dataclass
class Answered:
    """How a turn's model runs ended: the last run, the agent that made it, who answers
    the session now, and every agent's model responses (for the session's spend)."""

    result: AgentRunResult[Any]
    agent: Agent
    stack: Stack
    responses: list[ModelResponse]


async def answer(
    targets: HandoffTargets,
    stack: Stack,
    content: str | Sequence[UserContent] | None,
    turn: RunningTurn,
    history: list[ModelMessage],
    limits: TurnLimits,
    deferred: DeferredToolResults | None = None,
) -> Answered:
    """Run the turn with the agent `stack` names, and on through each handoff; the
    turn's caps count every agent's usage."""
    usage = RunUsage()
    responses: list[ModelResponse] = []
    hops = 0
    while True:
        agent = targets.agent_for(stack)
        if agent is not targets.root:
            agent._in_use()
            await agent._enter_tools()
        outputs = transfer_outputs(chain(targets.root.spec, stack))
        # the session's agent's input checks hold whoever answers (the front door)
        front = targets.root.input_guard if agent is not targets.root else None
        result = await drive(
            agent,
            content,
            turn,
            history,
            usage=usage,
            limits=limits,
            deferred=deferred,
            handoffs=outputs,
            capabilities=[front.capability()] if front is not None else (),
        )
        responses += [m for m in result.new_messages() if isinstance(m, ModelResponse)]
        call = result.output
        if not isinstance(call, HandoffCall):
            return Answered(result, agent, stack, responses)
        hops += 1
        if hops > MAX_HANDOFFS:
            raise ModelOutputError(
                f"{targets.root.spec.name}: the agents handed the conversation over more than "
                f"{MAX_HANDOFFS} times in one turn without answering; make their "
                "instructions say which requests each one keeps"
            )
        stack = (*stack, call.target) if call.target is not None else stack[:-1]
        to = targets.agent_for(stack)
        handed = HandedOff(
            agent.spec.name,
            to.spec.name,
            call.reason,
            call.target is None,
            _tool(agent, call, to.spec.name),
            call.call_id,
        )
        if turn.telemetry is not None:  # a span of its own, under the turn's
            turn.telemetry.handoff(handed.from_agent, handed.to_agent, call.reason, handed.back)
        turn.emit(handed)
        history = _marked(result.all_messages(), call, to.spec.name)
        content, deferred = None, None


def _tool(agent: Agent, call: HandoffCall, to: str) -> str:
    """The transfer tool `agent`'s model called for `call`, which passed the
    conversation to the agent named `to`."""
    handoff = agent.spec.handoff(call.target) if call.target is not None else None
    return handoff.tool if handoff is not None else back_tool(to)


def _marked(messages: list[ModelMessage], call: HandoffCall, to: str) -> list[ModelMessage]:
    """The history with the transfer's result saying where the conversation went (it
    was pydantic-ai's generic note), marked for the offline model."""
    marked = list(messages)
    for index in range(len(marked) - 1, -1, -1):
        message = marked[index]
        if not isinstance(message, ModelRequest):
            continue
        noted: dict[str, Any] = {
            "content": f"Transferred to {to}; {to} answers from here.",
            "metadata": {HANDOFF_MARK: to},
        }
        parts = [
            replace(p, **noted)
            if isinstance(p, ToolReturnPart) and p.tool_call_id == call.call_id
            else p
            for p in message.parts
        ]
        if parts != list(message.parts):
            marked[index] = replace(message, parts=parts)
            break
    return marked
