"""Load an agent image directory (Agent Image Spec, spec_version 1) into an `AgentSpec`."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from holodeck.spec.agent_spec import AgentSpec, InteractionSpec, SkillSpec, Tool
from holodeck.spec.diagnostics import Diagnostic, FieldPath, Severity, SpecError, did_you_mean
from holodeck.spec.image_files import BuiltinConfig, ImageConfig, McpFile
from holodeck.spec.image_tests import load_image_tests
from holodeck.spec.load_context import MAX_DEPTH, LoadContext
from holodeck.spec.model_settings import (
    PROVIDER_ALIASES,
    PROVIDER_TYPES,
    ModelSettings,
    ProviderType,
    split_model_string,
)
from holodeck.spec.python_tools import is_valid_tool_name, public_functions, summary, tool_names
from holodeck.spec.references import KnownTools
from holodeck.spec.settings_models import MemorySettings
from holodeck.spec.skills import load_skill
from holodeck.spec.tools import FunctionTool, McpTool, TypeScriptTool
from holodeck.spec.typescript_tools import exported_functions
from holodeck.spec.validation_errors import validate
from holodeck.spec.yaml_source import YamlDocument, read_yaml


def load_image(root: Path, ctx: LoadContext) -> AgentSpec:
    """Parse, validate and resolve the image at `root`; raise `SpecError` on errors."""
    root = root.resolve()
    config_path = root / "config.yaml"
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
    data = ctx.expand(doc)
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
    image = _Image(root, doc, ctx, config)
    model = image.model()
    instructions, instructions_file = image.instructions()
    skills = image.skills()
    tools = image.local_tools()
    subagents = image.subagents()
    builtins = image.builtins(model)
    image.check_unique_tools()
    known = KnownTools(
        names=frozenset(image.origins),
        mcp_servers=tuple(t.name for t in tools if isinstance(t, McpTool)),
        extra=frozenset({"load_skill"} if skills else ()),
    )
    evaluations, test_cases = load_image_tests(root, ctx, known)
    ctx.collector.raise_if_errors()
    modalities = config.interaction.modalities
    return AgentSpec(
        format="image",
        root=root,
        source=config_path,
        name=config.name or root.name,
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
        memory=ctx.settings.memory or MemorySettings(),
        deployment=ctx.settings.deployment,
        warnings=tuple(ctx.collector.warnings),
    )


class _Image:
    def __init__(self, root: Path, doc: YamlDocument, ctx: LoadContext, config: ImageConfig):
        self.root, self.doc, self.ctx, self.config = root, doc, ctx, config
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
        llm = self.config.llm
        if llm is None:
            return None
        parts = split_model_string(llm.model)
        if parts is None:
            self.error(
                ("llm", "model"),
                f"`{llm.model}` is not `provider/model`",
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
                ("llm", "model"),
                f"provider `{provider}` is not supported",
                did_you_mean(provider, [*known, *PROVIDER_ALIASES])
                or "supported: " + ", ".join(known),
            )
            return None
        return ModelSettings(
            provider=provider,
            name=name,
            max_tokens=llm.max_completion_tokens,
            reasoning_effort=llm.reasoning_effort,
        )

    def instructions(self) -> tuple[str | None, Path | None]:
        value = self.config.instructions
        candidate = self.root / (value if value is not None else "AGENTS.md")
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
                    ("instructions",),
                    f"instructions file {resolved} is outside the image",
                    "keep instruction files inside the image directory",
                )
                return None, None
            try:
                return resolved.read_text(encoding="utf-8"), resolved
            except (OSError, UnicodeDecodeError) as exc:
                self.error(("instructions",), f"cannot read {resolved}: {exc}")
                return None, None
        return value, None  # inline text, or no instructions at all

    def skills(self) -> tuple[SkillSpec, ...]:
        base = self.root / "skills"
        if not base.is_dir():
            return ()
        loaded: list[SkillSpec] = []
        for directory in sorted(p for p in base.iterdir() if p.is_dir()):
            skill = load_skill(directory, self.ctx.collector, strict=self.ctx.strict)
            if skill is None:
                continue
            if any(s.name == skill.name for s in loaded):
                self.ctx.collector.add(
                    Diagnostic(f"duplicate skill name `{skill.name}`", file=directory / "SKILL.md")
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
            scope=declared.scope,
        )

    def subagents(self) -> dict[str, AgentSpec]:
        from holodeck.spec.loader import load_definition

        listed = self.config.tools.agents
        for name, count in Counter(listed).items():
            if count > 1:
                self.error(("tools", "agents"), f"sub-agent `{name}` is listed twice")
        agents_dir = self.root / "agents"
        found: dict[str, AgentSpec] = {}
        for index, name in enumerate(dict.fromkeys(listed)):
            directory = agents_dir / name
            if not (directory / "config.yaml").is_file():
                present = (
                    [p.name for p in agents_dir.iterdir() if p.is_dir()]
                    if agents_dir.is_dir()
                    else []
                )
                self.error(
                    ("tools", "agents", index),
                    f"sub-agent `{name}` has no directory agents/{name}/ with a config.yaml",
                    did_you_mean(name, present) or f"create {directory}/config.yaml",
                )
                continue
            if self.ctx.is_loading(directory):
                self.error(("tools", "agents", index), f"sub-agent `{name}` calls itself")
                continue
            if len(self.ctx.stack) >= MAX_DEPTH:
                self.error(("tools", "agents", index), f"sub-agents nest deeper than {MAX_DEPTH}")
                continue
            self._name(name, self.doc.diagnostic(("tools", "agents", index), ""))
            try:
                found[name] = load_definition(directory, self.ctx.nested(self.root))
            except SpecError as exc:
                self.ctx.collector.extend(exc.diagnostics)
        if agents_dir.is_dir():
            for directory in sorted(p for p in agents_dir.iterdir() if p.is_dir()):
                if directory.name not in listed:
                    self._warn(
                        directory,
                        f"sub-agent `{directory.name}` is not listed in tools.agents; "
                        "it cannot be called",
                    )
        return found

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


def _files(directory: Path, suffix: str) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == suffix)
