"""Load an agent image directory (Agent Image Spec, spec_version 1) into an `AgentSpec`:
walk the spec's layout in its order (config.yaml, the model, AGENTS.md, skills, tools,
sub-agents, tests), then check what the parts say of each other (tool names, policies,
caps, guardrails). Each part is read by a module of its own, taking the `ImageReading`."""

from __future__ import annotations

from pathlib import Path

from holodeck.spec.call_guards_check import check_call_guards
from holodeck.spec.controls_check import (
    check_approval,
    check_cost_caps,
    check_guardrails,
    check_tools_policy,
)
from holodeck.spec.diagnostics import Diagnostic, SpecError
from holodeck.spec.image.cases import load_image_tests
from holodeck.spec.image.executor import harness_settings
from holodeck.spec.image.files import ImageConfig
from holodeck.spec.image.function_policies import policy_origin
from holodeck.spec.image.handoffs import handed_to, image_handoffs
from holodeck.spec.image.inline_agents import build_inline_agent
from holodeck.spec.image.model_choice import image_model
from holodeck.spec.image.prepare import prepare
from holodeck.spec.image.prompt_files import image_instructions, image_skills
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.image.subagents import image_subagents
from holodeck.spec.image.tool_files import image_builtins, inline_a2a, inline_mcp, local_tools
from holodeck.spec.load_context import LoadContext
from holodeck.spec.models.agent_spec import AgentSpec, InteractionSpec, Tool, handoff_tools
from holodeck.spec.models.builtin_tools import BuiltinConfig
from holodeck.spec.models.controls import overlay_limits
from holodeck.spec.models.guardrails import overlay_guardrails
from holodeck.spec.models.long_term_memory import memory_tool_names
from holodeck.spec.models.settings import (
    ExecutionSettings,
    MemorySettings,
    overlay,
    overlay_memory,
)
from holodeck.spec.models.tools import McpTool
from holodeck.spec.models.workspace_settings import acting_tool_names
from holodeck.spec.pattern_risk import check_guard_patterns
from holodeck.spec.references import KnownTools
from holodeck.spec.validation.errors import validate
from holodeck.spec.yaml.source import read_yaml


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
    image = ImageReading(root, doc, ctx, config, prepared.executor, single_file is not None)
    model = image_model(image)
    instructions, instructions_file = image_instructions(image)
    skills = image_skills(image) if single_file is None else ()
    tools = local_tools(image) if single_file is None else []
    subagents = image_subagents(image, handed_to(prepared.inline))
    for entry in prepared.inline:
        if entry.kind == "handoff":
            continue  # read below, once every sub-agent it may name is read
        if entry.kind == "mcp":
            mcp = inline_mcp(image, entry)
            tools.extend([mcp] if mcp is not None else [])
        elif entry.kind == "a2a":
            remote = inline_a2a(image, entry)
            tools.extend([remote] if remote is not None else [])
        else:
            sub = build_inline_agent(image, entry, model, True)
            if sub is not None:
                subagents[entry.name] = sub
    handoffs = image_handoffs(image, prepared.inline, subagents, config.name or root.name)
    builtins = image_builtins(image, model)
    for name in acting_tool_names(prepared.workspace):
        image.register_tool(name, doc.diagnostic(("tools", "builtins"), ""))
    memory = overlay_memory(ctx.settings.memory, config.memory)
    for name in memory_tool_names(memory.long_term if memory is not None else None):
        image.register_tool(name, doc.diagnostic(("memory", "long_term"), ""))
    image.check_unique_tools()
    handed, handed_servers = handoff_tools(config.name or root.name, handoffs)
    known = KnownTools(
        names=frozenset(image.origins) | handed,
        mcp_servers=(*(t.name for t in tools if isinstance(t, McpTool)), *handed_servers),
        extra=frozenset({"load_skill"} if skills else ()),
    )
    evaluations, test_cases = (
        load_image_tests(root, ctx, known) if single_file is None else (None, ())
    )
    limits = overlay_limits(ctx.settings.limits, config.limits)
    check_cost_caps(limits, model, ctx.settings, doc, ctx.collector, ("limits",), ("llm", "model"))
    offered = sorted(
        {
            *(n for n, t in _offered(tools, builtins)),
            *subagents,
            *known.extra,
            *acting_tool_names(prepared.workspace),
        }
    )
    servers = known.mcp_servers
    check_tools_policy(config.tools_policy, offered, servers, doc, ctx.collector, strict=ctx.strict)
    check_approval(config.approval, offered, servers, doc, ctx.collector, strict=ctx.strict)
    check_call_guards(
        config.tool_rules,
        config.tool_policies,
        offered,
        servers,
        root,
        doc,
        ctx.collector,
        lambda i, policy: policy_origin(doc, i, policy.name),
    )
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
        workspace=prepared.workspace,
        skills=skills,
        subagents=subagents,
        handoffs=handoffs,
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
        memory=overlay_memory(ctx.settings.memory, config.memory) or MemorySettings(),
        deployment=ctx.settings.deployment,
        observability=ctx.settings.observability,
        network=ctx.settings.network,
        optimizer=config.optimizer,
        limits=limits,
        tools_policy=config.tools_policy,
        guardrails=guardrails,
        approval=config.approval,
        tool_rules=config.tool_rules,
        tool_policies=tuple(config.tool_policies),
        harness=prepared.executor.harness if prepared.executor else None,
        claude=harness_settings(prepared.executor),
        warnings=tuple(ctx.collector.warnings),
    )


def _offered(tools: list[Tool], builtins: list[BuiltinConfig]) -> list[tuple[str, object]]:
    """The image's tools the model may be offered, MCP servers' aside, by name."""
    found: list[tuple[str, object]] = [(t.name, t) for t in tools if not isinstance(t, McpTool)]
    return found + [(b.name, b) for b in builtins]
