"""`holodeck schema`: the JSON Schema of agent.yaml, for editors."""

from __future__ import annotations

import json
from pathlib import Path

import click

from holodeck.spec.json_schema import agent_yaml_schema


@click.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
def schema(output: Path | None) -> None:
    """Write the JSON Schema of agent.yaml.

    Point your editor at it for completion and inline errors, e.g. with the YAML
    language server, put this first line in agent.yaml:
    \b
      # yaml-language-server: $schema=./agent.schema.json

    \b
    Examples:
      holodeck schema -o agent.schema.json
      holodeck schema | jq '.properties | keys'
    """

    text = json.dumps(agent_yaml_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}")
