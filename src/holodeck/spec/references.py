"""Checks that need more than a schema: files that must exist, names that must resolve.

Shared by both formats, so an image's tests/*.yaml is held to the same rules as the
test cases of an agent.yaml.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from holodeck.spec.diagnostics import FieldPath, did_you_mean
from holodeck.spec.load_context import LoadContext
from holodeck.spec.models.cases import TestCase, expected_name
from holodeck.spec.models.evaluations import CodeMetric, Metric
from holodeck.spec.models.model_settings import PROVIDER_TYPES, ModelSettings
from holodeck.spec.models.workspace_settings import TOOL_NAMES
from holodeck.spec.python_tools import FoundFunction, public_functions
from holodeck.spec.yaml.source import YamlDocument

PathKind = Literal["file", "directory", "any"]


@dataclass(frozen=True)
class KnownTools:
    """What `expected_tools` may name."""

    names: frozenset[str]
    mcp_servers: tuple[str, ...] = ()  # their tools are `<server>_<tool>`, known at run time
    extra: frozenset[str] = field(default_factory=frozenset)  # e.g. load_skill

    def knows(self, name: str) -> bool:
        return (
            name in self.names
            or name in self.extra
            or any(name.startswith(f"{server}_") for server in self.mcp_servers)
        )


class References:
    """Reports problems in one document; paths are resolved against `root`."""

    def __init__(self, doc: YamlDocument, root: Path, ctx: LoadContext) -> None:
        self.doc, self.root, self.ctx = doc, root, ctx

    def error(self, path: FieldPath, message: str, hint: str | None = None) -> None:
        self.ctx.collector.add(self.doc.diagnostic(path, message, hint=hint))

    def path(
        self, where: FieldPath, relative: str, what: str, kind: PathKind = "file"
    ) -> Path | None:
        """`root/relative` if it exists as the right kind of entry, else a diagnostic."""
        found = (self.root / relative).resolve()
        if not found.exists():
            self.error(
                where,
                f"{what} not found: {found}",
                f"create it, or fix the path (relative to {self.root})",
            )
            return None
        if kind == "file" and not found.is_file():
            self.error(where, f"{what} must be a file, but {found} is a directory")
            return None
        if kind == "directory" and not found.is_dir():
            self.error(where, f"{what} must be a directory, but {found} is a file")
            return None
        return found

    def model(self, model: ModelSettings, where: FieldPath) -> None:
        self._provider(model.provider, (*where, "provider"), f"`{model.provider}`")
        for index, text in enumerate(model.fallbacks):
            provider = text.split("/", 1)[0]
            self._provider(provider, (*where, "fallbacks", index), f"`{provider}` (in `{text}`)")

    def _provider(self, provider: str, where: FieldPath, named: str) -> None:
        if self.ctx.settings.provider_type(provider) is None:
            known = [*PROVIDER_TYPES, *self.ctx.settings.providers]
            self.error(
                where,
                f"unknown provider {named}",
                did_you_mean(provider, known) or "known: " + ", ".join(known),
            )

    def function(self, file: str, function: str, where: FieldPath) -> FoundFunction | None:
        found = self.path((*where, "file"), file, "Python file")
        if found is None:
            return None
        functions, problems = public_functions(found)
        self.ctx.collector.extend(problems)
        if problems:
            return None
        names = [f.name for f in functions]
        if function not in names:
            self.error(
                (*where, "function"),
                f"{found.name} defines no public function `{function}`",
                did_you_mean(function, names) or "defined: " + (", ".join(names) or "none"),
            )
            return None
        return functions[names.index(function)]

    def metrics(self, metrics: Iterable[Metric], where: FieldPath) -> None:
        for index, metric in enumerate(metrics):
            if isinstance(metric, CodeMetric):
                file, function = metric.source
                if metric.grader is None:
                    self.function(file, function, (*where, index))
                else:  # the module's own imports run only when it is graded
                    self.path((*where, index, "grader"), file, f"grader module `{metric.grader}`")
            if metric.model is not None:
                self.model(metric.model, (*where, index, "model"))

    def test_cases(
        self,
        cases: list[TestCase],
        where: FieldPath,
        tools: KnownTools,
        seen_names: dict[str, str],
    ) -> None:
        """Check cases; `seen_names` maps names already used (across files) to where."""
        for index, case in enumerate(cases):
            at: FieldPath = (*where, index)
            if case.name:
                if case.name in seen_names:
                    self.error(
                        (*at, "name"),
                        f"duplicate test case name `{case.name}`",
                        f"already used at {seen_names[case.name]}",
                    )
                else:
                    pos = self.doc.position((*at, "name"))
                    seen_names[case.name] = f"{self.doc.file}:{pos.line if pos else '?'}"
            expected = list(case.expected_tools or [])
            for turn in case.turns or []:
                expected.extend(turn.expected_tools or [])
            for session in case.simulate.sessions or [] if case.simulate else []:
                expected.extend(session.expected_tools or [])
            for name in map(expected_name, expected):
                if not tools.knows(name):
                    self._unknown_tool(name, (*at, "expected_tools"), tools.names)
            for key in ("approve", "deny"):  # the calls a case decides
                for name in getattr(case, key) or []:
                    if not tools.knows(name):
                        self._unknown_tool(name, (*at, key), tools.names, f"tool to {key}")
            for f_index, file in enumerate(case.files or []):
                if file.path is not None:
                    self.path((*at, "files", f_index, "path"), file.path, "file")
            for t_index, turn in enumerate(case.turns or []):
                for f_index, file in enumerate(turn.files or []):
                    if file.path is not None:
                        where_file = (*at, "turns", t_index, "files", f_index, "path")
                        self.path(where_file, file.path, "file")
                if turn.evaluations:
                    self.metrics(turn.evaluations, (*at, "turns", t_index, "evaluations"))
            if case.evaluations:
                self.metrics(case.evaluations, (*at, "evaluations"))
            self._case_workspace(case, at, tools)

    def _case_workspace(self, case: TestCase, at: FieldPath, tools: KnownTools) -> None:
        """`workspace:` and `expected_files:` need tools that act in a workspace."""
        acting = any(tools.knows(name) for names in TOOL_NAMES.values() for name in names)
        for key in ("workspace", "expected_files"):
            if getattr(case, key) is not None and not acting:
                self.error(
                    (*at, key),
                    f"`{key}` applies to agents with tools that act in a workspace, and this "
                    "agent has none",
                    "list `files`, `shell`, `code` or `terminals` in the agent's builtins, or "
                    f"remove `{key}`",
                )
        if case.workspace is not None and case.workspace.from_ is not None:
            where = (*at, "workspace", "from")
            self.path(where, case.workspace.from_, "workspace folder", kind="directory")

    def _unknown_tool(
        self, name: str, where: FieldPath, known: Collection[str], what: str = "expected tool"
    ) -> None:
        self.error(
            where,
            f"{what} `{name}` is not one of the agent's tools",
            did_you_mean(name, known) or "defined: " + (", ".join(sorted(known)) or "none"),
        )
