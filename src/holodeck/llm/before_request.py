"""A model wrapper that does something before each request it passes on (wait for a rate
limit, tell the turn's starter that its request is leaving), and with each answer."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext


class BeforeRequestModel(WrapperModel):
    """Awaits `before_request()` before each request and each streamed request."""

    async def before_request(self) -> None:
        raise NotImplementedError

    def after_response(self, response: ModelResponse) -> None:
        """Told of each answer, streamed or not (nothing by default)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        await self.before_request()
        response = await super().request(messages, model_settings, model_request_parameters)
        self.after_response(response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        await self.before_request()
        async with super().request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
        self.after_response(stream.get())
