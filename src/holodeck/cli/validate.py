"""`holodeck validate`: check definitions and list every problem with file:line."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from holodeck.config.loader import load_agent
from holodeck.errors import EXIT_CONFIG, EXIT_OK
from holodeck.runtime import RunOptions, modality_diagnostics, tool_context
from holodeck.spec import SpecError
from holodeck.spec.controls_check import effective_tools
from holodeck.spec.models.tools import HierarchicalDocumentTool, VectorstoreTool

if TYPE_CHECKING:
    from holodeck.runtime import ToolContext
    from holodeck.spec.models.agent_spec import AgentSpec


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--no-env",
    is_flag=True,
    help="Leave ${VAR} references unexpanded (as a server does for uploaded bundles).",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
def validate(paths: tuple[Path, ...], strict: bool, no_env: bool, as_json: bool) -> None:
    """Check agent definitions: agent.yaml files, image directories or image .tar.gz.

    Every problem is listed at once as `file:line:column: error: field: message (hint)`.
    Exits 0 when all definitions are valid, 2 otherwise.

    \b
    Examples:
      holodeck validate agent.yaml
      holodeck validate examples/*/ --strict
      holodeck validate my-image.tar.gz --json
    """

    results = []
    failed = False
    for path in paths or (Path(),):
        try:
            spec = load_agent(
                path,
                strict=strict,
                expand_env=not no_env,
                source_check=_check_search_sources,
                check_keys=True,
            )
        except SpecError as exc:
            failed = True
            results.append({"path": str(path), "ok": False, "diagnostics": exc.diagnostics})
            continue
        summary = (
            f"{spec.format}: {spec.name}, {len(spec.tools)} tools, "
            f"{len(spec.skills)} skills, {len(spec.subagents)} sub-agents, "
            f"{len(spec.test_cases)} test cases"
        )
        handoffs = {h.tool: h.agent.name for h in spec.handoffs}
        searches, errors = _embedders_of(spec)
        modal = modality_diagnostics(spec, strict, partial(_tool_context, spec), path)
        modal_failed = any(d.severity.value == "error" for d in modal)
        failed = failed or bool(errors) or modal_failed
        offered, denied, servers = effective_tools(spec)
        results.append(
            {
                "path": str(path),
                "ok": not errors and not modal_failed,
                "summary": summary,
                "diagnostics": (*spec.warnings, *modal),
                "search_tools": searches,
                "errors": errors,
                "tools_offered": offered,
                "tools_denied": denied,
                "mcp_servers": servers,
                "handoffs": handoffs,
            }
        )
    if as_json:
        click.echo(json.dumps([_as_json(r) for r in results], indent=2))
    else:
        for result in results:
            _print(result)
    raise SystemExit(EXIT_CONFIG if failed else EXIT_OK)


def _print(result: dict[str, object]) -> None:
    diagnostics = result["diagnostics"]
    assert isinstance(diagnostics, list | tuple)
    for diagnostic in diagnostics:
        color = "red" if diagnostic.severity.value == "error" else "yellow"
        click.secho(diagnostic.render(), fg=color, err=not result["ok"])
    if result["ok"]:
        click.secho(f"OK {result['path']} ({result['summary']})", fg="green")
        searches = result.get("search_tools")
        assert isinstance(searches, dict)
        for name, how in searches.items():
            click.echo(f"  search tool `{name}`: {how}")
        _print_tools(result)
    else:
        found = result.get("errors") or []
        assert isinstance(found, list)
        for problem in found:  # search tools whose embedding settings cannot work
            click.secho(f"{result['path']}: error: {problem}", fg="red", err=True)
        errors = sum(1 for d in diagnostics if d.severity.value == "error") + len(found)
        click.secho(f"FAILED {result['path']}: {errors} error(s)", fg="red", err=True)


def _print_tools(result: dict[str, object]) -> None:
    """The effective tool set: what the model is offered, what tools_policy keeps from it."""
    offered, denied, servers = (result[k] for k in ("tools_offered", "tools_denied", "mcp_servers"))
    assert isinstance(offered, list) and isinstance(denied, list) and isinstance(servers, list)
    listed = ", ".join(offered) or "none"
    if servers:  # listed once they run: tools_policy applies to them then, as `server.tool`
        listed += f"; and the tools of MCP servers {', '.join(servers)} (known once they run)"
    click.echo(f"  tools offered: {listed}")
    if denied:
        click.echo(f"  denied by tools_policy: {', '.join(denied)}")
    handoffs = result.get("handoffs")
    assert isinstance(handoffs, dict)
    if handoffs:  # offered besides the tools: each hands the conversation over
        listed = ", ".join(f"{tool} (to {agent})" for tool, agent in handoffs.items())
        click.echo(f"  hands off with: {listed}")


def _as_json(result: dict[str, object]) -> dict[str, object]:
    diagnostics = result["diagnostics"]
    assert isinstance(diagnostics, list | tuple)
    out = {k: v for k, v in result.items() if k != "diagnostics"}
    out["diagnostics"] = [
        {
            "severity": d.severity.value,
            "file": str(d.file) if d.file else None,
            "member": d.member,  # the file inside an image archive `file`
            "line": d.line,
            "column": d.column,
            "field": d.field or None,
            "message": d.message,
            "hint": d.hint,
        }
        for d in diagnostics
    ]
    return out


def _tool_context(spec: AgentSpec) -> ToolContext:

    return tool_context(spec, RunOptions())


# The search checks load the search pipeline and numpy (about 0.2 s): only a definition
# with a search tool pays for them.
def _check_search_sources(tool: Any, root: Path) -> list[tuple[tuple[str | int, ...], str]]:
    from holodeck.search.checks import check_search_sources

    return check_search_sources(tool, root)


def _embedders_of(spec: AgentSpec) -> tuple[dict[str, str], list[str]]:
    if not any(isinstance(t, VectorstoreTool | HierarchicalDocumentTool) for t in spec.tools):
        return {}, []
    from holodeck.search.checks import embedders_of

    return embedders_of(spec, partial(_tool_context, spec))
