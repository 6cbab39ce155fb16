"""One plain prompt to a model, one text back: what a reranker or a context writer sends.

    ask = prompt_asker(lambda: run_model(own, override, env=env, ...), max_tokens=80)
    line = await ask("Situate this chunk in its document: ...")

The model is built, and pydantic-ai imported, on the first prompt: a definition that is
only validated or ingested from a cache never pays for either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_ai import Agent

    from holodeck.llm.providers import BuiltModel

Ask = Callable[[str], Awaitable[str]]


def prompt_asker(build: Callable[[], BuiltModel], *, max_tokens: int | None = None) -> Ask:
    """A function sending one prompt to the model `build` makes (called once, on the first
    prompt), answering at most `max_tokens` when given."""
    agents: list[Agent[None, str]] = []  # the one agent, once built

    async def ask(prompt: str) -> str:
        if not agents:
            agents.append(_agent(build(), max_tokens))
        result = await agents[0].run(prompt)
        return str(result.output)

    return ask


def _agent(built: BuiltModel, max_tokens: int | None) -> Agent[None, str]:
    from pydantic_ai import Agent

    settings = dict(built.settings)
    if max_tokens is not None:
        settings["max_tokens"] = max_tokens
    return Agent(built.model, model_settings=settings or None)  # type: ignore[arg-type]
