"""Prompt tools: a Jinja2 template filled with the call's arguments and sent to a model
(the tool's own, or the agent's). Output that is JSON comes back parsed."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext, Tool

from holodeck.spec.models.tools import PromptParameter, PromptTool
from holodeck.tools.errors import ToolLoadError

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "number": float,
    "integer": int,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def prompt_tool(tool: PromptTool, root: Path, ask: Callable[..., Any]) -> Tool[Any]:
    """`ask(prompt, model_settings, ctx)` runs one model request and returns its text."""
    source = tool.template if tool.template is not None else _read(root, tool.file or "")
    template = _compile(source, tool, root)
    signature = inspect.Signature(
        [
            inspect.Parameter(
                "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=RunContext[Any]
            )
        ]
        + [_parameter(name, p) for name, p in tool.parameters.items()]
    )

    async def run_prompt(ctx: RunContext[Any], **arguments: Any) -> Any:
        text = await ask(template.render(**arguments), tool.model, ctx)
        return _maybe_json(text)

    run_prompt.__signature__ = signature  # type: ignore[attr-defined]
    run_prompt.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    run_prompt.__doc__ = tool.description + "".join(
        f"\n\n:param {name}: {p.description}"
        for name, p in tool.parameters.items()
        if p.description
    )
    return Tool(run_prompt, name=tool.name, description=tool.description, takes_ctx=True)


def _read(root: Path, relative: str) -> str:
    path = root / relative
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolLoadError(f"cannot read prompt template: {exc}", path) from None


def _compile(source: str, tool: PromptTool, root: Path) -> Any:
    import jinja2
    from jinja2 import meta

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    where = root / tool.file if tool.file else None
    try:
        used = meta.find_undeclared_variables(env.parse(source))
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ToolLoadError(
            f"prompt tool `{tool.name}`: template syntax error at line {exc.lineno}: {exc.message}",
            where,
        ) from None
    undeclared = sorted(used - set(tool.parameters))
    if undeclared:
        raise ToolLoadError(
            f"prompt tool `{tool.name}` uses {', '.join(f'`{u}`' for u in undeclared)} "
            "but does not declare it under `parameters`",
            where,
        )
    return template


def _parameter(name: str, spec: PromptParameter) -> inspect.Parameter:
    annotation = _JSON_TYPES[spec.type]
    if spec.required and spec.default is None:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation | None, default=spec.default
    )


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    candidate = fenced.group(1) if fenced else stripped
    if candidate[:1] in ("{", "["):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    return text
