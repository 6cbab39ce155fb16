"""Python function tools: the schema comes from type hints and the docstring
(Google, NumPy or Sphinx style), arguments are validated before the call, sync and
async functions both work (sync ones in daemon threads, see `threads`), and any return
value is serialised for the model."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic_ai import Tool

from holodeck.spec.agent_yaml.function_parameters import parameters_schema
from holodeck.spec.models.tools import FunctionTool
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.python_modules import load_module
from holodeck.tools.threads import threaded

PARAMS_ARGUMENT = "params"


def function_tool(tool: FunctionTool, root: Path, params: Mapping[str, Any]) -> Tool[Any]:
    path = root / tool.file
    module = load_module(path)
    function = getattr(module, tool.function, None)
    if not callable(function):
        raise ToolLoadError(f"defines no function `{tool.function}`", path)
    if not inspect.iscoroutinefunction(function):  # never blocks the loop nor Ctrl+C
        function = threaded(function)
    callable_ = with_params(function, params)
    built = Tool(
        callable_,
        name=tool.name,
        description=tool.description,
        takes_ctx=False,
        docstring_format="auto",
    )
    if tool.parameters is not None:
        offer_schema(built, tool.parameters, callable_, path)
    return built


def offer_schema(
    built: Tool[Any],
    parameters: Mapping[str, Mapping[str, Any]],
    function: Callable[..., Any],
    path: Path,
) -> None:
    """Offer the model `parameters` instead of the schema from type hints. The arguments
    it sends are still validated against the type hints before the call."""
    if built.function_schema.single_arg_name is not None:
        # pydantic-ai then offers that one argument's fields at the top level
        raise ToolLoadError(
            f"`parameters` cannot describe `{built.name}`: its one argument is a model "
            "whose fields are the schema; remove `parameters`",
            path,
        )
    optional = {
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    built.function_schema = dataclasses.replace(
        built.function_schema, json_schema=parameters_schema(parameters, optional)
    )


def with_params(function: Callable[..., Any], params: Mapping[str, Any]) -> Callable[..., Any]:
    """`function` with its `params` argument filled from the image's params and hidden
    from the schema the model sees. Functions without `params` are returned as they are."""
    signature = inspect.signature(function)
    if PARAMS_ARGUMENT not in signature.parameters:
        return function
    frozen = dict(params)
    visible = [p for name, p in signature.parameters.items() if name != PARAMS_ARGUMENT]

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def call_async(*args: Any, **kwargs: Any) -> Any:
            return await function(*args, **kwargs, **{PARAMS_ARGUMENT: frozen})

        wrapper: Callable[..., Any] = call_async
    else:

        @functools.wraps(function)
        def call_sync(*args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs, **{PARAMS_ARGUMENT: frozen})

        wrapper = call_sync
    wrapper.__signature__ = signature.replace(parameters=visible)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {
        k: v for k, v in getattr(function, "__annotations__", {}).items() if k != PARAMS_ARGUMENT
    }
    del wrapper.__wrapped__  # type: ignore[attr-defined]  # inspect must see the new signature
    return wrapper
