"""The model a cassette wraps: recording the answers of the real one, or replaying them
(streamed again), and a stand-in for a model that cannot be built while replaying."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    TextPart,
)
from pydantic_ai.models import (
    CompletedStreamedResponse,
    Model,
    ModelRequestParameters,
    StreamedResponse,
)
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings as SamplingSettings
from pydantic_ai.tools import RunContext

from holodeck.llm.cassette._errors import CassetteError
from holodeck.llm.cassette._keys import request_key, request_summary
from holodeck.llm.providers import BuiltModel, _sampling
from holodeck.spec.models.model_settings import ProviderType

if TYPE_CHECKING:
    from holodeck.llm.cassette import Cassette
    from holodeck.spec.models.model_settings import ModelSettings
    from holodeck.spec.models.settings import Settings


_STREAM_CHUNKS = 4


class CassetteModel(WrapperModel):
    """Records the wrapped model's answers into a cassette, or replays them without it."""

    def __init__(self, wrapped: Model, cassette: Cassette, provider: str, name: str | None) -> None:
        super().__init__(wrapped)
        self.cassette = cassette
        self.holodeck_provider = provider
        self.holodeck_name = name
        self.cassette_label = f"{provider}/{name}" if name else provider

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: SamplingSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        key = request_key(messages, model_settings, model_request_parameters)
        summary = request_summary(messages, model_request_parameters)
        if self.cassette.replaying:
            return self._replayed(key, summary)
        interaction = self.cassette._begin(self.cassette_label, key, summary)
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        self.cassette._finish(interaction, response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: SamplingSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        key = request_key(messages, model_settings, model_request_parameters)
        summary = request_summary(messages, model_request_parameters)
        if self.cassette.replaying:
            yield ReplayedStream(
                self._replayed(key, summary), model_request_parameters=model_request_parameters
            )
            return
        interaction = self.cassette._begin(self.cassette_label, key, summary)
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
        response = stream.get()
        if response.state == "complete":  # a stream cut short is not an answer to replay
            self.cassette._finish(interaction, response)

    def _replayed(self, key: str, summary: dict[str, Any]) -> ModelResponse:
        return self.cassette._answer(
            self.cassette_label, key, summary, self.holodeck_provider, self.holodeck_name
        )


class ReplayedStream(CompletedStreamedResponse):
    """A recorded response streamed again: text in a few chunks, other parts whole."""

    def __init__(
        self, response: ModelResponse, *, model_request_parameters: ModelRequestParameters
    ) -> None:
        super().__init__(
            response, model_request_parameters=model_request_parameters, replay_events=True
        )

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        for index, part in enumerate(self.response.parts):
            if isinstance(part, TextPart) and part.content:
                first, *rest = text_chunks(part.content)
                yield manager.handle_part(vendor_part_id=index, part=replace(part, content=first))
                for chunk in rest:
                    for event in manager.handle_text_delta(vendor_part_id=index, content=chunk):
                        yield event
            else:
                yield manager.handle_part(vendor_part_id=index, part=part)


def text_chunks(text: str, count: int = _STREAM_CHUNKS) -> list[str]:
    """`text` in about `count` pieces, cut at whitespace so words stay whole."""
    size = max(1, -(-len(text) // count))
    chunks: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        while end < len(text) and not text[end].isspace():
            end += 1
        chunks.append(text[start:end])
        start = end
    return chunks or [text]


# --- replaying without a usable model ------------------------------------------------


def _stand_in(
    model: ModelSettings, settings: Settings, timeout: float | None, max_retries: int | None
) -> BuiltModel:
    """A model for replays whose real model cannot be built; it refuses to be called."""
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    name = f"{model.provider}/{model.name}" if model.name else model.provider

    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise CassetteError(f"{name}: cannot be called while replaying a cassette")

    async def refuse_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise CassetteError(f"{name}: cannot be called while replaying a cassette")
        yield ""  # pragma: no cover - makes this an async generator

    kind = settings.provider_type(model.provider) or ProviderType.OPENAI
    return BuiltModel(
        model=FunctionModel(refuse, stream_function=refuse_stream, model_name=model.name or name),
        settings=_sampling(model, kind, timeout, max_retries),
        provider=model.provider,
        name=model.name,
    )
