"""Which model each part of an agent uses, with run options applied, and the fallback
models that take over from it."""

from __future__ import annotations

from dataclasses import replace

from holodeck.llm.providers import BuiltModel
from holodeck.llm.run_model import run_model
from holodeck.runtime._hosting import Hosting
from holodeck.runtime._options import RunOptions
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import ExecutionSettings

# HTTP statuses a fallback takes over on: the provider failed or is out of capacity, or
# the model is not there; the client's own mistakes (400, 401, 403) would fail again
FALLBACK_STATUSES = frozenset({404, 408, 409, 429}) | frozenset(range(500, 600))


def choose_model(
    own: ModelSettings | None,
    options: RunOptions,
    execution: ExecutionSettings,
    *,
    responses_api: bool = False,
    hosting: Hosting | None = None,
) -> BuiltModel:
    """The model for a definition's `model` block, after the run's override; with its
    `fallbacks` (when the run does not override it) behind pydantic-ai's FallbackModel.

    `options` must have been completed with `RunOptions.for_agent`, and `hosting` (if
    given) with `Hosting.for_agent`."""
    assert options.env is not None and options.settings is not None
    hosting = hosting or Hosting()

    def build(settings: ModelSettings | None, override: object) -> BuiltModel:
        assert options.env is not None and options.settings is not None
        return run_model(
            settings,
            override,  # type: ignore[arg-type]
            env=options.env,
            settings=options.settings,
            execution=execution,
            cassette=options.cassette,
            rate_limit=options.rate_limit,
            lent=hosting.lent,
            # an uploaded agent's own endpoint: every connection checked, not only the first
            outbound=hosting.outbound if hosting.uploaded else None,
            responses_api=responses_api,
            offline=options.offline,
        )

    primary = build(own, options.model)
    if own is None or not own.fallbacks or options.model is not None:
        return primary
    from pydantic_ai.models.fallback import FallbackModel

    others = [build(f, None).model for f in own.fallback_settings()]
    chain = FallbackModel(primary.model, *others, fallback_on=takes_over)
    return replace(primary, model=chain)


def takes_over(exc: Exception) -> bool:
    """Whether a fallback model should answer after `exc`: a provider failure that
    retrying did not fix (5xx, 429 past the retries, a timeout, a missing model)."""
    from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError

    if isinstance(exc, ModelHTTPError):
        return exc.status_code in FALLBACK_STATUSES
    return isinstance(exc, ModelAPIError)  # no answer at all: connection lost, timed out
