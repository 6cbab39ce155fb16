"""Options shared by the commands that run an agent (`test`, `chat`), and by those that
write a test report (`test`, `test merge`). What can be checked before anything runs is
checked as the options are read: a report's format and folder, a cassette's folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from holodeck.errors import ConfigurationError
from holodeck.runtime import override_settings
from holodeck.testing.report_formats import FORMATS, format_for

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


def _models(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    for each in value:
        _model(ctx, param, each)
    return value


models_option = click.option(
    "--model",
    "models",
    multiple=True,
    callback=_models,
    help="Use this model for everything (the agent's, its tools' and judges'): "
    "`test` (offline) or `provider/name`. Repeat it to run every case on each model "
    "in one run, reported side by side.",
)


harness_option = click.option(
    "--harness",
    type=click.Choice(["none"]),
    help="`none`: run agents that ask for a harness (claude:, an image's claude-sdk, "
    "codex...) in HoloDeck's own loop, without the harness's built-in tools and "
    "permission modes (docs/harnesses.md).",
)


def writable_file(path: Path, what: str, option: str) -> None:
    """Refuse `path` when `what` (e.g. `the report`) could not be written there: found now,
    not after the run. Missing folders are fine (they are made when the file is written)."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigurationError(
            f"cannot write {what} {path}: {folder} is a file, not a folder",
            hint=f"choose another {option} path",
        )
    target = path if path.exists() else folder
    if not os.access(target, os.W_OK):
        raise ConfigurationError(
            f"cannot write {what} {path}: {target} is not writable",
            hint=f"choose another {option} path, or make {target} writable",
        )


def _record(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None:
        writable_file(value, "the cassette", "--record")
    return value


def check_report_target(output: Path | None, fmt: str | None) -> None:
    """Refuse `-o`/`--format` that could not be honoured after the run."""
    if output is None:
        if fmt is not None:
            raise ConfigurationError(
                f"--format {fmt} needs -o: without it no report file is written",
                hint=f"add -o FILE (e.g. -o report.{'md' if fmt == 'markdown' else fmt}), "
                "or leave --format out",
            )
        return
    format_for(output, fmt)
    writable_file(output, "the report", "-o")


def _report_target(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    # -o and --format are checked together, by whichever of the two click reads last
    other = "fmt" if param.name == "output" else "output"
    if other in ctx.params:
        given = {param.name: value, other: ctx.params[other]}
        check_report_target(given["output"], given["fmt"])
    return value


def run_options(function: F, *, many_models: bool = False) -> F:
    """`--model` (repeatable with `many_models`), `--harness`, `--record` and `--replay`."""
    for option in reversed(
        (
            models_option if many_models else model_option,
            harness_option,
            click.option(
                "--record",
                type=click.Path(dir_okay=False, path_type=Path),
                callback=_record,
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


def matrix_run_options(function: F) -> F:
    """`run_options` whose `--model` may be given several times (`models`)."""
    return run_options(function, many_models=True)


def report_options(function: F) -> F:
    """`-o/--output` and `--format`: where a report of the run goes, and in which format."""
    for option in reversed(
        (
            click.option(
                "-o",
                "--output",
                type=click.Path(dir_okay=False, path_type=Path),
                callback=_report_target,
                help="Write a report: .json, .md, .xml / .junit.xml (JUnit) or .html.",
            ),
            click.option(
                "--format",
                "fmt",
                type=click.Choice(FORMATS),
                callback=_report_target,
                help="Report format when the extension does not say (needs -o).",
            ),
        )
    ):
        function = option(function)
    return function
