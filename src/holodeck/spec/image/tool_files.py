"""An image's own tools: tools/python/*.py and tools/typescript/*.ts (a tool per public
function), tools/mcp/*.yaml, inline `mcp` and `a2a` entries of config.yaml, and the
built-in tools it turns on."""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.diagnostics import Diagnostic, FieldPath, SpecError
from holodeck.spec.image.files import McpFile
from holodeck.spec.image.inline_tools import InlineTool, mcp_file_data
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.image.typescript_tools import exported_functions
from holodeck.spec.models.agent_spec import Tool
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.model_settings import (
    ModelSettings,
    ProviderType,
)
from holodeck.spec.models.tools import A2ATool, FunctionTool, McpTool, TypeScriptTool
from holodeck.spec.python_tools import public_functions, summary, tool_names
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.source import read_yaml


def local_tools(image: ImageReading) -> list[Tool]:
    tools: list[Tool] = []
    for kind in ("python", "typescript"):
        suffix = ".py" if kind == "python" else ".ts"
        for path in _files(image.root / "tools" / kind, suffix):
            tools.extend(_code_tools(image, path, kind))
    mcp_dir = image.root / "tools" / "mcp"
    for path in [*_files(mcp_dir, ".yaml"), *_files(mcp_dir, ".yml")]:
        tool = _mcp(image, path)
        if tool is not None:
            tools.append(tool)
    return tools


def _code_tools(image: ImageReading, path: Path, kind: str) -> list[Tool]:
    """Tools of one tools/python or tools/typescript file."""
    if kind == "python":
        functions, problems = public_functions(path)
    else:
        functions, problems = exported_functions(path)
    image.ctx.collector.extend(problems)
    if not functions and not problems:
        image.warn(path, "defines no public function, so no tool")
    tools: list[Tool] = []
    for name, fn in tool_names(path, functions):
        if not image.valid_name(name, path, fn.line):
            continue
        image.register_tool(name, Diagnostic("", file=path, line=fn.line))
        fields = {
            "name": name,
            "description": summary(fn.docstring),
            "file": path.relative_to(image.root).as_posix(),
            "function": fn.name,
            "timeout": image.config.tools.timeout,
        }
        tools.append(FunctionTool(**fields) if kind == "python" else TypeScriptTool(**fields))
    return tools


def _mcp(image: ImageReading, path: Path) -> McpTool | None:
    try:
        doc = read_yaml(path)
    except SpecError as exc:
        image.ctx.collector.extend(exc.diagnostics)
        return None
    if not isinstance(doc.data, dict):
        image.ctx.collector.add(doc.diagnostic((), "MCP declaration must be a mapping"))
        return None
    data = image.ctx.expand(doc)
    if isinstance(data, dict) and "transport" not in data and "url" in data:
        image.ctx.collector.add(
            doc.diagnostic(("url",), "`transport` is required", hint="add `transport: http`")
        )
        return None
    declared = validate(
        McpFile, data, doc, image.ctx.collector, lenient=True, strict=image.ctx.strict
    )
    if declared is None:
        return None
    pos = doc.position(("name",))
    image.register_tool(declared.name, Diagnostic("", file=path, line=pos.line if pos else None))
    return _mcp_tool(image, declared)


def _mcp_tool(image: ImageReading, declared: McpFile) -> McpTool:
    return McpTool(
        name=declared.name,
        description=declared.description,
        transport=declared.transport,
        url=declared.url,
        headers=declared.headers,
        command=declared.command,
        args=declared.args,
        env=declared.env,
        timeout=declared.timeout or image.config.tools.timeout,
        retry=declared.retry or image.config.tools.retry,
        tools=declared.tools,
        scope=declared.scope,
        approval=declared.approval,
    )


def inline_mcp(image: ImageReading, entry: InlineTool, register: bool = True) -> McpTool | None:
    """`tools.<name>: {type: mcp, ...}`, read as tools/mcp/<name>.yaml would be."""
    data, refused = mcp_file_data(entry)
    for key, hint in refused:
        image.error((*entry.path, key), f"`{key}` of an inline MCP server is not supported", hint)
    declared = validate(McpFile, data, image.doc, image.ctx.collector, base=entry.path)
    if declared is None or refused:
        return None
    if register:
        image.register_tool(entry.name, image.doc.diagnostic(entry.path, ""))
    return _mcp_tool(image, declared)


def inline_a2a(image: ImageReading, entry: InlineTool, register: bool = True) -> A2ATool | None:
    """`tools.<name>: {type: a2a, url, headers?, timeout?}`: a remote A2A agent."""
    data = {**entry.data, "name": entry.name}
    remote = validate(A2ATool, data, image.doc, image.ctx.collector, base=entry.path)
    if remote is not None and register:
        image.register_tool(entry.name, image.doc.diagnostic(entry.path, ""))
    return remote


def image_builtins(image: ImageReading, model: ModelSettings | None) -> list[BuiltinConfig]:
    out: list[BuiltinConfig] = []
    for index, entry in enumerate(image.config.tools.builtins):
        builtin = BuiltinConfig(name=entry) if isinstance(entry, str) else entry
        where: FieldPath = ("tools", "builtins", index)
        if any(b.name == builtin.name for b in out):
            image.error(where, f"builtin `{builtin.name}` is listed twice")
            continue
        openai_native = model is not None and model.provider == ProviderType.OPENAI.value
        if builtin.name == "web_search" and builtin.search_provider is None and not openai_native:
            image.error(
                where,
                "web_search needs `search_provider` (google, perplexity or nimble) "
                "with an api_key unless the model is an OpenAI model",
                "use `{name: web_search, search_provider: perplexity, api_key: ...}`",
            )
            continue
        image.register_tool(builtin.name, image.doc.diagnostic(where, ""))
        out.append(builtin)
    return out


def _files(directory: Path, suffix: str) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == suffix)
