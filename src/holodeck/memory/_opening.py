"""`open_bank`: an agent's `MemoryBank`, from its spec and what the run gives its tools."""

from __future__ import annotations

from holodeck.llm.tool_context import ToolContext
from holodeck.memory._bank import MemoryBank
from holodeck.memory._embedding import memory_embedder
from holodeck.memory._placement import memory_location
from holodeck.spec.models.agent_spec import AgentSpec


def open_bank(spec: AgentSpec, context: ToolContext) -> MemoryBank | None:
    """The bank of `spec`'s `memory.long_term` (None without one), to enter with
    `async with`; stores open on first use."""
    memory = spec.memory.long_term
    if memory is None:
        return None
    return MemoryBank(
        agent=spec.name,
        location=memory_location(memory, spec.root, context.settings),
        embedder=memory_embedder(memory, spec, context),
        scope=memory.scope,
        retention_days=memory.retention_days,
    )
