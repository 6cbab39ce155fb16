"""Chat completion requests without the OpenAI SDK's second pass over them.

On every call the SDK walks the request body against its TypedDict annotations
(`async_maybe_transform`): 0.7 ms for one message, 12 ms for 21, a quarter of a served
turn's CPU. For chat completion bodies the walk renames and reformats nothing (no
request type under `openai.types.chat` carries an alias or a format); it drops omitted
arguments and turns iterables into lists. `lean_body` does just that, and
`tests/llm/test_openai_requests.py` holds it equal to the SDK's pass on the bodies real turns
send (tools, tool calls and results, images, response formats), so an SDK that starts
transforming these bodies fails the suite rather than a request.

Only the clients HoloDeck builds send lean bodies (`lean_chat_client`): the SDK's own
functions and other programs' clients in the same process are left as they are."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from openai import AsyncOpenAI, AsyncStream, NotGiven, Omit, not_given, omit
from openai._base_client import make_request_options
from openai._compat import cached_property
from openai.resources.chat import AsyncChat
from openai.resources.chat.completions import AsyncCompletions
from openai.resources.chat.completions.completions import validate_response_format
from openai.types.chat import ChatCompletion, ChatCompletionChunk

if TYPE_CHECKING:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers import Provider

Client = TypeVar("Client", bound=AsyncOpenAI)


def lean_chat_model(name: str, provider: Provider[AsyncOpenAI]) -> OpenAIChatModel:
    """pydantic-ai's chat model `name` on `provider`, whose client sends lean bodies."""
    from pydantic_ai.models.openai import OpenAIChatModel

    lean_chat_client(provider.client)
    return OpenAIChatModel(name, provider=provider)


def lean_body(value: Any) -> Any:
    """`value` with omitted arguments (NOT_GIVEN, omit) dropped from its mappings and
    other iterables made lists, at every depth."""
    if isinstance(value, Mapping):
        return {
            key: lean_body(item)
            for key, item in value.items()
            if not isinstance(item, NotGiven | Omit)
        }
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Iterable):
        return [lean_body(item) for item in value]
    return value


def lean_chat_client(client: Client) -> Client:
    """`client` (an AsyncOpenAI or AsyncAzureOpenAI), its chat completions sending
    `lean_body`; copies it makes (`with_options`, as for `max_retries`) do the same."""
    client.__class__ = cast("type[Client]", _lean_class(cast("Hashable", type(client))))
    vars(client).pop("chat", None)  # a chat resource made before would not be lean
    return client


@cache
def _lean_class(key: Hashable) -> type[AsyncOpenAI]:
    base = cast("type[AsyncOpenAI]", key)
    if issubclass(base, _LeanChatClient):
        return base
    return type(f"Lean{base.__name__}", (_LeanChatClient, base), {})


class _LeanCompletions(AsyncCompletions):
    async def create(  # type: ignore[override]  # the SDK's arguments, passed through
        self,
        *,
        extra_headers: Any = None,
        extra_query: Any = None,
        extra_body: Any = None,
        timeout: Any = not_given,
        **params: Any,
    ) -> ChatCompletion | AsyncStream[ChatCompletionChunk]:
        validate_response_format(params.get("response_format", omit))
        stream = params.get("stream") is True
        return await self._post(
            "/chat/completions",
            body=lean_body(params),
            options=make_request_options(
                extra_headers=extra_headers,
                extra_query=extra_query,
                extra_body=extra_body,
                timeout=timeout,
                security={"bearer_auth": True},
            ),
            cast_to=ChatCompletion,
            stream=stream,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )


class _LeanChat(AsyncChat):
    @cached_property
    def completions(self) -> AsyncCompletions:
        return _LeanCompletions(self._client)


class _LeanChatClient(AsyncOpenAI):
    @cached_property
    def chat(self) -> AsyncChat:
        return _LeanChat(self)
