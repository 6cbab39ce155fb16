"""`StructuredModel`: a model asked for answers of a given shape (a judge's verdict, a
classification), outside any agent's conversation. Its calls get what an agent's get:
the run's `--model`, cassette and rate limit, the definition's timeout and retries, and
provider failures as `ProviderError`s a user can act on.

    >>> import asyncio
    >>> from pydantic import BaseModel, Field
    >>> from holodeck import RunOptions, load_agent
    >>> from holodeck.runtime import StructuredModel
    >>> class Grade(BaseModel):
    ...     score: int = Field(ge=1, le=5)
    >>> spec = load_agent("examples/weather")
    >>> options = RunOptions(model="test").for_agent(spec)
    >>> grader = StructuredModel(spec.model, options, spec.execution)
    >>> asyncio.run(grader.ask("Grade: 42", Grade, instructions="Grade from 1 to 5.")).score
    5
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel

from holodeck.errors import ModelOutputError
from holodeck.llm.errors import ProviderError, explain
from holodeck.runtime._events import Usage
from holodeck.runtime._instrumented import instrumentation
from holodeck.runtime._models import choose_model
from holodeck.runtime._options import RunOptions

if TYPE_CHECKING:
    from pydantic_ai.settings import ModelSettings as SamplingSettings

    from holodeck.observability import Telemetry
    from holodeck.runtime._hosting import Hosting
    from holodeck.runtime._spend import Spend
    from holodeck.spec.models.model_settings import ModelSettings
    from holodeck.spec.models.settings import ExecutionSettings

T = TypeVar("T", bound=BaseModel)
OUTPUT_RETRIES = 2  # answers that do not fit the shape, sent back to the model


class NoValidAnswer(ModelOutputError):
    """Every answer the model gave failed to fit the requested shape."""

    def __init__(self, tries: int, detail: str) -> None:
        self.tries, self.detail = tries, detail
        super().__init__(f"no valid answer in {tries} answers ({detail})")


class StructuredModel:
    """The model of a `model` block (None: none of its own) after `options`.

    `options` must have been completed with `RunOptions.for_agent`. Building it raises
    `ProviderError` (no key, unknown provider) as an agent's model would."""

    def __init__(
        self,
        own: ModelSettings | None,
        options: RunOptions,
        execution: ExecutionSettings,
        *,
        name: str = "structured",
        telemetry: Telemetry | None = None,
        hosting: Hosting | None = None,
    ) -> None:
        """`hosting`: the agent's, for a model an agent's run asks (an uploaded agent's
        endpoints then pass the outbound checks)."""
        from pydantic_ai import Agent as PydanticAgent

        self.options = options
        self.built = choose_model(own, options, execution, hosting=hosting)
        settings = cast("SamplingSettings", self.built.settings) or None
        self._agent: PydanticAgent[None, Any] = PydanticAgent(
            self.built.model, model_settings=settings, name=name
        )
        if telemetry is not None:  # its calls traced like an agent's
            self._agent.instrument = instrumentation(telemetry)

    @property
    def provider(self) -> str:
        return self.built.provider

    @property
    def name(self) -> str | None:
        """The model's name as the definition gives it (None: the provider's default)."""
        return self.built.name

    async def ask(
        self,
        prompt: str,
        shape: type[T],
        *,
        instructions: str,
        tool: str = "answer",
        description: str | None = None,
        retries: int = OUTPUT_RETRIES,
        spend: Spend | None = None,
    ) -> T:
        """The model's answer to `prompt`, given through a tool named `tool` whose
        arguments are `shape`. An answer that does not validate goes back to the model,
        up to `retries` times; then `NoValidAnswer`. Provider failures are
        `ProviderError`s (`rate_limited` says whether a later try may pass). The tokens
        the call used are added to `spend`, when given."""
        from pydantic_ai import ToolOutput
        from pydantic_ai.exceptions import UnexpectedModelBehavior

        output = ToolOutput(shape, name=tool, description=description)
        try:
            result = await self._agent.run(
                prompt,
                output_type=output,
                instructions=instructions,
                retries={"output": retries},
            )
        except ProviderError:
            raise
        except Exception as exc:
            explained = explain(exc, self.built.provider, self.built.name)
            if explained is not None:
                raise explained from None
            if isinstance(exc, UnexpectedModelBehavior):
                raise NoValidAnswer(retries + 1, exc.message) from None
            raise
        if spend is not None:
            from pydantic_ai.messages import ModelResponse

            used = result.usage
            responses = [m for m in result.new_messages() if isinstance(m, ModelResponse)]
            spend.add(Usage(used.input_tokens, used.output_tokens, used.requests), responses)
        if self.options.cassette is not None:  # an interrupted run keeps its exchanges
            await self.options.cassette.asave()
        return result.output
