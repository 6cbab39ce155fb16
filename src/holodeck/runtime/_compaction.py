"""Compaction: a long conversation's older turns summarised instead of dropped.

With `memory.compaction`, before each turn the session estimates the next request: its
history, the agent's instructions and the new message, at four characters a token of
the request's JSON (no provider tokenizer runs offline; real tokenizers count fewer, so
the estimate errs on the side of the window), and the tool definitions as the agent's
last model request sent them (`ToolDefinitionsSize`: an agent's tools do not change
between its turns, and a long conversation has sent some). `at` leaves room for the
answer. When the estimate passes `at` x the model's
context window, one model call (the agent's model, or `compaction.model`) summarises
every turn but the last `keep_recent`, and the history becomes:

- one request holding the summary as a system part whose text starts with
  `SUMMARY_PREFIX` (so the stored session shows it, and `is_summary` finds it);
- the last `keep_recent` turns word for word.

Turns are cut only where the user spoke (`starts_turn`), so a tool call and its result
are always on the same side: kept together or summarised together. An earlier summary
is summarised again with the turns after it, so facts carry forward.

The context window is the model block's `context_window`, else the figure the bundled
price list (genai-prices) gives for the model.
"""

from __future__ import annotations

import functools
import json
import logging
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from holodeck.errors import DefinitionError, HoloDeckError
from holodeck.runtime._events import HistoryCompacted, Usage
from holodeck.runtime._history import starts_turn, trim_history
from holodeck.runtime._structured import StructuredModel

if TYPE_CHECKING:
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import RunContext

    from holodeck.runtime._agent import Agent
    from holodeck.runtime._session import Session
    from holodeck.spec.models.agent_spec import AgentSpec
    from holodeck.spec.models.compaction import CompactionSettings

log = logging.getLogger("holodeck.runtime")

SUMMARY_PREFIX = "Summary of the earlier conversation (compacted):\n"
CHARS_PER_TOKEN = 4
PART_OVERHEAD = 12  # tokens of a part's framing in a request (role, ids), at 4 bytes each
MOST_RESULT_CHARS = 2000  # of one tool result, shown to the summariser
SUMMARY_INSTRUCTIONS = (
    "You compress a conversation between a user and an assistant so the assistant can go "
    "on without it. Write a summary that keeps every fact the user gave (names, numbers, "
    "dates, preferences, decisions), what was asked and answered, what tools returned that "
    "still matters, and anything left open. An earlier summary in the text is part of the "
    "conversation: keep its facts. Plain sentences, no preamble."
)


class Summary(BaseModel):
    text: str = Field(description="The summary of the conversation so far.")


def compaction_of(spec: AgentSpec) -> CompactionSettings | None:
    """The agent's compaction settings when compaction is on, else None."""
    settings = spec.memory.compaction
    return settings if settings is not None and settings.enabled else None


def bounded_history(
    spec: AgentSpec, messages: Sequence[ModelMessage], max_messages: int
) -> list[ModelMessage]:
    """What a session keeps of `messages`: all of them when it compacts (compaction bounds
    it), else the last `max_messages` (`trim_history`)."""
    if compaction_of(spec) is not None:
        return list(messages)
    return trim_history(messages, max_messages)


class ToolDefinitionsSize(AbstractCapability[Any]):
    """Learns, from each model request the agent sends, the tokens its tool definitions
    take (name, description and JSON schema of each tool the model is offered), estimated
    as the history is."""

    def __init__(self) -> None:
        self.tokens = 0

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        parameters = request_context.model_request_parameters
        offered = [*parameters.function_tools, *parameters.output_tools]
        chars = sum(
            len(t.name)
            + len(json.dumps(t.description or ""))
            + len(json.dumps(t.parameters_json_schema))
            for t in offered
        )
        self.tokens = chars // CHARS_PER_TOKEN + PART_OVERHEAD * len(offered)
        return request_context


_tool_sizes: weakref.WeakKeyDictionary[Agent, ToolDefinitionsSize] = weakref.WeakKeyDictionary()


def compaction_capabilities(agent: Agent) -> list[AbstractCapability[Any]]:
    """What a compacting agent's model loop runs besides its tools: the tool-definition
    size learner; none when compaction is off."""
    if compaction_of(agent.spec) is None:
        return []
    learner = _tool_sizes[agent] = ToolDefinitionsSize()
    return [learner]


def tool_definition_tokens(agent: Agent) -> int:
    """The tokens the agent's tool definitions took in its last request (0 before one)."""
    learner = _tool_sizes.get(agent)
    return learner.tokens if learner is not None else 0


def is_summary(message: ModelMessage) -> bool:
    """Whether `message` is a summary compaction wrote."""
    return isinstance(message, ModelRequest) and any(
        isinstance(p, SystemPromptPart) and p.content.startswith(SUMMARY_PREFIX)
        for p in message.parts
    )


def estimate_tokens(messages: Sequence[ModelMessage], *texts: str) -> int:
    """Tokens `messages` and `texts` take in a request, estimated: four characters a
    token of each text as a request carries it (JSON-escaped), plus each part's framing
    (its role, a tool call's id and name). A tokenizer counts fewer: the estimate errs
    on the side of the window."""
    chars = sum(len(json.dumps(t)) for t in texts)
    parts = 0
    for message in messages:
        for part in message.parts:
            chars += len(json.dumps(_part_text(part)))
            parts += 1
    return chars // CHARS_PER_TOKEN + PART_OVERHEAD * parts


def context_window(agent: Agent) -> int:
    """The tokens the agent's model reads at most: its `context_window`, else the
    bundled price list's figure. Raises `DefinitionError` when neither knows."""
    own = agent.spec.model
    if own is not None and own.context_window is not None:
        return own.context_window
    candidates = [(agent.model.provider, agent.model.name)]
    if own is not None:
        candidates.append((own.provider, own.name))
    for provider, name in candidates:
        found = listed_window(provider, name)
        if found is not None:
            return found
    named = f"{own.provider}/{own.name}" if own is not None else "the agent's model"
    raise DefinitionError(
        f"{agent.spec.name}: memory.compaction needs the context window of {named}, "
        "which the bundled model list does not know",
        hint="set `context_window` (tokens) in the agent's model block, e.g. "
        "`model: {provider: ..., name: ..., context_window: 128000}`",
    )


_PRICE_LIST_PROVIDERS = {"azure_openai": "azure", "openai-compatible": None, "test": None}


@functools.lru_cache(maxsize=64)  # asked before every turn of a compacting session
def listed_window(provider: str, name: str | None) -> int | None:
    """The context window genai-prices lists for `provider/name`, else None."""
    wanted = _PRICE_LIST_PROVIDERS.get(provider, provider)
    if wanted is None or not name:
        return None
    from genai_prices import data_snapshot  # 0.4 s: only for agents that compact

    try:
        _, model = data_snapshot.get_snapshot().find_provider_model(name, None, wanted, None)
    except LookupError:
        return None
    return model.context_window


_summarisers: weakref.WeakKeyDictionary[Agent, StructuredModel] = weakref.WeakKeyDictionary()


def _summariser(agent: Agent, settings: CompactionSettings) -> StructuredModel:
    found = _summarisers.get(agent)
    if found is None:
        found = StructuredModel(
            settings.model or agent.spec.model,
            agent.options,
            agent.spec.execution,
            name="history-summariser",
            telemetry=agent.telemetry,
            hosting=agent.hosting,
        )
        _summarisers[agent] = found
    return found


async def compact_history(session: Session, prompt: str | None) -> HistoryCompacted | None:
    """Before a turn: summarise the session's older turns when the next request would
    pass `at` x the context window; the session's history and spend are updated. None
    when nothing was compacted (compaction off, under the threshold, or too few turns)."""
    agent = session.agent
    settings = compaction_of(agent.spec)
    if settings is None or not session.messages:
        return None
    history = session.messages
    instructions = agent.spec.instructions or ""
    tools = tool_definition_tokens(agent)
    before = estimate_tokens(history, instructions, prompt or "") + tools
    threshold = settings.at * context_window(agent)
    if before <= threshold:
        return None
    starts = [i for i, m in enumerate(history) if starts_turn(m)]
    if len(starts) < settings.keep_recent:
        return None
    cut = starts[-settings.keep_recent]
    older, kept = history[:cut], history[cut:]
    if not older or (len(older) == 1 and is_summary(older[0])):
        return None  # nothing new to fold in
    spent = session.spend.usage
    try:
        summary = await _summariser(agent, settings).ask(
            transcript(older),
            Summary,
            instructions=SUMMARY_INSTRUCTIONS,
            tool="summary",
            description="The summary of the conversation so far.",
            spend=session.spend,
        )
    except HoloDeckError as error:  # the turn goes on with the whole history
        log.warning("%s: the conversation was not compacted: %s", agent.spec.name, error)
        return None
    note = ModelRequest(parts=[SystemPromptPart(SUMMARY_PREFIX + summary.text.strip())])
    session.messages = [note, *kept]
    after = estimate_tokens(session.messages, instructions, prompt or "") + tools
    if after > threshold:  # the kept turns alone are too long: the provider may refuse
        log.warning(
            "%s: the latest %d turns alone are about %d tokens, more than `at` x the context "
            "window (%d); lower memory.compaction.keep_recent",
            agent.spec.name,
            settings.keep_recent,
            after,
            int(threshold),
        )
    used = session.spend.usage
    usage = Usage(
        used.input_tokens - spent.input_tokens,
        used.output_tokens - spent.output_tokens,
        used.requests - spent.requests,
    )
    return HistoryCompacted(len(older), len(kept), before, after, usage)


def transcript(messages: Sequence[ModelMessage]) -> str:
    """`messages` as the summariser reads them: one labelled line per part."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            label = _label(part)
            if label is None:
                continue
            text = _part_text(part)
            if isinstance(part, ToolReturnPart) and len(text) > MOST_RESULT_CHARS:
                text = text[:MOST_RESULT_CHARS] + " [...]"
            lines.append(f"{label}: {text}")
    return "\n".join(lines)


def _label(part: Any) -> str | None:
    if isinstance(part, SystemPromptPart):
        return "Earlier summary" if part.content.startswith(SUMMARY_PREFIX) else None
    if isinstance(part, UserPromptPart):
        return "User"
    if isinstance(part, TextPart):
        return "Assistant"
    if isinstance(part, ToolCallPart):
        return f"Tool call {part.tool_name}"
    if isinstance(part, ToolReturnPart):
        return f"Tool result {part.tool_name}"
    return None


def _part_text(part: Any) -> str:
    if isinstance(part, SystemPromptPart):
        return part.content.removeprefix(SUMMARY_PREFIX)
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return part.content
        return " ".join(c if isinstance(c, str) else "[attachment]" for c in part.content)
    if isinstance(part, TextPart):
        return part.content
    if isinstance(part, ToolCallPart):
        return part.args_as_json_str()
    if isinstance(part, ToolReturnPart | RetryPromptPart):
        content = part.content
        return content if isinstance(content, str) else json.dumps(content, default=str)
    return ""
