"""Options shared by the commands that run an agent (`test`, `chat`), and by those that
write a test report (`test`, `test merge`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from holodeck.errors import ConfigurationError
from holodeck.llm.providers import override_settings

F = TypeVar("F", bound=Callable[..., Any])


def _model(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return value

    try:
        override_settings(value)
    except ConfigurationError as exc:
        raise ConfigurationError(f"--model {value!r} is not a model", hint=exc.hint) from exc
    return value


model_option = click.option(
    "--model",
    callback=_model,
    help="Use this model for everything (the agent's, its tools' and judges'): "
    "`test` (offline) or `provider/name`.",
)


def _harness(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # the runtime reads it from the environment, so a server's worker processes see it too
    if value == "none":
        os.environ["HOLODECK_HARNESS"] = "none"
    return value


harness_option = click.option(
    "--harness",
    type=click.Choice(["none"]),
    callback=_harness,
    expose_value=False,
    help="`none`: run agents that ask for a harness (claude:, an image's claude-sdk, "
    "codex...) in HoloDeck's own loop, without the harness's built-in tools and "
    "permission modes (docs/harnesses.md).",
)


def run_options(function: F) -> F:
    """`--model`, `--harness`, `--record` and `--replay`."""
    for option in reversed(
        (
            model_option,
            harness_option,
            click.option(
                "--record",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Record every model exchange into this cassette file.",
            ),
            click.option(
                "--replay",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Answer from this cassette instead of calling the model (offline).",
            ),
        )
    ):
        function = option(function)
    return function


def report_options(function: F) -> F:
    """`-o/--output` and `--format`: where a report of the run goes, and in which format."""
    for option in reversed(
        (
            click.option(
                "-o",
                "--output",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write a report: .json, .md, .xml / .junit.xml (JUnit) or .html.",
            ),
            click.option(
                "--format",
                "fmt",
                type=click.Choice(["json", "markdown", "junit", "html"]),
                help="Report format when the extension does not say.",
            ),
        )
    ):
        function = option(function)
    return function
