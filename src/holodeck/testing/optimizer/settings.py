"""The settings a search moves, read from an agent and put into a copy of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holodeck.errors import ConfigurationError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.optimizer import OptimizerSettings, parse_setting
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool

Values = dict[str, Any]  # axis path -> value (None: not set, the provider's default)
SEARCH_TOOLS = (VectorstoreTool, HierarchicalDocumentTool)


def check_settings(spec: AgentSpec, settings: OptimizerSettings) -> None:
    """Refuse axes this agent cannot have: a tool that is not one of its search tools,
    instructions written elsewhere than the path says, tool settings of an image."""
    where = f"{spec.source}: optimizer.axes"
    for index, axis in enumerate(settings.axes.numeric):
        tool, _ = parse_setting(axis.path)
        if tool is None:
            continue
        searchable = [t.name for t in spec.tools if isinstance(t, SEARCH_TOOLS)]
        if spec.format == "image" or tool not in searchable:
            raise ConfigurationError(
                f"{where}.numeric[{index}].path: `{axis.path}` names no search tool of this agent",
                hint="its search tools are: " + (", ".join(searchable) or "none")
                if spec.format != "image"
                else "an image's tools have no top_k to write back: search model settings",
            )
    if spec.model is None and any(parse_setting(a.path)[0] is None for a in settings.axes.numeric):
        raise ConfigurationError(
            f"{where}: the agent has no model block whose settings could be searched",
            hint="add `llm: {model: provider/name}` (an image) or `model:` (agent.yaml)",
        )
    for index, text in enumerate(settings.axes.textual):
        in_file = spec.instructions_file is not None
        if (text.path == "instructions.inline" and in_file) or (
            text.path == "instructions.file" and not in_file
        ):
            raise ConfigurationError(
                f"{where}.textual[{index}].path: the instructions are "
                f"{'in a file' if in_file else 'inline'}, not at `{text.path}`",
                hint="write `path: instructions` to rewrite them wherever they are",
            )


def read_values(spec: AgentSpec, settings: OptimizerSettings) -> Values:
    """The current value of every numeric axis."""
    values: Values = {}
    for axis in settings.axes.numeric:
        tool, name = parse_setting(axis.path)
        holder: Any = spec.model if tool is None else _tool(spec, tool)
        values[axis.path] = getattr(holder, name, None)
    return values


def with_values(spec: AgentSpec, values: Mapping[str, Any], instructions: str | None) -> AgentSpec:
    """A copy of `spec` with `values` (and the instructions text) in place."""
    update: dict[str, Any] = {}
    model_changes = {}
    tools = list(spec.tools)
    for path, value in values.items():
        tool, name = parse_setting(path)
        if tool is None:
            model_changes[name] = value
        else:
            at = next(i for i, t in enumerate(tools) if t.name == tool)
            tools[at] = tools[at].model_copy(update={name: value})
    if model_changes and spec.model is not None:
        update["model"] = spec.model.model_copy(update=model_changes)
    update["tools"] = tuple(tools)
    if instructions is not None:
        update["instructions"] = instructions
    return spec.model_copy(update=update)


def _tool(spec: AgentSpec, name: str) -> Any:
    return next(t for t in spec.tools if t.name == name)
