"""Omnigent's single-file agent YAML (`omnigent run kimi_hello.yaml`): the keys of an
image's config.yaml in one file, without `spec_version`. It is told from an agent.yaml
by its keys: it has Omnigent's `executor` or `prompt` (or `spec_version`) and none of
agent.yaml's `model`; such a file is read as the config.yaml of an image at its
directory (`spec.image.loader.load_image(..., single_file=path)`)."""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.diagnostics import SpecError
from holodeck.spec.yaml.source import read_yaml

# keys only the Omnigent form has at its top level
OMNIGENT_KEYS = frozenset({"executor", "prompt", "spec_version"})
# keys only agent.yaml has: a file with one of them is an agent.yaml, reported as one
AGENT_YAML_KEYS = frozenset({"model", "test_cases", "evaluations", "test_cases_file"})


def is_single_file_agent(path: Path) -> bool:
    """Whether the YAML file `path` is an Omnigent single-file agent."""
    try:
        data = read_yaml(path).data
    except SpecError:
        return False  # reported by the agent.yaml loader, at its line
    if not isinstance(data, dict):
        return False
    keys = {str(k) for k in data}
    return bool(keys & OMNIGENT_KEYS) and not keys & AGENT_YAML_KEYS
