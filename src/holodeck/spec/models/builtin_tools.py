"""Built-in tools an agent can turn on (`web_search`, `web_fetch`) and their settings.
An image's config.yaml names them under `tools.builtins`; the agent keeps them as read."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, model_validator

from holodeck.spec.models.base import NonEmpty, Strict


class BuiltinConfig(Strict):
    name: Literal["web_search", "web_fetch"]
    search_provider: Literal["google", "perplexity", "nimble"] | None = None
    api_key: SecretStr | None = None
    engine_id: NonEmpty | None = None
    max_results: Annotated[int, Field(ge=1, le=100)] | None = None
    search_depth: Literal["lite", "deep"] | None = None

    @model_validator(mode="after")
    def _fits(self) -> BuiltinConfig:
        if self.name == "web_fetch" and self.model_fields_set - {"name"}:
            raise ValueError("`web_fetch` takes no settings")
        if self.search_provider is not None and self.api_key is None:
            raise ValueError(f"search_provider `{self.search_provider}` needs an `api_key`")
        if self.search_provider == "google" and self.engine_id is None:
            raise ValueError("search_provider `google` needs an `engine_id`")
        if self.search_provider != "nimble" and (
            self.max_results is not None or self.search_depth is not None
        ):
            raise ValueError("`max_results` and `search_depth` apply to search_provider nimble")
        return self
