"""`memory.long_term`: facts an agent keeps across conversations, whose they are, where
they live, and when they are recalled, extracted and dropped (docs/memory.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from holodeck.spec.models.base import NonEmpty, Strict, ToolName
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.vector_databases import DatabaseConnection

MemoryScope = Literal["user", "agent", "session"]
MemoryTool = Literal["remember", "recall", "forget"]


class RecallSettings(Strict):
    """Memories put into the context before each turn, without the model asking."""

    auto: bool = Field(
        default=False,
        description="Before each turn, the memories closest to the user's message are "
        "added to the instructions; the `recall` tool works either way.",
    )
    top_k: Annotated[int, Field(ge=1, le=100)] = Field(
        default=5, description="Most memories recalled per turn or per `recall` call."
    )
    max_tokens: Annotated[int, Field(ge=1)] = Field(
        default=400,
        description="Budget of the memories added before a turn (about four characters a "
        "token); the best matches go first, the rest are left out.",
    )


class ExtractSettings(Strict):
    """Facts taken from each finished turn by a model call."""

    auto: bool = Field(
        default=False,
        description="After each turn, a model reads the exchange and keeps what is worth "
        "remembering: new facts are added, a fact that contradicts a known one replaces it.",
    )
    model: ModelSettings | None = Field(
        default=None, description="The model that extracts (default: the agent's own)."
    )


class LongTermMemory(Strict):
    """Memories kept across sessions, offered to the model as `remember`, `recall` and
    `forget`, and optionally recalled and extracted around every turn."""

    database: NonEmpty | DatabaseConnection | None = Field(
        default=None,
        description="Where memories live: a name from config.yaml `vectorstores:`, a "
        "connection (postgres or redis, so several replicas share them), or by default "
        "the embedded store under the project's `.holodeck/memory/`.",
    )
    scope: MemoryScope = Field(
        default="user",
        description="Whose memories a conversation reads and writes: `user` (the API key's "
        "user, or the `user_id` it sends), `agent` (one set every user of the agent "
        "shares), or `session` (the user's, kept to one conversation).",
    )
    embedding_model: NonEmpty | None = Field(
        default=None,
        description="The embedding model that ranks memories, as a search tool's "
        "`embedding_model` (default: the one search tools get). With none to be had, and "
        "in offline runs, memories are ranked by their words.",
    )
    recall: RecallSettings = Field(default_factory=RecallSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    tool_names: dict[MemoryTool, ToolName] = Field(
        default_factory=dict,
        description="Other names the model sees for `remember`, `recall` and `forget` (an "
        "Omnigent image's `hindsight_retain` and `hindsight_recall` builtins are read into "
        "it).",
    )
    retention_days: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Memories older than this are deleted; null keeps them until a "
        "user or the agent deletes them.",
    )


def memory_tool_names(memory: LongTermMemory | None) -> list[str]:
    """The names the model sees for the memory tools (none without long-term memory)."""
    if memory is None:
        return []
    tools: tuple[MemoryTool, ...] = ("remember", "recall", "forget")
    return [memory.tool_names.get(tool, tool) for tool in tools]
