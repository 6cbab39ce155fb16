"""`run_model`: a definition's model built the way a run builds every model it calls
(the agent's, prompt tools', rerankers', context writers', judges'): after the run's
`--model` override, recorded or replayed by its cassette, under its shared rate limit,
and, for an uploaded agent, with the endpoints it names checked on every connection."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from holodeck.errors import ConfigurationError
from holodeck.llm.providers import BuiltModel, build_model, effective_settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from holodeck.llm.cassette import Cassette
    from holodeck.llm.offline_script import OfflineScript
    from holodeck.llm.rate_limit import RateLimiter
    from holodeck.net import OutboundPolicy
    from holodeck.spec.models.model_settings import ModelSettings
    from holodeck.spec.models.settings import ExecutionSettings, Settings


def run_model(
    own: ModelSettings | None,
    override: str | Model | None,
    *,
    env: Mapping[str, str],
    settings: Settings,
    execution: ExecutionSettings,
    cassette: Cassette | None = None,
    rate_limit: RateLimiter | None = None,
    lent: Collection[str] | None = None,
    outbound: OutboundPolicy | None = None,
    responses_api: bool = False,
    offline: OfflineScript | None = None,
) -> BuiltModel:
    """`own` after `override`; a model object given as the override is used as it is.
    `outbound` is passed for an uploaded agent only (its own endpoints are checked).
    `offline`: the run's script, which the offline `test` model follows."""
    if override is not None and not isinstance(override, str):
        return BuiltModel(override, {}, "custom", override.model_name)
    chosen = effective_settings(own, override)
    if chosen is None:
        raise ConfigurationError(
            "the agent has no model",
            hint="add `model:` to agent.yaml (`llm: {model: provider/name}` in an image), "
            "or run with --model",
        )
    build = cassette.build if cassette is not None else build_model
    built = build(
        chosen,
        settings,
        env,
        timeout=execution.model_timeout,
        max_retries=execution.max_retries,
        responses_api=responses_api,
        lent=lent,
        outbound=outbound,
        offline=offline,
    )
    if chosen.cost is not None:
        from holodeck.llm.model_cost import PricedModel

        built = replace(built, model=PricedModel(built.model, chosen.cost))
    if rate_limit is None:
        return built
    # imported here: the limiter wraps a pydantic-ai model, which `validate` never loads
    from holodeck.llm.rate_limit import RateLimitedModel

    return replace(built, model=RateLimitedModel(built.model, rate_limit))
