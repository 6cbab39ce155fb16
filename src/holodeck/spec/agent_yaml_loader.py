"""Load an agent.yaml (HoloDeck format) into an `AgentSpec`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from holodeck.spec.agent_file import AgentFile
from holodeck.spec.agent_spec import AgentSpec, SkillSpec
from holodeck.spec.diagnostics import SpecError, did_you_mean
from holodeck.spec.evaluations import CodeMetric, Metric
from holodeck.spec.load_context import MAX_DEPTH, LoadContext
from holodeck.spec.model_settings import PROVIDER_TYPES, ModelSettings
from holodeck.spec.python_tools import public_functions
from holodeck.spec.settings_models import LoggingSettings, MemorySettings
from holodeck.spec.skills import load_skill
from holodeck.spec.structured_files import read_structured
from holodeck.spec.tools import AgentTool, FunctionTool, McpTool, PromptTool, VectorstoreTool
from holodeck.spec.validation_errors import validate
from holodeck.spec.yaml_source import YamlDocument, read_yaml


def load_agent_yaml(path: Path, ctx: LoadContext) -> AgentSpec:
    """Parse, validate and resolve `path`; raise `SpecError` listing every problem."""
    doc = read_yaml(path)
    root = path.parent.resolve()
    if not isinstance(doc.data, dict):
        raise SpecError(
            [
                doc.diagnostic(
                    (),
                    "agent.yaml must be a mapping",
                    hint="start from `holodeck init NAME`; it needs name, model and instructions",
                )
            ]
        )
    data = ctx.expand(doc)
    agent = validate(AgentFile, data, doc, ctx.collector)
    if agent is None:
        ctx.collector.raise_if_errors()
        raise AssertionError("validation failed without a diagnostic")
    checks = _Checks(doc, root, ctx)
    checks.model(agent.model, ("model",))
    if agent.evaluations and agent.evaluations.model:
        checks.model(agent.evaluations.model, ("evaluations", "model"))
    instructions, instructions_file = checks.instructions(agent)
    response_format = checks.response_format(agent.response_format)
    subagents = checks.tools(agent)
    skills = checks.skills(agent.skills)
    checks.metrics(agent.evaluations.metrics if agent.evaluations else [], ("evaluations",))
    checks.test_cases(agent)
    ctx.collector.raise_if_errors()
    return AgentSpec(
        format="agent.yaml",
        root=root,
        source=path.resolve(),
        name=agent.name,
        description=agent.description,
        author=agent.author,
        model=agent.model,
        instructions=instructions,
        instructions_file=instructions_file,
        response_format=response_format,
        tools=tuple(agent.tools),
        skills=skills,
        subagents=subagents,
        evaluations=agent.evaluations,
        test_cases=tuple(agent.test_cases),
        memory=agent.memory or ctx.settings.memory or MemorySettings(),
        logging=agent.logging or LoggingSettings(),
        deployment=agent.deployment or ctx.settings.deployment,
        warnings=tuple(ctx.collector.warnings),
    )


class _Checks:
    """Checks that need more than the schema: files, references, names."""

    def __init__(self, doc: YamlDocument, root: Path, ctx: LoadContext) -> None:
        self.doc, self.root, self.ctx = doc, root, ctx

    def error(self, path: tuple[str | int, ...], message: str, hint: str | None = None) -> None:
        self.ctx.collector.add(self.doc.diagnostic(path, message, hint=hint))

    def model(self, model: ModelSettings, path: tuple[str | int, ...]) -> None:
        if self.ctx.settings.provider_type(model.provider) is None:
            known = [*PROVIDER_TYPES, *self.ctx.settings.providers]
            self.error(
                (*path, "provider"),
                f"unknown provider `{model.provider}`",
                did_you_mean(model.provider, known) or "known: " + ", ".join(known),
            )

    def instructions(self, agent: AgentFile) -> tuple[str | None, Path | None]:
        if agent.instructions.inline is not None:
            return agent.instructions.inline, None
        assert agent.instructions.file is not None
        found = self.ctx.existing(
            self.doc, ("instructions", "file"), self.root, agent.instructions.file, "instructions"
        )
        if found is None or found.is_dir():
            return None, None
        try:
            return found.read_text(encoding="utf-8"), found
        except (OSError, UnicodeDecodeError) as exc:
            self.error(("instructions", "file"), f"cannot read {found}: {exc}")
            return None, None

    def response_format(self, value: dict[str, Any] | str | None) -> dict[str, Any] | None:
        if value is None or isinstance(value, dict):
            return value
        found = self.ctx.existing(self.doc, ("response_format",), self.root, value, "schema file")
        if found is None:
            return None
        schema, problem = read_structured(found)
        if problem or not isinstance(schema, dict):
            self.error(
                ("response_format",),
                problem or f"{found} must hold a JSON Schema object",
                hint="a .json or .yaml file with e.g. {type: object, properties: {...}}",
            )
            return None
        return schema

    def tools(self, agent: AgentFile) -> dict[str, AgentSpec]:
        counts = Counter(tool.name for tool in agent.tools)
        subagents: dict[str, AgentSpec] = {}
        for index, tool in enumerate(agent.tools):
            where: tuple[str | int, ...] = ("tools", index)
            if counts[tool.name] > 1:
                self.error(
                    (*where, "name"),
                    f"duplicate tool name `{tool.name}`",
                    "each tool needs its own name",
                )
                counts[tool.name] = 0  # report once
            if isinstance(tool, FunctionTool):
                self.function(tool.file, tool.function, where)
            elif isinstance(tool, PromptTool):
                if tool.file is not None:
                    self.ctx.existing(
                        self.doc, (*where, "file"), self.root, tool.file, "prompt file"
                    )
                if tool.model is not None:
                    self.model(tool.model, (*where, "model"))
            elif isinstance(tool, VectorstoreTool):
                self.ctx.existing(
                    self.doc, (*where, "source"), self.root, tool.source, "data source"
                )
                if (
                    isinstance(tool.database, str)
                    and tool.database not in self.ctx.settings.vectorstores
                ):
                    known = list(self.ctx.settings.vectorstores)
                    self.error(
                        (*where, "database"),
                        f"no vectorstore named `{tool.database}` in config.yaml",
                        did_you_mean(tool.database, known)
                        or "define it under `vectorstores:` in ~/.holodeck/config.yaml",
                    )
            elif isinstance(tool, McpTool):
                pass  # reachability is checked when the server starts
            elif isinstance(tool, AgentTool):
                sub = self.subagent(tool, where)
                if sub is not None:
                    subagents[tool.name] = sub
        return subagents

    def function(self, file: str, function: str, where: tuple[str | int, ...]) -> None:
        found = self.ctx.existing(self.doc, (*where, "file"), self.root, file, "tool file")
        if found is None:
            return
        functions, problems = public_functions(found)
        self.ctx.collector.extend(problems)
        if problems:
            return
        names = [f.name for f in functions]
        if function not in names:
            self.error(
                (*where, "function"),
                f"{found.name} defines no public function `{function}`",
                did_you_mean(function, names) or "defined: " + (", ".join(names) or "none"),
            )

    def subagent(self, tool: AgentTool, where: tuple[str | int, ...]) -> AgentSpec | None:
        from holodeck.spec.loader import load_definition

        found = self.ctx.existing(self.doc, (*where, "path"), self.root, tool.path, "agent")
        if found is None:
            return None
        if self.ctx.is_loading(found) or (self.doc.file and found == self.doc.file.resolve()):
            self.error((*where, "path"), f"agent {found} calls itself (directly or through others)")
            return None
        if len(self.ctx.stack) >= MAX_DEPTH:
            self.error((*where, "path"), f"sub-agents nest deeper than {MAX_DEPTH}")
            return None
        try:
            return load_definition(found, self.ctx.nested(self.doc.file or found))
        except RecursionError:
            self.error((*where, "path"), "agents call each other too deeply")
            return None
        except SpecError as exc:
            self.ctx.collector.extend(exc.diagnostics)
            return None

    def skills(self, directories: list[str]) -> tuple[SkillSpec, ...]:
        loaded: list[SkillSpec] = []
        for index, relative in enumerate(directories):
            found = self.ctx.existing(
                self.doc, ("skills", index), self.root, relative, "skill directory", directory=True
            )
            if found is None:
                continue
            skill = load_skill(found, self.ctx.collector)
            if skill is None:
                continue
            if any(s.name == skill.name for s in loaded):
                self.error(("skills", index), f"duplicate skill `{skill.name}`")
                continue
            loaded.append(skill)
        return tuple(loaded)

    def metrics(self, metrics: list[Metric], base: tuple[str | int, ...]) -> None:
        for index, metric in enumerate(metrics):
            where = (*base, "metrics", index) if base == ("evaluations",) else (*base, index)
            if isinstance(metric, CodeMetric):
                self.function(metric.file, metric.function, where)
            if metric.model is not None:
                self.model(metric.model, (*where, "model"))

    def test_cases(self, agent: AgentFile) -> None:
        names = Counter(c.name for c in agent.test_cases if c.name)
        known_tools = {t.name for t in agent.tools}
        servers = [t.name for t in agent.tools if isinstance(t, McpTool)]
        for index, case in enumerate(agent.test_cases):
            where: tuple[str | int, ...] = ("test_cases", index)
            if case.name and names[case.name] > 1:
                self.error((*where, "name"), f"duplicate test case name `{case.name}`")
                names[case.name] = 0
            expected = list(case.expected_tools or [])
            for turn in case.turns or []:
                expected.extend(turn.expected_tools or [])
            for name in expected:
                if name in known_tools or (name == "load_skill" and agent.skills):
                    continue
                if any(name.startswith(f"{server}_") for server in servers):
                    continue  # an MCP server's tool, known once the server runs
                self.error(
                    (*where, "expected_tools"),
                    f"expected tool `{name}` is not defined in `tools`",
                    did_you_mean(name, known_tools) or "defined: " + ", ".join(sorted(known_tools)),
                )
            for f_index, file in enumerate(case.files or []):
                if file.path is not None:
                    self.ctx.existing(
                        self.doc, (*where, "files", f_index, "path"), self.root, file.path, "file"
                    )
            if case.evaluations:
                self.metrics(case.evaluations, (*where, "evaluations"))
