"""Sub-agents defined inline in config.yaml (`tools.<name>: {type: agent, ...}`), the form
Omnigent's single-file agents use: a description, a `prompt`, an `executor` (its model),
and `tools` of its own (inline `mcp` or `agent` entries)."""

from __future__ import annotations

from holodeck.spec.diagnostics import Severity
from holodeck.spec.image.executor import ExecutorModel, harness_settings, read_executor
from holodeck.spec.image.inline_tools import AGENT_REFUSED, InlineTool, split_tools
from holodeck.spec.image.model_choice import model_settings
from holodeck.spec.image.prepare import reporter
from holodeck.spec.image.prompt_files import instructions_from
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.image.tool_files import inline_a2a, inline_mcp
from holodeck.spec.models.agent_spec import AgentSpec, Tool
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.python_tools import is_valid_tool_name

AGENT_KEYS = frozenset({"type", "description", "prompt", "instructions", "executor", "tools"})


def build_inline_agent(
    image: ImageReading, entry: InlineTool, inherited: ModelSettings | None, register: bool
) -> AgentSpec | None:
    data, path = entry.data, entry.path
    before = _errors(image)
    if not is_valid_tool_name(entry.name):
        image.error(
            path,
            f"tool name `{entry.name}` is not valid for model providers",
            "use letters, digits, `_` or `-` (at most 64 characters)",
        )
    for key in data:
        if key in AGENT_REFUSED:
            image.error(
                (*path, key), f"`{key}` of an inline agent is not supported", AGENT_REFUSED[key]
            )
        elif key not in AGENT_KEYS:
            image.error(
                (*path, key),
                f"`{key}` is not a setting of an inline agent",
                "an inline agent takes description, prompt, executor and tools",
            )
    if data.get("prompt") is not None and data.get("instructions") is not None:
        image.error(
            (*path, "prompt"),
            "`prompt` and `instructions` both give the instructions",
            "`prompt` is the older name of `instructions`: keep one of them",
        )
    key = "instructions" if data.get("instructions") is not None else "prompt"
    text = data.get(key)
    if text is not None and not isinstance(text, str):
        image.error((*path, key), f"`{key}` must be text", None)
        text = None
    instructions, instructions_file = (
        instructions_from(image, text, (*path, key)) if text is not None else (None, None)
    )
    description = data.get("description")
    report = reporter(image.doc, image.ctx.collector, strict=image.ctx.strict)
    executor = read_executor(data.get("executor"), report, path)
    model = _model(image, entry, executor, inherited)
    tools, subagents = _tools(image, entry, model)
    if _errors(image) > before:
        return None
    if register:
        image.register_tool(entry.name, image.doc.diagnostic(path, ""))
    return AgentSpec(
        format="image",
        root=image.root,
        source=image.doc.file or image.root / "config.yaml",
        name=entry.name,
        description=str(description) if description is not None else None,
        model=model,
        instructions=instructions,
        instructions_file=instructions_file,
        tools=tuple(tools),
        subagents=subagents,
        network=image.ctx.settings.network,
        harness=executor.harness if executor else None,
        claude=harness_settings(executor),
    )


def _errors(image: ImageReading) -> int:
    return sum(d.severity is Severity.ERROR for d in image.ctx.collector.diagnostics)


def _model(
    image: ImageReading,
    entry: InlineTool,
    executor: ExecutorModel | None,
    inherited: ModelSettings | None,
) -> ModelSettings | None:
    if executor is None:
        return inherited
    if executor.model is None:
        if inherited is None:
            return None
        update = (
            {"reasoning_effort": executor.reasoning_effort} if executor.reasoning_effort else {}
        )
        return inherited.model_copy(update=update)
    return model_settings(
        image,
        executor.model,
        (*entry.path, "executor", "model"),
        executor,
        reasoning_effort=executor.reasoning_effort,
    )


def _tools(
    image: ImageReading, entry: InlineTool, model: ModelSettings | None
) -> tuple[list[Tool], dict[str, AgentSpec]]:
    raw = entry.data.get("tools") or {}
    block, inline, unknown = split_tools(raw, (*entry.path, "tools"))
    for where in [*unknown, *((*entry.path, "tools", k) for k in (block or {}))]:
        image.error(
            where,
            "an inline agent's tools are inline `type: mcp`, `type: agent` or `type: a2a` entries",
            "e.g. `tools: {files: {type: mcp, command: npx, args: [...]}}`",
        )
    tools: list[Tool] = []
    subagents: dict[str, AgentSpec] = {}
    names: set[str] = set()
    for sub in inline:
        if sub.name in names:
            image.error(sub.path, f"duplicate tool name `{sub.name}`", None)
            continue
        names.add(sub.name)
        if sub.kind == "mcp":
            mcp = inline_mcp(image, sub, register=False)
            tools.extend([mcp] if mcp is not None else [])
        elif sub.kind == "a2a":
            remote = inline_a2a(image, sub, register=False)
            tools.extend([remote] if remote is not None else [])
        elif sub.kind == "handoff":
            image.error(
                sub.path,
                "an inline agent cannot hand the conversation off",
                "write the agent out as agents/<name>/config.yaml with the handoff in its "
                "`tools:`, or put the handoff in the top agent's `tools:`",
            )
        else:
            agent = build_inline_agent(image, sub, model, register=False)
            if agent is not None:
                subagents[sub.name] = agent
    return tools, subagents
