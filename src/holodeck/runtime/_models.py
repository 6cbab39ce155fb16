"""Which model each part of an agent uses, with run options applied."""

from __future__ import annotations

from holodeck.llm.providers import BuiltModel
from holodeck.llm.run_model import run_model
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
    assert options.env is not None and options.settings is not None
    hosting = hosting or Hosting()
    return run_model(
        own,
        options.model,
        env=options.env,
        settings=options.settings,
        execution=execution,
        cassette=options.cassette,
        rate_limit=options.rate_limit,
        lent=hosting.lent,
        # an uploaded agent's own endpoint: every connection checked, not only the first
        outbound=hosting.outbound if hosting.uploaded else None,
        responses_api=responses_api,
    )
