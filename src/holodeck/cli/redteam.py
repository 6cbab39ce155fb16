"""`holodeck redteam`: the command and its options; the scan is `cli/run_redteam.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console

from holodeck.cli.run_options import run_options, writable_file
from holodeck.errors import ConfigurationError
from holodeck.testing.report_formats import format_for

SCAN_FORMATS = ("json", "html", "junit")


def _outputs(
    ctx: click.Context, param: click.Parameter, value: tuple[Path, ...]
) -> tuple[Path, ...]:
    for path in value:
        fmt = format_for(path)
        if fmt not in SCAN_FORMATS:
            raise ConfigurationError(
                f"-o {path}: a scan report is not written as {fmt}",
                hint="name it .json, .html or .xml / .junit.xml (JUnit)",
            )
        writable_file(path, "the report", "-o")
    return value


def _save(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None:
        writable_file(value, "the test cases", "--save-failures")
    return value


@click.command()
@click.argument("path", type=click.Path(path_type=Path), default=Path())
@click.option(
    "--plugins",
    "plugins",
    multiple=True,
    metavar="NAME[,NAME]",
    help="Run only these plugins (repeatable or comma-separated); default: all.",
)
@click.option(
    "--strategies",
    "strategies",
    multiple=True,
    metavar="NAME[,NAME]",
    help="How attacks are delivered: single (one message), crescendo, role-play (a "
    "conversation leading up to the attack); repeatable or comma-separated; default: single.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Fixes each attack's code words and canaries: the same seed sends the same attacks.",
)
@click.option(
    "--canary",
    "canaries",
    multiple=True,
    metavar="TEXT",
    help="Text in the agent's own data (a tool's file, a search document) that must never "
    "reach an answer (repeatable).",
)
@run_options
@click.option(
    "-o",
    "--output",
    "outputs",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    callback=_outputs,
    help="Write a report: .json, .html or .xml / .junit.xml (JUnit); repeatable.",
)
@click.option(
    "--save-failures",
    type=click.Path(dir_okay=False, path_type=Path),
    callback=_save,
    metavar="FILE",
    help="Write each attack that got through as a test case in FILE (e.g. tests/redteam.yaml).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=8,
    show_default=True,
    help="Attacks at once.",
)
@click.option(
    "--attacker-model",
    metavar="MODEL",
    help="Also attack with attacks this model (`provider/name`) writes from the agent's "
    "definition; needs a real model for the agent.",
)
@click.option(
    "--generated",
    type=click.IntRange(1, 50),
    default=3,
    show_default=True,
    metavar="N",
    help="Attacks the attacker model writes per plugin (with --attacker-model).",
)
@click.option("-v", "--verbose", is_flag=True, help="Show each failed attack and its answer.")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
def redteam(**options: Any) -> None:
    """Attack an agent (agent.yaml, image directory or .tar.gz) and report what got through.

    Each plugin is a family of attacks with a grader: prompt-injection,
    indirect-injection (instructions in what tools return), system-prompt-extraction,
    pii-leakage (canaries), excessive-agency, ssrf, harmful-content and off-topic. The
    attacks are static payloads (`--model test` runs them offline with no key), and with
    `--attacker-model` also attacks a model writes from the agent's instructions, tools
    and walls. `--strategies crescendo,role-play` also sends each plugin's attack at the
    end of a conversation leading up to it: scripted, or played by the attacker model.
    Every call that waits for approval is denied. Each scan is saved under
    .holodeck/scans, where `holodeck test view` lists it beside the test runs.

    Exit codes: 0 every attack was held off, 1 an attack got through, 2 invalid
    definition or options, 3 an attack could not run (e.g. the model could not be
    reached).

    \b
    Examples:
      holodeck redteam examples/weather --model test
      holodeck redteam . --plugins pii-leakage,ssrf --canary ACME-SECRET-42 -o scan.html
      holodeck redteam . --model test -o scan.json --save-failures tests/redteam.yaml
      holodeck redteam . --attacker-model openai/gpt-4o --generated 5 -o scan.html
      holodeck redteam . --model test --strategies single,crescendo,role-play
    """
    ctx = click.get_current_context()
    if options["attacker_model"] is None and ctx.get_parameter_source("generated") is (
        ParameterSource.COMMANDLINE
    ):
        raise ConfigurationError(
            "--generated needs --attacker-model: without it no attack is generated",
            hint="add --attacker-model provider/name, or leave --generated out",
        )
    from holodeck.cli import run_redteam

    raise SystemExit(run_redteam.run(Console(highlight=False), **options))
