"""`type: code` metrics: a Python function in the agent's directory computes the score.

The function is called with the keyword arguments it declares among:

- `input` (str): the case's (last) input;
- `output` (str): the agent's final answer;
- `ground_truth` (str | None): the expected answer;
- `context` (list[str]): the retrieval context;
- `tool_calls` (list[dict]): every tool call of the case, each with `name`, `args`,
  `result`, `error`, `duration_ms` and `agent` ("" for the agent under test);
- `structured_output`: the parsed answer when the agent has a `response_format`.

A `**kwargs` parameter receives all of them. The function may be sync or async, and
returns a number, a `(score, reason)` tuple or a `{"score": ..., "reason": ...}` dict.
An exception, or a return value of another shape, makes the metric an error with the
message. A sync function runs in a worker thread so it does not hold up other metrics.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import numbers
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holodeck.testing.metrics.sample import MetricError, Outcome, Sample
from holodeck.testing.results import MetricResult
from holodeck.tools.errors import ToolLoadError
from holodeck.tools.python_modules import load_module

if TYPE_CHECKING:
    from holodeck.spec.models.evaluations import CodeMetric

ARGUMENTS = ("input", "output", "ground_truth", "context", "tool_calls", "structured_output")


async def evaluate_code(metric: CodeMetric, sample: Sample, root: Path) -> MetricResult:
    file, name = metric.source
    outcome = Outcome(metric.label, "code", metric.threshold, metric.fail_on_error)
    path = root / file
    try:
        function = load_function(path, name)
        kwargs = arguments(function, sample)
        value = await call(function, kwargs, path)
        score, reason = parse_result(value, name)
    except (MetricError, ToolLoadError) as exc:
        return outcome.error(str(exc))
    return outcome.scored(score, reason)


def load_function(path: Path, name: str) -> Callable[..., Any]:
    module = load_module(path)
    function = getattr(module, name, None)
    if function is None:
        raise MetricError(f"{path}: no function `{name}`")
    if not callable(function):
        raise MetricError(f"{path}: `{name}` is not a function")
    return function  # type: ignore[no-any-return]


def arguments(function: Callable[..., Any], sample: Sample) -> dict[str, Any]:
    """The keyword arguments `function` declares, from `sample`."""
    available: dict[str, Any] = {
        "input": sample.input,
        "output": sample.output,
        "ground_truth": sample.ground_truth,
        "context": list(sample.retrieval_context),
        "tool_calls": [call.model_dump() for call in sample.tool_calls],
        "structured_output": sample.structured_output,
    }
    name = getattr(function, "__name__", "the metric function")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise MetricError(f"cannot read the parameters of `{name}`") from None
    chosen: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            return available
        if parameter.kind is parameter.VAR_POSITIONAL:
            continue
        by_keyword = parameter.kind is not parameter.POSITIONAL_ONLY
        if parameter.name in available and by_keyword:
            chosen[parameter.name] = available[parameter.name]
        elif parameter.default is parameter.empty:
            raise MetricError(
                f"`{name}` takes `{parameter.name}`, which a metric is not given; "
                f"it may take any of {', '.join(ARGUMENTS)} (by keyword)"
            )
    return chosen


async def call(
    function: Callable[..., Any], kwargs: dict[str, Any], path: Path, *, args: tuple[Any, ...] = ()
) -> Any:
    try:
        if inspect.iscoroutinefunction(function):
            value = await function(*args, **kwargs)
        else:
            value = await asyncio.to_thread(function, *args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
    except Exception as exc:  # the user's code: report its error, not our stack
        raise MetricError(_describe(exc, path)) from None
    return value


def parse_result(value: Any, name: str) -> tuple[float, str | None]:
    """(score, reason) from a number, a (score, reason) tuple or a {score, reason} dict."""
    reason: Any = None
    if isinstance(value, dict):
        if "score" not in value:
            raise MetricError(f"`{name}` returned a dict without `score`")
        score, reason = value["score"], value.get("reason")
    elif isinstance(value, tuple) and len(value) == 2:
        score, reason = value
    else:
        score = value
    if not isinstance(score, numbers.Real):
        raise MetricError(
            f"`{name}` returned {_kind(value)}; return a number, (score, reason) "
            "or {'score': ..., 'reason': ...}"
        )
    number = float(score)
    if math.isnan(number):
        raise MetricError(f"`{name}` returned NaN")
    return number, None if reason is None else str(reason)


def _kind(value: Any) -> str:
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return "None" if value is None else f"a {type(value).__name__}"


def _describe(exc: BaseException, path: Path) -> str:
    where = path.resolve()
    lines = [
        f.lineno
        for f in traceback.extract_tb(exc.__traceback__)
        if Path(f.filename).resolve() == where
    ]
    at = f" (line {lines[-1]} of {path.name})" if lines else ""
    return f"{type(exc).__name__}: {exc}{at}"
