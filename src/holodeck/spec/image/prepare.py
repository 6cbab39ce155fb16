"""Before config.yaml is validated, take out the Omnigent forms the schema does not hold:
the `executor:` block, inline tools, `compaction:`, and builtins only an Omnigent server
provides.
Each is either read into something that works here or reported with what to write."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from holodeck.spec.diagnostics import Collector, FieldPath, Severity
from holodeck.spec.image.acting_tools import take_acting_tools
from holodeck.spec.image.agent_tool_keys import refuse_agent_tool_keys
from holodeck.spec.image.executor import ExecutorModel, Report, read_executor
from holodeck.spec.image.inline_tools import InlineTool, split_tools
from holodeck.spec.image.omnigent_compaction import take_compaction
from holodeck.spec.image.policies import take_policies
from holodeck.spec.image.server_builtins import MEMORY_BUILTINS, server_only
from holodeck.spec.models.workspace_settings import WorkspaceSettings
from holodeck.spec.yaml.source import YamlDocument


@dataclass
class Prepared:
    data: Any
    executor: ExecutorModel | None = None
    inline: list[InlineTool] = field(default_factory=list)
    workspace: WorkspaceSettings | None = None  # the tools that act (os_env, terminals, ...)


def reporter(doc: YamlDocument, collector: Collector, *, strict: bool = False) -> Report:
    def report(path: FieldPath, message: str, hint: str | None, *, warning: bool = False) -> None:
        severity = Severity.WARNING if warning and not strict else Severity.ERROR
        collector.add(doc.diagnostic(path, message, hint=hint, severity=severity))

    return report


def prepare(
    data: Any,
    doc: YamlDocument,
    collector: Collector,
    *,
    strict: bool = False,
    single_file: bool = False,
) -> Prepared:
    """`single_file`: an Omnigent single-file agent, which has no tools/ directories."""
    if not isinstance(data, dict):
        return Prepared(data)
    report = reporter(doc, collector, strict=strict)
    data = dict(data)  # the document's own data stays as it was read
    executor = read_executor(data.pop("executor", None), report)
    take_policies(data, report)
    refuse_agent_tool_keys(data, report)
    workspace = take_acting_tools(data, report)
    take_compaction(data, report)
    if data.get("prompt") is not None and data.get("instructions") is not None:
        report(
            ("prompt",),
            "`prompt` and `instructions` both give the agent's instructions",
            "`prompt` is the older name of `instructions`: keep one of them",
        )
    if "tools" not in data:
        return Prepared(data, executor, workspace=workspace)
    block, inline, unknown = split_tools(data["tools"])
    for path in unknown:
        kind = data["tools"][path[-1]].get("type")
        report(
            path,
            f"inline tools of type `{kind}` are not supported in "
            + ("a single-file agent" if single_file else "config.yaml"),
            "inline tools are `type: mcp`, `type: agent`, `type: a2a` or `type: handoff`; put "
            "Python functions in "
            "tools/python/ and TypeScript ones in tools/typescript/"
            + (
                " of an image directory (this file as its config.yaml, with `spec_version: 1`)"
                if single_file
                else ""
            ),
        )
    if isinstance(block, dict) and isinstance(block.get("builtins"), list):
        block["builtins"] = _without_memory_builtins(data, block["builtins"], report)
        block["builtins"] = _without_server_builtins(block["builtins"], report)
    data["tools"] = block
    return Prepared(data, executor, inline, workspace)


def _without_memory_builtins(data: dict[str, Any], entries: list[Any], report: Report) -> list[Any]:
    """`entries` without the Hindsight builtins long-term memory does, which turn it on
    (`memory.long_term`, as config.yaml sets it or by default) under their names."""
    names: dict[str, str] = {}
    kept: list[Any] = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else entry
        if isinstance(name, str) and name in MEMORY_BUILTINS:
            names[MEMORY_BUILTINS[name]] = name
            extra = sorted(set(entry) - {"name"}) if isinstance(entry, dict) else []
            if extra:  # a Hindsight server's settings: no such server here
                report(
                    ("tools", "builtins", index),
                    f"`{name}` is HoloDeck's long-term memory here: "
                    + ", ".join(f"`{k}`" for k in extra)
                    + " (a Hindsight server's) is not used",
                    "remove it; memory.long_term in config.yaml says where memories live",
                    warning=True,
                )
        else:
            kept.append(entry)
    if names:
        memory = data.get("memory")
        memory = dict(memory) if isinstance(memory, dict) else {}
        long_term = memory.get("long_term")
        long_term = dict(long_term) if isinstance(long_term, dict) else {}
        given = long_term.get("tool_names")
        long_term["tool_names"] = {**names, **(given if isinstance(given, dict) else {})}
        memory["long_term"] = long_term
        data["memory"] = memory
    return kept


def _without_server_builtins(entries: list[Any], report: Report) -> list[Any]:
    kept: list[Any] = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else entry
        refusal = server_only(name) if isinstance(name, str) else None
        if refusal is None:
            kept.append(entry)
        else:
            report(("tools", "builtins", index), *refusal)
    return kept
