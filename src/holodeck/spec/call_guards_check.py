"""Load-time checks of per-call guards: a `tool_rules` key must name one of the agent's
tools (an MCP tool as `server.tool`), and a `tool_policies` callable must be a public
function of a file in the agent's folder, taking its `factory_params`. Each problem is
an error at its line: a rule or policy that guards nothing must not look like a guard."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from holodeck.spec.diagnostics import Collector, FieldPath, did_you_mean
from holodeck.spec.models.call_guards import FunctionPolicy, ToolRule
from holodeck.spec.python_tools import public_functions
from holodeck.spec.yaml.document import YamlDocument


def check_call_guards(
    rules: Mapping[str, ToolRule],
    policies: Sequence[FunctionPolicy],
    tools: Sequence[str],
    mcp_servers: Sequence[str],
    root: Path,
    doc: YamlDocument,
    collector: Collector,
    located: Callable[[int, FunctionPolicy], FieldPath] | None = None,
) -> None:
    """Report, at their lines, rules for unknown tools and policies that cannot load.
    `located` says where a policy's callable was written (an image's Omnigent
    `policies:` entry); by default `tool_policies.<i>.callable`."""
    for name in rules:
        server = name.split(".", 1)[0] if "." in name else None
        if name in tools or server in mcp_servers:
            continue
        listed = ", ".join(tools) or "none"
        collector.add(
            doc.diagnostic(
                ("tool_rules", name),
                f"tool_rules name `{name}`, which is not one of the agent's tools",
                hint=did_you_mean(name, tools)
                or f"its tools: {listed}"
                + ("; an MCP tool is written `server.tool`" if mcp_servers else ""),
            )
        )
    for index, policy in enumerate(policies):
        at = located(index, policy) if located else ("tool_policies", index, "callable")
        _check_policy(policy, at, root, doc, collector)


def _check_policy(
    policy: FunctionPolicy, at: FieldPath, root: Path, doc: YamlDocument, collector: Collector
) -> None:
    file, function = policy.source
    path = (root / file).resolve()
    if not path.is_relative_to(root.resolve()):
        collector.add(
            doc.diagnostic(
                at,
                f"the policy's file {file} is outside the agent's folder",
                hint="put the file in the agent's folder and name it relative to it",
            )
        )
        return
    if not path.is_file():
        collector.add(
            doc.diagnostic(
                at, f"policy file not found: {path}", hint=f"create it, or fix the path ({root})"
            )
        )
        return
    functions, problems = public_functions(path)
    collector.extend(problems)
    if problems:
        return
    names = [f.name for f in functions]
    if function not in names:
        collector.add(
            doc.diagnostic(
                at,
                f"{path.name} defines no public function `{function}`",
                hint=did_you_mean(function, names) or "defined: " + (", ".join(names) or "none"),
            )
        )
        return
    found = functions[names.index(function)]
    params = policy.factory_params
    if params is None or found.any_keyword:
        return
    unknown = [key for key in params if key not in found.parameters]
    missing = [n for n, has_default in found.arguments if not has_default and n not in params]
    if unknown or missing:
        said = [f"takes no {', '.join(unknown)}" if unknown else ""]
        said += [f"needs {', '.join(missing)}" if missing else ""]
        collector.add(
            doc.diagnostic(
                (*at[:-1], "factory_params"),
                f"`{function}` {' and '.join(s for s in said if s)} (factory_params)",
                hint=f"its parameters: {', '.join(found.parameters) or 'none'}",
            )
        )
