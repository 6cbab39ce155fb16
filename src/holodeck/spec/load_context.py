"""State shared while one definition (and the agents it calls) is loaded."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holodeck.spec.diagnostics import Collector
from holodeck.spec.env_references import substitute
from holodeck.spec.models.settings import Settings
from holodeck.spec.yaml.source import YamlDocument

if TYPE_CHECKING:
    from holodeck.spec.models.agent_spec import AgentSpec

MAX_DEPTH = 8  # sub-agents nest at most this deep


def definition_key(path: Path) -> Path:
    """One name per agent, whether reached as a directory or as its definition file."""
    path = path.resolve()
    if path.is_dir():
        return path / "agent.yaml" if (path / "agent.yaml").is_file() else path
    if path.name == "config.yaml" and not (path.parent / "agent.yaml").is_file():
        return path.parent
    return path


# A check of a search tool's data against its field mapping: (field path below the tool,
# message) for each problem. It reads the data, so the layer that knows formats gives it.
SourceCheck = Callable[[Any, Path], list[tuple[tuple[str | int, ...], str]]]

# Loads the definition at a path, whatever its format: a sub-agent is loaded the way the top
# agent was. The loading entry (`holodeck.config.loader`) gives it, so formats need not
# import each other or the dispatch.
DefinitionLoader = Callable[[Path, "LoadContext"], "AgentSpec"]


@dataclass
class LoadContext:
    """`env` is None when `${VAR}` must stay unexpanded (bundles uploaded to a server);
    `cache_dir` is where image archives named by the definition are unpacked;
    `load_definition` loads sub-agents;
    `source_check` (from `holodeck validate`) checks search tools' data files;
    `settings_files` are the config.yaml files `settings` were read from, lowest first
    (`settings_looked_up` the ones that would have been read had they existed);
    `refused_stores` names `vectorstores:` entries left out for their errors."""

    env: Mapping[str, str] | None
    settings: Settings
    cache_dir: Path
    load_definition: DefinitionLoader
    strict: bool = False
    stack: tuple[Path, ...] = ()
    collector: Collector = field(default_factory=Collector)
    source_check: SourceCheck | None = None
    settings_files: tuple[Path, ...] = ()
    settings_looked_up: tuple[Path, ...] = ()
    refused_stores: frozenset[str] = frozenset()

    def expand(self, doc: YamlDocument) -> Any:
        return doc.data if self.env is None else substitute(doc, self.env, self.collector)

    def nested(self, path: Path) -> LoadContext:
        """A context for a sub-agent of the agent at `path`: same settings, own diagnostics."""
        return LoadContext(
            self.env,
            self.settings,
            self.cache_dir,
            self.load_definition,
            self.strict,
            (*self.stack, definition_key(path)),
            source_check=self.source_check,
            settings_files=self.settings_files,
            settings_looked_up=self.settings_looked_up,
            refused_stores=self.refused_stores,
        )

    def is_loading(self, path: Path) -> bool:
        """True when `path` is an agent already being loaded further up (a cycle)."""
        return definition_key(path) in self.stack
