"""Load an agent image directory (Agent Image Spec, spec_version 1) into an `AgentSpec`.

Over 450 lines for now: one loader walks the spec's layout in its order (config, AGENTS.md,
skills, tools, sub-agents, tests); it is to be split with the spec/ package's formats.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

from holodeck.spec.controls_check import (
    check_approval,
    check_cost_caps,
    check_guardrails,
    check_tools_policy,
)
from holodeck.spec.diagnostics import Diagnostic, FieldPath, Severity, SpecError, did_you_mean
from holodeck.spec.image.cases import load_image_tests
from holodeck.spec.image.executor import ExecutorModel, harness_settings
from holodeck.spec.image.files import ImageConfig, McpFile
from holodeck.spec.image.inline_agents import build_inline_agent
from holodeck.spec.image.inline_tools import InlineTool, mcp_file_data
from holodeck.spec.image.prepare import prepare
from holodeck.spec.image.typescript_tools import exported_functions
from holodeck.spec.load_context import MAX_DEPTH, LoadContext
from holodeck.spec.models.agent_spec import AgentSpec, InteractionSpec, SkillSpec, Tool
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.controls import overlay_limits
from holodeck.spec.models.guardrails import overlay_guardrails
from holodeck.spec.models.model_settings import (
    PROVIDER_ALIASES,
    PROVIDER_TYPES,
    ModelSettings,
    ProviderType,
    split_model_string,
)
from holodeck.spec.models.settings import ExecutionSettings, MemorySettings, overlay
from holodeck.spec.models.tools import A2ATool, FunctionTool, McpTool, TypeScriptTool
from holodeck.spec.pattern_risk import check_guard_patterns
from holodeck.spec.python_tools import is_valid_tool_name, public_functions, summary, tool_names
from holodeck.spec.references import KnownTools
from holodeck.spec.skills import load_skill
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.source import YamlDocument, read_yaml

CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")


def load_image(root: Path, ctx: LoadContext, single_file: Path | None = None) -> AgentSpec:
    """Parse, validate and resolve the image at `root`; raise `SpecError` on errors.

    `single_file`: an Omnigent single-file agent YAML, read as the config.yaml of an
    image at its directory; the directory's skills/, tools/ and tests are not its own."""
    root = root.resolve()
    config_path = root / "config.yaml" if single_file is None else single_file.resolve()
    if not config_path.is_file():
        raise SpecError(
            [
                Diagnostic(
                    f"no config.yaml in {root}",
                    file=config_path,
                    hint="an agent image needs config.yaml with `spec_version: 1`",
                )
            ]
        )
    doc = read_yaml(config_path)
    if not isinstance(doc.data, dict):
        raise SpecError(
            [doc.diagnostic((), "config.yaml must be a mapping with `spec_version: 1`")]
        )
    expanded = ctx.expand(doc)
    if single_file is not None and isinstance(expanded, dict):
        expanded = {"spec_version": 1, **expanded}  # the single-file form never says it
    prepared = prepare(
        expanded, doc, ctx.collector, strict=ctx.strict, single_file=single_file is not None
    )
    data = prepared.data
    config = validate(ImageConfig, data, doc, ctx.collector, lenient=True, strict=ctx.strict)
    if isinstance(data, dict) and "llm" in data and data["llm"] is None:
        ctx.collector.add(
            doc.diagnostic(
                ("llm",),
                "the llm block is empty: `llm.model` is required when `llm` is present",
                hint="add `model: provider/model` under llm, or remove the block",
            )
        )
    if config is None:
        ctx.collector.raise_if_errors()
        raise AssertionError("validation failed without a diagnostic")
    image = _Image(root, doc, ctx, config, prepared.executor, single_file is not None)
    model = image.model()
    instructions, instructions_file = image.instructions()
    skills = image.skills() if single_file is None else ()
    tools = image.local_tools() if single_file is None else []
    subagents = image.subagents()
    for entry in prepared.inline:
        if entry.kind == "mcp":
            mcp = image.inline_mcp(entry)
            tools.extend([mcp] if mcp is not None else [])
        elif entry.kind == "a2a":
            remote = image.inline_a2a(entry)
            tools.extend([remote] if remote is not None else [])
        else:
            sub = image.inline_agent(entry, model)
            if sub is not None:
                subagents[entry.name] = sub
    builtins = image.builtins(model)
    image.check_unique_tools()
    known = KnownTools(
        names=frozenset(image.origins),
        mcp_servers=tuple(t.name for t in tools if isinstance(t, McpTool)),
        extra=frozenset({"load_skill"} if skills else ()),
    )
    evaluations, test_cases = (
        load_image_tests(root, ctx, known) if single_file is None else (None, ())
    )
    limits = overlay_limits(ctx.settings.limits, config.limits)
    check_cost_caps(limits, model, ctx.settings, doc, ctx.collector, ("limits",), ("llm", "model"))
    offered = sorted({*(n for n, t in _offered(tools, builtins)), *subagents, *known.extra})
    servers = known.mcp_servers
    check_tools_policy(config.tools_policy, offered, servers, doc, ctx.collector, strict=ctx.strict)
    check_approval(config.approval, offered, servers, doc, ctx.collector, strict=ctx.strict)
    guardrails = overlay_guardrails(ctx.settings.guardrails, config.guardrails)
    check_guardrails(guardrails, model, False, ctx.settings, doc, ctx.collector)
    check_guard_patterns(guardrails, doc, ctx.collector, strict=ctx.strict)
    ctx.collector.raise_if_errors()
    modalities = config.interaction.modalities
    return AgentSpec(
        format="image",
        root=root,
        source=config_path,
        name=config.name or (root.name if single_file is None else config_path.stem),
        description=config.description,
        model=model,
        instructions=instructions,
        instructions_file=instructions_file,
        tools=tuple(tools),
        builtins=tuple(builtins),
        skills=skills,
        subagents=subagents,
        params=config.params,
        interaction=InteractionSpec(
            conversational=config.interaction.conversational,
            input_modalities=tuple(modalities.input),
            output_modalities=tuple(modalities.output),
        ),
        evaluations=evaluations,
        test_cases=test_cases,
        # the image's executor over the config files' execution block
        execution=overlay(ctx.settings.execution, image.execution()) or ExecutionSettings(),
        memory=ctx.settings.memory or MemorySettings(),
        deployment=ctx.settings.deployment,
        observability=ctx.settings.observability,
        network=ctx.settings.network,
        optimizer=config.optimizer,
        limits=limits,
        tools_policy=config.tools_policy,
        guardrails=guardrails,
        approval=config.approval,
        harness=prepared.executor.harness if prepared.executor else None,
        claude=harness_settings(prepared.executor),
        warnings=tuple(ctx.collector.warnings),
    )


def _offered(tools: list[Tool], builtins: list[BuiltinConfig]) -> list[tuple[str, object]]:
    """The image's tools the model may be offered, MCP servers' aside, by name."""
    found: list[tuple[str, object]] = [(t.name, t) for t in tools if not isinstance(t, McpTool)]
    return found + [(b.name, b) for b in builtins]


class _Image:
    def __init__(
        self,
        root: Path,
        doc: YamlDocument,
        ctx: LoadContext,
        config: ImageConfig,
        executor: ExecutorModel | None,
        single_file: bool = False,
    ):
        self.root, self.doc, self.ctx, self.config = root, doc, ctx, config
        self.executor = executor
        self.single_file = single_file
        # every tool name the model will see -> where it was first defined
        self.origins: dict[str, Diagnostic] = {}
        self.repeats: list[tuple[str, Diagnostic]] = []

    def _name(self, name: str, where: Diagnostic) -> None:
        """Record a tool name; a repeat is reported where it is repeated."""
        if name in self.origins:
            self.repeats.append((name, where))
        else:
            self.origins[name] = where

    def error(self, path: FieldPath, message: str, hint: str | None = None) -> None:
        self.ctx.collector.add(self.doc.diagnostic(path, message, hint=hint))

    def model(self) -> ModelSettings | None:
        """From `executor.model` (Omnigent's name for it) or `llm.model`."""
        llm, executor = self.config.llm, self.executor or ExecutorModel()
        text, where = executor.model, ("executor", "model")
        if llm is not None and text is not None and llm.model != text:
            self.error(
                where,
                f"executor.model `{text}` and llm.model `{llm.model}` disagree",
                "keep `executor.model` only",
            )
            return None
        if text is None and llm is not None:
            text, where = llm.model, ("llm", "model")
        if text is None:
            return None
        effort = executor.reasoning_effort or (llm.reasoning_effort if llm else None)
        if llm is not None and llm.reasoning_effort not in (None, effort):
            self.error(
                ("executor", "reasoning_effort"),
                "executor.reasoning_effort and llm.reasoning_effort disagree",
                "keep `executor.reasoning_effort` only",
            )
        return self.model_settings(
            text,
            where,
            executor,
            max_tokens=(llm.max_completion_tokens or llm.max_tokens) if llm else None,
            temperature=llm.temperature if llm else None,
            top_p=llm.top_p if llm else None,
            reasoning_effort=effort,
            fallbacks=self.fallbacks(llm.fallback_models if llm else []),
        )

    def model_settings(
        self, text: str, where: FieldPath, executor: ExecutorModel, **settings: Any
    ) -> ModelSettings | None:
        """`provider/model` text, with credentials from the executor's connection or auth."""
        parts = split_model_string(text)
        if parts is None:
            self.error(
                where,
                f"`{text}` is not `provider/model`",
                "e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, google/gemini-2.5-pro, "
                "ollama/llama3.2",
            )
            return None
        provider, name = parts
        if provider not in self.ctx.settings.providers:
            provider = PROVIDER_ALIASES.get(provider, provider)  # `azure/...` is azure_openai
        if self.ctx.settings.provider_type(provider) is None:
            known = [p for p in PROVIDER_TYPES if p != "test"] + list(self.ctx.settings.providers)
            self.error(
                where,
                f"provider `{provider}` is not supported",
                did_you_mean(provider, [*known, *PROVIDER_ALIASES])
                or "supported: " + ", ".join(known),
            )
            return None
        if executor.api_key is not None:
            settings["api_key"] = executor.api_key
        if executor.endpoint is not None:
            settings["endpoint"] = executor.endpoint
        return ModelSettings(provider=provider, name=name, **settings)

    def fallbacks(self, texts: list[str]) -> list[str]:
        """`llm.fallback_models`, each a `provider/model` of a known provider."""
        kept = []
        for index, text in enumerate(texts):
            parts = split_model_string(text)
            where = ("llm", "fallback_models", index)
            if parts is None:
                self.error(where, f"`{text}` is not `provider/model`", "e.g. openai/gpt-4o-mini")
                continue
            provider = parts[0]
            if provider not in self.ctx.settings.providers:
                provider = PROVIDER_ALIASES.get(provider, provider)
            if self.ctx.settings.provider_type(provider) is None:
                known = [p for p in PROVIDER_TYPES if p != "test"] + list(
                    self.ctx.settings.providers
                )
                self.error(
                    where,
                    f"unknown provider `{parts[0]}` (in `{text}`)",
                    did_you_mean(parts[0], known) or "supported: " + ", ".join(known),
                )
                continue
            kept.append(f"{provider}/{parts[1]}")
        return kept

    def execution(self) -> ExecutionSettings | None:
        """`executor.max_iterations` is the rounds a turn may take, as here."""
        if self.executor is None or self.executor.max_iterations is None:
            return None
        return ExecutionSettings(max_tool_iterations=self.executor.max_iterations)

    def instructions(self) -> tuple[str | None, Path | None]:
        """`instructions`, or `prompt` (its older name), or AGENTS.md."""
        if self.config.instructions is None and self.config.prompt is not None:
            return self.instructions_from(self.config.prompt, ("prompt",))
        return self.instructions_from(self.config.instructions, ("instructions",))

    def instructions_from(
        self, value: str | None, key: FieldPath
    ) -> tuple[str | None, Path | None]:
        if value is None:
            # Omnigent reads the first of these context files that exists.
            found = next((n for n in CONTEXT_FILES if (self.root / n).is_file()), "AGENTS.md")
        candidate = self.root / (value if value is not None else found)
        if value is not None and ("\n" in value or len(value) > 255):
            return value, None  # clearly inline text, never a path
        try:
            resolved = candidate.resolve()
            is_file = resolved.is_file()
        except (OSError, ValueError):
            is_file = False
        if is_file:
            if not resolved.is_relative_to(self.root):
                self.error(
                    key,
                    f"instructions file {resolved} is outside the image",
                    "keep instruction files inside the image directory",
                )
                return None, None
            try:
                return resolved.read_text(encoding="utf-8"), resolved
            except (OSError, UnicodeDecodeError) as exc:
                self.error(key, f"cannot read {resolved}: {exc}")
                return None, None
        return value, None  # inline text, or no instructions at all

    def skills(self) -> tuple[SkillSpec, ...]:
        base = self.root / "skills"
        if not base.is_dir():
            return ()
        loaded: list[SkillSpec] = []
        for directory in _skill_directories(base):
            skill = load_skill(directory, self.ctx.collector, strict=self.ctx.strict)
            if skill is None:
                continue
            first = next((s for s in loaded if s.name == skill.name), None)
            if first is not None:
                self.ctx.collector.add(
                    Diagnostic(
                        f"two skills are named `{skill.name}`: "
                        f"skills/{first.directory.relative_to(base).as_posix()}/ "
                        f"and skills/{directory.relative_to(base).as_posix()}/",
                        file=directory / "SKILL.md",
                        hint="give each skill its own `name:` in SKILL.md",
                    )
                )
                continue
            loaded.append(skill)
        return tuple(loaded)

    def local_tools(self) -> list[Tool]:
        tools: list[Tool] = []
        for kind in ("python", "typescript"):
            suffix = ".py" if kind == "python" else ".ts"
            for path in _files(self.root / "tools" / kind, suffix):
                tools.extend(self._code_tools(path, kind))
        mcp_dir = self.root / "tools" / "mcp"
        for path in [*_files(mcp_dir, ".yaml"), *_files(mcp_dir, ".yml")]:
            tool = self._mcp(path)
            if tool is not None:
                tools.append(tool)
        return tools

    def _code_tools(self, path: Path, kind: str) -> list[Tool]:
        """Tools of one tools/python or tools/typescript file."""
        if kind == "python":
            functions, problems = public_functions(path)
        else:
            functions, problems = exported_functions(path)
        self.ctx.collector.extend(problems)
        if not functions and not problems:
            self._warn(path, "defines no public function, so no tool")
        tools: list[Tool] = []
        for name, fn in tool_names(path, functions):
            if not self._valid_name(name, path, fn.line):
                continue
            self._name(name, Diagnostic("", file=path, line=fn.line))
            fields = {
                "name": name,
                "description": summary(fn.docstring),
                "file": path.relative_to(self.root).as_posix(),
                "function": fn.name,
                "timeout": self.config.tools.timeout,
            }
            tools.append(FunctionTool(**fields) if kind == "python" else TypeScriptTool(**fields))
        return tools

    def _mcp(self, path: Path) -> McpTool | None:
        try:
            doc = read_yaml(path)
        except SpecError as exc:
            self.ctx.collector.extend(exc.diagnostics)
            return None
        if not isinstance(doc.data, dict):
            self.ctx.collector.add(doc.diagnostic((), "MCP declaration must be a mapping"))
            return None
        data = self.ctx.expand(doc)
        if isinstance(data, dict) and "transport" not in data and "url" in data:
            self.ctx.collector.add(
                doc.diagnostic(("url",), "`transport` is required", hint="add `transport: http`")
            )
            return None
        declared = validate(
            McpFile, data, doc, self.ctx.collector, lenient=True, strict=self.ctx.strict
        )
        if declared is None:
            return None
        pos = doc.position(("name",))
        self._name(declared.name, Diagnostic("", file=path, line=pos.line if pos else None))
        return self._mcp_tool(declared)

    def _mcp_tool(self, declared: McpFile) -> McpTool:
        return McpTool(
            name=declared.name,
            description=declared.description,
            transport=declared.transport,
            url=declared.url,
            headers=declared.headers,
            command=declared.command,
            args=declared.args,
            env=declared.env,
            timeout=declared.timeout or self.config.tools.timeout,
            retry=declared.retry or self.config.tools.retry,
            tools=declared.tools,
            scope=declared.scope,
            approval=declared.approval,
        )

    def inline_mcp(self, entry: InlineTool, register: bool = True) -> McpTool | None:
        """`tools.<name>: {type: mcp, ...}`, read as tools/mcp/<name>.yaml would be."""
        data, refused = mcp_file_data(entry)
        for key, hint in refused:
            self.error(
                (*entry.path, key), f"`{key}` of an inline MCP server is not supported", hint
            )
        declared = validate(McpFile, data, self.doc, self.ctx.collector, base=entry.path)
        if declared is None or refused:
            return None
        if register:
            self._name(entry.name, self.doc.diagnostic(entry.path, ""))
        return self._mcp_tool(declared)

    def inline_a2a(self, entry: InlineTool, register: bool = True) -> A2ATool | None:
        """`tools.<name>: {type: a2a, url, headers?, timeout?}`: a remote A2A agent."""
        data = {**entry.data, "name": entry.name}
        remote = validate(A2ATool, data, self.doc, self.ctx.collector, base=entry.path)
        if remote is not None and register:
            self._name(entry.name, self.doc.diagnostic(entry.path, ""))
        return remote

    def inline_agent(
        self, entry: InlineTool, inherited: ModelSettings | None, register: bool = True
    ) -> AgentSpec | None:
        """`tools.<name>: {type: agent, ...}`: a sub-agent defined in place. Without an
        `executor` it runs on the calling agent's model."""
        return build_inline_agent(self, entry, inherited, register)

    def subagents(self) -> dict[str, AgentSpec]:
        """Listed sub-agents, each found by its directory name or by the `name:` its
        config.yaml declares (Omnigent matches the declared name)."""
        listed = self.config.tools.agents
        for name, count in Counter(listed).items():
            if count > 1:
                self.error(("tools", "agents"), f"sub-agent `{name}` is listed twice")
        declared = self._declared_agent_names()
        found: dict[str, AgentSpec] = {}
        for index, name in enumerate(dict.fromkeys(listed)):
            directory = self._find_subagent(name, index, declared)
            if directory is None:
                continue
            if self.ctx.is_loading(directory):
                self.error(("tools", "agents", index), f"sub-agent `{name}` calls itself")
                continue
            if len(self.ctx.stack) >= MAX_DEPTH:
                self.error(("tools", "agents", index), f"sub-agents nest deeper than {MAX_DEPTH}")
                continue
            self._name(name, self.doc.diagnostic(("tools", "agents", index), ""))
            try:
                found[name] = self.ctx.load_definition(directory, self.ctx.nested(self.root))
            except SpecError as exc:
                self.ctx.collector.extend(exc.diagnostics)
                continue
            # its warnings are the parent's too: `--strict` would fail on them
            self.ctx.collector.extend(found[name].warnings)
        for directory, own in declared.items():
            if self.single_file:
                break  # a single-file agent's directory holds others' agents too
            if directory.name not in listed and own not in listed:
                self._warn(
                    directory,
                    f"sub-agent `{own or directory.name}` is not listed in tools.agents; "
                    "it cannot be called",
                )
        return found

    def _declared_agent_names(self) -> dict[Path, str | None]:
        """agents/<dir>/ -> the `name:` its config.yaml declares, if any."""
        agents_dir = self.root / "agents"
        if not agents_dir.is_dir():
            return {}
        names: dict[Path, str | None] = {}
        for directory in sorted(p for p in agents_dir.iterdir() if p.is_dir()):
            config = directory / "config.yaml"
            if not config.is_file():
                continue
            try:
                data = read_yaml(config).data
            except SpecError:
                data = None  # reported when the sub-agent is loaded
            own = data.get("name") if isinstance(data, dict) else None
            names[directory] = own if isinstance(own, str) else None
        return names

    def _find_subagent(
        self, name: str, index: int, declared: dict[Path, str | None]
    ) -> Path | None:
        matches = [d for d, own in declared.items() if name in (d.name, own)]
        where: FieldPath = ("tools", "agents", index)
        if len(matches) > 1:
            self.error(
                where,
                f"sub-agent `{name}` is ambiguous: "
                + " and ".join(
                    f"agents/{d.name}/ ({'its directory' if d.name == name else 'its name:'})"
                    for d in matches
                ),
                "give each sub-agent its own `name:` in its config.yaml",
            )
            return None
        if not matches:
            present = [own or d.name for d, own in declared.items()]
            self.error(
                where,
                f"no sub-agent `{name}`: no agents/{name}/ with a config.yaml, and no "
                f"sub-agent declares `name: {name}`",
                did_you_mean(name, present) or f"create {self.root / 'agents' / name}/config.yaml",
            )
            return None
        return matches[0]

    def builtins(self, model: ModelSettings | None) -> list[BuiltinConfig]:
        out: list[BuiltinConfig] = []
        for index, entry in enumerate(self.config.tools.builtins):
            builtin = BuiltinConfig(name=entry) if isinstance(entry, str) else entry
            where: FieldPath = ("tools", "builtins", index)
            if any(b.name == builtin.name for b in out):
                self.error(where, f"builtin `{builtin.name}` is listed twice")
                continue
            openai_native = model is not None and model.provider == ProviderType.OPENAI.value
            if (
                builtin.name == "web_search"
                and builtin.search_provider is None
                and not openai_native
            ):
                self.error(
                    where,
                    "web_search needs `search_provider` (google, perplexity or nimble) "
                    "with an api_key unless the model is an OpenAI model",
                    "use `{name: web_search, search_provider: perplexity, api_key: ...}`",
                )
                continue
            self._name(builtin.name, self.doc.diagnostic(where, ""))
            out.append(builtin)
        return out

    def check_unique_tools(self) -> None:
        for name, where in self.repeats:
            first = self.origins[name]
            self.ctx.collector.add(
                dataclasses.replace(
                    where,
                    message=f"duplicate tool name `{name}`: {first.location} defines it too",
                    hint="rename one of the files, functions or servers",
                )
            )

    def _valid_name(self, name: str, path: Path, line: int) -> bool:
        if is_valid_tool_name(name):
            return True
        self.ctx.collector.add(
            Diagnostic(
                f"tool name `{name}` is not valid for model providers",
                file=path,
                line=line,
                hint="rename the file or function to letters, digits, `_` or `-` (≤ 64 chars)",
            )
        )
        return False

    def _warn(self, path: Path, message: str) -> None:
        self.ctx.collector.add(Diagnostic(message, file=path, severity=Severity.WARNING))


def _skill_directories(base: Path) -> list[Path]:
    """skills/<skill>/, and skills/<group>/<skill>/ for a directory without SKILL.md
    that holds skills (Omnigent groups skills one level deep)."""
    found: list[Path] = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        grouped = sorted(p for p in directory.iterdir() if (p / "SKILL.md").is_file())
        if (directory / "SKILL.md").is_file() or not grouped:
            found.append(directory)  # a skill, or reported as one without SKILL.md
        else:
            found.extend(grouped)
    return found


def _files(directory: Path, suffix: str) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == suffix)
