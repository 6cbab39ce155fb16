"""Offline smoke runs: when the agent's answers come from the offline `test` model, answer
metrics are computed and shown but not judged, so they never fail a case; tool checks and
errors still do. A metric whose judge is the `test` model is not judged either. A replayed
cassette holds real answers: it is judged as usual.

    >>> offline_model(ModelSettings(provider="test"), RunOptions())
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holodeck.runtime import RunOptions, override_settings
from holodeck.spec.models.model_settings import ModelSettings, ProviderType
from holodeck.testing.results import MetricResult

if TYPE_CHECKING:
    from holodeck.spec.models.agent_spec import AgentSpec

OFFLINE = "test"  # the `--model` of an offline run


def offline_model(settings: ModelSettings | None, options: RunOptions) -> bool:
    """Whether a `model` block, after the run's `--model`, is the offline `test` model.
    Replaying a cassette answers with recorded (real) output, so it is never offline."""
    if options.cassette is not None and options.cassette.replaying:
        return False
    if options.model is not None:
        if not isinstance(options.model, str):
            return False  # a model object given by code: whatever it is, it answers
        settings = override_settings(options.model)
    if settings is None:
        return False
    if options.settings is not None:
        return options.settings.provider_type(settings.provider) is ProviderType.TEST
    return ProviderType.lookup(settings.provider) is ProviderType.TEST


def offline_run(spec: AgentSpec, options: RunOptions) -> bool:
    """Whether the agent under test answers with the offline `test` model."""
    return offline_model(spec.model, options)


def not_judged(result: MetricResult) -> MetricResult:
    """`result`, kept for information: marked not judged and failing no case."""
    return result.model_copy(update={"judged": False, "fails_case": False})
