"""Load an agent.yaml (HoloDeck format) into an `AgentSpec`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holodeck.spec.agent_yaml.agent_file import AgentFile
from holodeck.spec.agent_yaml.builtins import read_builtins
from holodeck.spec.agent_yaml.cases_file import FORMATS as TEST_CASE_FORMATS
from holodeck.spec.agent_yaml.cases_file import load_test_cases_file
from holodeck.spec.agent_yaml.front_matter import instructions_with_version
from holodeck.spec.agent_yaml.function_parameters import check_parameters
from holodeck.spec.agent_yaml.handoffs import check_handoff_names, read_handoffs
from holodeck.spec.agent_yaml.ignored_keys import drop_ignored
from holodeck.spec.agent_yaml.salvage import Salvaged, salvage_agent
from holodeck.spec.agent_yaml.structured_files import read_structured
from holodeck.spec.call_guards_check import check_call_guards
from holodeck.spec.compat.deployment import deployment_warnings
from holodeck.spec.compat.model import with_provider_defaults
from holodeck.spec.compat.optimizer import read_optimizer
from holodeck.spec.compat.retrieval import retrieval_warnings
from holodeck.spec.controls_check import (
    check_approval,
    check_cost_caps,
    check_guardrails,
    check_tools_policy,
)
from holodeck.spec.diagnostics import FieldPath, Severity, SpecError
from holodeck.spec.load_context import MAX_DEPTH, LoadContext
from holodeck.spec.models.agent_spec import AgentSpec, HandoffSpec, SkillSpec, handoff_tools
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.cases import TestCase
from holodeck.spec.models.controls import overlay_limits
from holodeck.spec.models.guardrails import overlay_guardrails
from holodeck.spec.models.long_term_memory import memory_tool_names
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.network_settings import combine_network
from holodeck.spec.models.observability_settings import overlay_observability
from holodeck.spec.models.prompt_version import PromptVersion
from holodeck.spec.models.settings import (
    ExecutionSettings,
    LoggingSettings,
    MemorySettings,
    overlay,
    overlay_memory,
)
from holodeck.spec.models.tools import (
    AgentTool,
    FunctionTool,
    HierarchicalDocumentTool,
    McpTool,
    PromptTool,
    SearchTool,
    VectorstoreTool,
)
from holodeck.spec.models.workspace_settings import (
    WorkspaceSettings,
    acting_tool_names,
    builtin_tool_names,
)
from holodeck.spec.pattern_risk import check_guard_patterns
from holodeck.spec.references import KnownTools, References
from holodeck.spec.skills import load_skill
from holodeck.spec.store_names import unknown_store
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.source import YamlDocument, read_yaml


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
    data = drop_ignored(ctx.expand(doc), doc, ctx.collector, strict=ctx.strict)
    deployment_warnings(data, doc, ctx.collector, strict=ctx.strict)
    data = read_optimizer(data, doc, ctx.collector, strict=ctx.strict)
    data = with_provider_defaults(data, ctx.settings)
    agent = validate(AgentFile, data, doc, ctx.collector, strict=ctx.strict)
    partial = None
    if agent is None:
        # the rest of the document is still checked: every problem in one pass
        partial = salvage_agent(data)
        if partial is None:
            ctx.collector.raise_if_errors()
            raise AssertionError("validation failed without a diagnostic")
        agent = partial.agent
    stand_ins = partial.stand_ins if partial else frozenset()
    checks = _Checks(doc, root, ctx, partial)
    if "model" not in stand_ins:
        checks.model(agent.model, ("model",))
    if agent.embedding_provider is not None:
        checks.model(agent.embedding_provider, ("embedding_provider",))
    if agent.evaluations and agent.evaluations.model:
        checks.model(agent.evaluations.model, ("evaluations", "model"))
    if agent.evaluations and agent.evaluations.user_model:
        checks.model(agent.evaluations.user_model, ("evaluations", "user_model"))
    instructions, instructions_file, prompt_version = (
        checks.instructions(agent) if "instructions" not in stand_ins else (None, None, None)
    )
    response_format = checks.response_format(agent.response_format)
    subagents = checks.tools(agent)
    handoffs = read_handoffs(agent.handoffs, checks, agent.name)
    builtins, workspace = read_builtins(agent, checks)
    skills = checks.skills(agent.skills)
    if agent.evaluations:
        checks.metrics(agent.evaluations.metrics, ("evaluations", "metrics"))
    test_cases = checks.all_test_cases(agent, skills, handoffs)
    middleware = [
        found
        for index, file in enumerate(agent.middleware)
        if (found := checks.path(("middleware", index), file, "middleware file")) is not None
    ]
    limits = overlay_limits(ctx.settings.limits, agent.limits)
    if partial is not None:  # what follows reads the whole document's model and tools
        ctx.collector.raise_if_errors()
    check_cost_caps(limits, agent.model, ctx.settings, doc, ctx.collector, ("limits",), ("model",))
    offered = _offered_names(agent, subagents, skills, builtins, workspace)
    check_handoff_names(agent.handoffs, offered, checks)
    servers = [t.name for t in agent.tools if isinstance(t, McpTool)]
    check_tools_policy(agent.tools_policy, offered, servers, doc, ctx.collector, strict=ctx.strict)
    check_approval(agent.approval, offered, servers, doc, ctx.collector, strict=ctx.strict)
    rules, policies = agent.tool_rules, agent.tool_policies
    check_call_guards(rules, policies, offered, servers, root, doc, ctx.collector)
    guardrails = overlay_guardrails(ctx.settings.guardrails, agent.guardrails)
    check_guardrails(
        guardrails,
        agent.model,
        response_format is not None,
        ctx.settings,
        doc,
        ctx.collector,
    )
    check_guard_patterns(guardrails, doc, ctx.collector, strict=ctx.strict)
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
        prompt_version=prompt_version,
        response_format=response_format,
        tools=tuple(agent.tools),
        builtins=builtins,
        workspace=workspace,
        skills=skills,
        subagents=subagents,
        handoffs=handoffs,
        evaluations=agent.evaluations,
        test_cases=tuple(test_cases),
        execution=overlay(ctx.settings.execution, agent.execution) or ExecutionSettings(),
        middleware=tuple(middleware),
        # agent.yaml's blocks over the config files', field by field
        memory=overlay_memory(ctx.settings.memory, agent.memory) or MemorySettings(),
        logging=agent.logging or LoggingSettings(),
        deployment=overlay(ctx.settings.deployment, agent.deployment),
        embedding_provider=agent.embedding_provider,
        observability=overlay_observability(ctx.settings.observability, agent.observability),
        network=combine_network(ctx.settings.network, agent.network),
        optimizer=agent.optimizer,
        limits=limits,
        tools_policy=agent.tools_policy,
        guardrails=guardrails,
        approval=agent.approval,
        tool_rules=agent.tool_rules,
        tool_policies=tuple(agent.tool_policies),
        claude=agent.claude,
        harness="claude-sdk" if agent.claude is not None else None,
        warnings=tuple(ctx.collector.warnings),
    )


def _offered_names(
    agent: AgentFile,
    subagents: dict[str, AgentSpec],
    skills: tuple[SkillSpec, ...],
    builtins: tuple[BuiltinConfig, ...] = (),
    workspace: WorkspaceSettings | None = None,
) -> list[str]:
    """The names of the tools the model may be offered, MCP servers' aside."""
    names = [t.name for t in agent.tools if not isinstance(t, McpTool)]
    names += [b.name for b in builtins] + list(acting_tool_names(workspace))
    return sorted({*names, *subagents, *(["load_skill"] if skills else [])})


class _Checks(References):
    """agent.yaml's own checks: instructions, response format, tools, skills.
    `partial`: the document failed validation and is checked as far as it could be read."""

    def __init__(
        self, doc: YamlDocument, root: Path, ctx: LoadContext, partial: Salvaged | None = None
    ) -> None:
        super().__init__(doc, root, ctx)
        self.partial = partial

    def instructions(
        self, agent: AgentFile
    ) -> tuple[str | None, Path | None, PromptVersion | None]:
        """The instructions the model is sent (a file's front matter taken off), their
        file, and their version."""
        if agent.instructions.inline is not None:
            text = agent.instructions.inline
            return text, None, PromptVersion.of(text)
        assert agent.instructions.file is not None
        found = self.path(("instructions", "file"), agent.instructions.file, "instructions file")
        if found is None:
            return None, None, None
        try:
            text = found.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.error(("instructions", "file"), f"cannot read {found}: {exc}")
            return None, None, None
        body, version = instructions_with_version(
            text, found, self.ctx.collector, strict=self.ctx.strict
        )
        return body, found, version

    def response_format(self, value: dict[str, Any] | str | None) -> dict[str, Any] | None:
        if value is None:
            return None
        schema = value if isinstance(value, dict) else self._schema_file(value)
        if schema is not None:
            import jsonschema

            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as exc:
                where = "/".join(map(str, exc.absolute_path))
                self.error(
                    ("response_format",),
                    f"not a valid JSON Schema: {exc.message}" + (f" (at {where})" if where else ""),
                    hint="e.g. {type: object, properties: {answer: {type: string}}}",
                )
                return None
        return schema

    def _schema_file(self, value: str) -> dict[str, Any] | None:
        found = self.path(("response_format",), value, "schema file")
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

    def memory_tools(self, agent: AgentFile) -> list[str]:
        """The memory tools the agent is offered (`memory.long_term`, its own or config's)."""
        memory = overlay_memory(self.ctx.settings.memory, agent.memory)
        return memory_tool_names(memory.long_term if memory is not None else None)

    def tools(self, agent: AgentFile) -> dict[str, AgentSpec]:
        first: dict[str, int] = {}
        subagents: dict[str, AgentSpec] = {}
        for index, tool in enumerate(agent.tools):
            where: FieldPath = ("tools", index)
            if tool.name in self.memory_tools(agent):
                self.error(
                    (*where, "name"),
                    f"tool name `{tool.name}` is a long-term memory tool's",
                    "rename the tool, or give the memory tool another name with "
                    "memory.long_term.tool_names",
                )
            if tool.name in first:
                pos = self.doc.position(("tools", first[tool.name], "name"))
                self.error(
                    (*where, "name"),
                    f"duplicate tool name `{tool.name}`",
                    f"already used by tools[{first[tool.name]}]"
                    + (f" on line {pos.line}" if pos else "")
                    + "; each tool needs its own name",
                )
            first.setdefault(tool.name, index)
            if isinstance(tool, FunctionTool):
                found = self.function(tool.file, tool.function, where)
                if found is not None and tool.parameters is not None:
                    check_parameters(self, tool.parameters, found, (*where, "parameters"))
            elif isinstance(tool, PromptTool):
                if tool.file is not None:
                    self.path((*where, "file"), tool.file, "prompt file")
                if tool.model is not None:
                    self.model(tool.model, (*where, "model"))
            elif isinstance(tool, VectorstoreTool | HierarchicalDocumentTool):
                data = self.path((*where, "source"), tool.source, "data source", "any")
                self.database(tool, where)
                if isinstance(tool, HierarchicalDocumentTool):
                    self.retrieval(tool, where)
                if data is not None and self.ctx.source_check is not None:
                    for field_path, message in self.ctx.source_check(tool, self.root):
                        self.error((*where, *field_path), message)
            elif isinstance(tool, AgentTool):
                sub = self.subagent(tool, where)
                if sub is not None:
                    subagents[tool.name] = sub
            # MCP servers are checked when they start: reaching them needs the runtime
        return subagents

    def retrieval(self, tool: HierarchicalDocumentTool, where: FieldPath) -> None:
        """Its context and reranking models, and warnings for options without effect."""
        for key, model in (
            ("context_model", tool.context_model),
            ("reranker_model", tool.reranker_model),
        ):
            if isinstance(model, ModelSettings):  # a `provider/name` string was read as one
                self.model(model, (*where, key))
        for field_path, message in retrieval_warnings(tool):
            severity = Severity.ERROR if self.ctx.strict else Severity.WARNING
            self.ctx.collector.add(
                self.doc.diagnostic((*where, *field_path), message, severity=severity)
            )

    def database(self, tool: SearchTool, where: FieldPath) -> None:
        if isinstance(tool.database, str) and tool.database not in self.ctx.settings.vectorstores:
            message, hint = unknown_store(
                tool.database,
                list(self.ctx.settings.vectorstores),
                self.ctx.settings_files,
                self.ctx.settings_looked_up,
                self.ctx.refused_stores,
            )
            self.error((*where, "database"), message, hint)

    def subagent(self, tool: AgentTool, where: FieldPath) -> AgentSpec | None:
        return self.agent_at(
            tool.path, where, ("agent {found} calls itself (directly or through others)", None)
        )

    def agent_at(
        self, relative: str, where: FieldPath, cycle: tuple[str, str | None]
    ) -> AgentSpec | None:
        """The agent at `relative` (`where` holds its `path`), loaded as the top agent
        was; `cycle` is the message and hint when it is an agent being loaded already."""
        found = self.path((*where, "path"), relative, "agent", "any")
        if found is None:
            return None
        if self.ctx.is_loading(found) or (self.doc.file and found == self.doc.file.resolve()):
            self.error((*where, "path"), cycle[0].format(found=found), cycle[1])
            return None
        if len(self.ctx.stack) >= MAX_DEPTH:
            self.error((*where, "path"), f"sub-agents nest deeper than {MAX_DEPTH}")
            return None
        try:
            sub = self.ctx.load_definition(found, self.ctx.nested(self.doc.file or found))
        except RecursionError:
            self.error((*where, "path"), "agents call each other too deeply")
            return None
        except SpecError as exc:
            self.ctx.collector.extend(exc.diagnostics)
            return None
        # its warnings are the parent's too: `--strict` would fail on them
        self.ctx.collector.extend(sub.warnings)
        return sub

    def skills(self, directories: list[str]) -> tuple[SkillSpec, ...]:
        loaded: list[SkillSpec] = []
        for index, relative in enumerate(directories):
            found = self.path(("skills", index), relative, "skill directory", "directory")
            if found is None:
                continue
            skill = load_skill(found, self.ctx.collector, strict=self.ctx.strict)
            if skill is None:
                continue
            if any(s.name == skill.name for s in loaded):
                self.error(("skills", index), f"duplicate skill `{skill.name}`")
                continue
            loaded.append(skill)
        return tuple(loaded)

    def all_test_cases(
        self,
        agent: AgentFile,
        skills: tuple[SkillSpec, ...],
        handoffs: tuple[HandoffSpec, ...] = (),
    ) -> list[TestCase]:
        """The inline cases, or those of `test_cases_file`, checked against the tools
        (the tools of the agents it hands over to too)."""
        written = self.partial.tool_names if self.partial else frozenset()
        handed, handed_servers = handoff_tools(agent.name, handoffs)
        tools = KnownTools(
            # a tool left out as invalid is still known by the name it was given
            names=frozenset(t.name for t in agent.tools) | written | handed,
            mcp_servers=(
                *(t.name for t in agent.tools if isinstance(t, McpTool)),
                *handed_servers,
            ),
            # a harness agent's own built-in tools (Bash, Read, ...) that its settings turn on
            extra=frozenset(
                [
                    *(["load_skill"] if skills else []),
                    *self.memory_tools(agent),
                    *(agent.claude.builtin_tools() if agent.claude else []),
                    *builtin_tool_names(
                        [b if isinstance(b, str) else b.name for b in agent.builtins]
                    ),
                ]
            ),
        )
        if agent.test_cases_file is None:
            self.test_cases(agent.test_cases, ("test_cases",), tools, {})
            return agent.test_cases
        where: FieldPath = ("test_cases_file",)
        if agent.test_cases:
            # merging would leave two places to edit, and which wins on a name clash unclear
            self.error(
                where,
                "give `test_cases` or `test_cases_file`, not both",
                f"move the inline cases into {agent.test_cases_file}, or drop the file",
            )
            return []
        found = self.path(where, agent.test_cases_file, "test cases file")
        if found is None:
            return []
        if found.suffix.lower() not in TEST_CASE_FORMATS:
            self.error(
                where,
                f"cannot read test cases from a `{found.suffix or found.name}` file",
                "use one of: " + ", ".join(TEST_CASE_FORMATS),
            )
            return []
        try:
            cases, doc = load_test_cases_file(found, self.ctx)
        except SpecError as exc:
            self.ctx.collector.extend(exc.diagnostics)
            return []
        # paths inside the cases (files:) stay relative to agent.yaml
        References(doc, self.root, self.ctx).test_cases(cases, ("test_cases",), tools, {})
        return cases
