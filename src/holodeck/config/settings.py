"""Global (`~/.holodeck/config.yaml`) and project (`config.yaml` beside agent.yaml) settings.

Both files share one schema. Project entries override global ones by name. A
missing file is not an error. `HOLODECK_HOME` moves `~/.holodeck`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from holodeck.spec.compat.deployment import deployment_warnings
from holodeck.spec.compat.execution import without_no_effect
from holodeck.spec.diagnostics import Collector, Diagnostic, Severity, SpecError
from holodeck.spec.env_references import substitute
from holodeck.spec.models.controls import overlay_limits
from holodeck.spec.models.guardrails import overlay_guardrails
from holodeck.spec.models.network_settings import combine_network
from holodeck.spec.models.observability_settings import overlay_observability
from holodeck.spec.models.settings import Settings, overlay, overlay_memory
from holodeck.spec.validation.errors import diagnostics_from, salvaged
from holodeck.spec.yaml.source import read_yaml


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    files: tuple[Path, ...] = field(default=())  # the files that existed, lowest first
    looked_up: tuple[Path, ...] = field(default=())  # every file read if it existed


def holodeck_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    home = env.get("HOLODECK_HOME")
    return Path(home).expanduser() if home else Path.home() / ".holodeck"


def global_config_path(env: Mapping[str, str] | None = None) -> Path:
    return holodeck_home(env) / "config.yaml"


def load_settings(project_dir: Path | None, env: Mapping[str, str] | None = None) -> LoadedSettings:
    """Global settings overridden by the project's `config.yaml`, if any.

    Raises `SpecError` listing every problem in either file.
    """
    loaded, problems = settings_and_problems(project_dir, env)
    if any(d.severity is Severity.ERROR for d in problems):
        raise SpecError(problems)
    return loaded


def settings_and_problems(
    project_dir: Path | None, env: Mapping[str, str] | None = None
) -> tuple[LoadedSettings, list[Diagnostic]]:
    """The settings that could be read, and every problem of either file.

    A broken entry is left out and the rest kept, so an agent loaded with these
    settings reports its own errors beside the config file's in one pass.
    """
    env = dict(os.environ) if env is None else env
    candidates = [global_config_path(env)]
    if project_dir is not None:
        candidates.append(project_dir / "config.yaml")
    collector = Collector()
    layers: list[Settings] = []
    files: list[Path] = []
    for path in candidates:
        if not path.is_file() or path in files:
            continue
        files.append(path)
        try:
            layers.append(_read(path, env, collector))
        except SpecError as exc:
            collector.extend(exc.diagnostics)
    merged = LoadedSettings(_merge(layers), tuple(files), tuple(candidates))
    return merged, collector.diagnostics


def _read(path: Path, env: Mapping[str, str], collector: Collector) -> Settings:
    doc = read_yaml(path)
    if doc.data is None:
        return Settings()
    if not isinstance(doc.data, dict):
        collector.add(doc.diagnostic((), "config.yaml must be a mapping"))
        return Settings()
    local = Collector()
    data = without_no_effect(substitute(doc, env, local), doc, local)
    deployment_warnings(data, doc, local)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        local.extend(diagnostics_from(exc, doc, Settings))
        settings = salvaged(Settings, data, exc) or Settings()
    collector.extend(local.diagnostics)
    return settings


def _merge(layers: list[Settings]) -> Settings:
    """Later layers win field by field: a project entry that sets only `endpoint`
    keeps the global entry's `api_key`."""
    merged = Settings()
    for layer in layers:
        merged = Settings(
            providers=_merge_entries(merged.providers, layer.providers),
            vectorstores=_merge_entries(merged.vectorstores, layer.vectorstores),
            deployment=overlay(merged.deployment, layer.deployment),
            memory=overlay_memory(merged.memory, layer.memory),
            execution=overlay(merged.execution, layer.execution),
            observability=overlay_observability(merged.observability, layer.observability),
            network=combine_network(merged.network, layer.network),
            limits=overlay_limits(merged.limits, layer.limits),
            guardrails=overlay_guardrails(merged.guardrails, layer.guardrails),
        )
    return merged


E = TypeVar("E", bound=BaseModel)


def _merge_entries(base: dict[str, E], top: dict[str, E]) -> dict[str, E]:
    merged = dict(base)
    for name, entry in top.items():
        merged[name] = overlay(base.get(name), entry) or entry
    return merged
