"""The variables an agent reads from its environment when it runs: every `${VAR}` in its
YAML files and the key variable of each model provider it names without a key. The
manifests reference them from a Secret by name; none is ever resolved here."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from holodeck.config.credentials import key_variable
from holodeck.spec.diagnostics import SpecError
from holodeck.spec.env_references import referenced_names
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.model_settings import ModelSettings, ProviderType
from holodeck.spec.yaml.source import read_yaml

_YAML = (".yaml", ".yml")


def agent_variables(spec: AgentSpec, files: Iterable[Path]) -> dict[str, bool]:
    """Variable name -> required (False: every reference has a default), sorted."""
    found: dict[str, bool] = {}
    for path in files:
        if path.suffix not in _YAML:
            continue
        try:
            data = read_yaml(path).data
        except SpecError:
            continue  # not part of the definition (loading it already succeeded)
        for name, defaulted in referenced_names(data).items():
            found[name] = found.get(name, False) or not defaulted
    for model in _models(spec):
        if model.api_key is not None:
            continue  # written in the definition: a `${VAR}` there is counted above
        try:
            variable = key_variable(ProviderType(model.provider))
        except ValueError:
            continue  # a provider entry of config.yaml: its own `${VAR}`s are counted
        if variable is not None:
            found.setdefault(variable, True)
    return dict(sorted(found.items()))


def _models(spec: AgentSpec) -> Iterable[ModelSettings]:
    if spec.model is not None:
        yield spec.model
    if spec.embedding_provider is not None:
        yield spec.embedding_provider
    for sub in spec.subagents.values():
        yield from _models(sub)
