"""The JSON Schema of agent.yaml, generated from the models that validate it."""

from __future__ import annotations

from typing import Any

from holodeck._version import __version__
from holodeck.spec.agent_yaml.agent_file import AgentFile


def agent_yaml_schema() -> dict[str, Any]:
    schema = AgentFile.model_json_schema(mode="validation")
    schema.update(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "HoloDeck agent.yaml",
            "description": f"agent.yaml as accepted by HoloDeck {__version__}.",
        }
    )
    return schema
