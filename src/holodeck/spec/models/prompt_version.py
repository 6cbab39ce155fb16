"""Which version of the instructions an agent ran with, as recorded in test runs."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field


class PromptVersion(BaseModel):
    """The instructions' `version` (from YAML front matter at the top of the instructions
    file), or `auto-` and 8 hex digits of the instructions' SHA-256 when none is given:
    either way, another prompt text under the same label is told apart by `digest`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str
    digest: str = Field(description="SHA-256 of the instructions the model is sent.")
    tags: tuple[str, ...] = ()
    description: str | None = None
    author: str | None = None

    @classmethod
    def of(cls, body: str, **front: object) -> PromptVersion:
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        version = front.pop("version", None) or f"auto-{digest[:8]}"
        return cls.model_validate({"version": str(version), "digest": digest, **front})
