"""Which model each part of an agent uses, with run options applied."""

from __future__ import annotations

from dataclasses import replace

from holodeck.errors import ConfigurationError
from holodeck.llm.providers import BuiltModel, build_model, effective_settings
from holodeck.llm.rate_limit import RateLimitedModel
from holodeck.runtime._hosting import Hosting
from holodeck.runtime._options import RunOptions
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import ExecutionSettings


def choose_model(
    own: ModelSettings | None,
    options: RunOptions,
    execution: ExecutionSettings,
    *,
    responses_api: bool = False,
    hosting: Hosting | None = None,
) -> BuiltModel:
    """The model for a definition's `model` block, after the run's override.

    `options` must have been completed with `RunOptions.for_agent`, and `hosting` (if
    given) with `Hosting.for_agent`."""
    if options.model is not None and not isinstance(options.model, str):
        return BuiltModel(options.model, {}, "custom", options.model.model_name)
    chosen = effective_settings(own, options.model)
    if chosen is None:
        raise ConfigurationError(
            "the agent has no model",
            hint="add `model:` to agent.yaml (`llm: {model: provider/name}` in an image), "
            "or run with --model",
        )
    assert options.env is not None and options.settings is not None
    hosting = hosting or Hosting()
    build = options.cassette.build if options.cassette is not None else build_model
    built = build(
        chosen,
        options.settings,
        options.env,
        timeout=execution.model_timeout,
        max_retries=execution.max_retries,
        responses_api=responses_api,
        lent=hosting.lent,
        # an uploaded agent's own endpoint: every connection checked, not only the first
        outbound=hosting.outbound if hosting.uploaded else None,
    )
    if options.rate_limit is None:
        return built

    return replace(built, model=RateLimitedModel(built.model, options.rate_limit))
