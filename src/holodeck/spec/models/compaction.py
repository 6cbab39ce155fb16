"""`memory.compaction`: a long conversation's older turns summarised by a model call
instead of dropped, before the history nears the model's context window
(docs/memory.md, "Compaction")."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from holodeck.spec.models.base import Strict
from holodeck.spec.models.model_settings import ModelSettings, split_model_string


class CompactionSettings(Strict):
    """When and how older turns are summarised."""

    enabled: bool = Field(
        default=True,
        description="false turns compaction off (a config.yaml default can be switched off "
        "per agent); the history is then trimmed to `max_messages`.",
    )
    at: Annotated[float, Field(gt=0, lt=1)] = Field(
        default=0.8,
        description="Fraction of the model's context window the next request may reach: "
        "when the history, the instructions and the new message would pass it, the older "
        "turns are summarised first.",
    )
    keep_recent: Annotated[int, Field(ge=1)] = Field(
        default=4,
        description="The latest turns (a user's message and all that answered it, tool calls "
        "included) kept word for word; only older turns are summarised.",
    )
    model: ModelSettings | None = Field(
        default=None,
        description="The model that writes the summary, as `provider/name` or a model block "
        "(default: the agent's own).",
    )

    # `provider/name` text is written as often as a block: the JSON schema says both
    @field_validator("model", mode="before", json_schema_input_type=str | ModelSettings | None)
    @classmethod
    def _model_string(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        parts = split_model_string(value)
        if parts is None:
            raise ValueError(f"`{value}` is not `provider/name` (e.g. openai/gpt-4o-mini)")
        return {"provider": parts[0], "name": parts[1]}
