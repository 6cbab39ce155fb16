"""The `executor:` block of an Omnigent-style config.yaml, read as a model source.

Omnigent images name their model in `executor.model` (the older `llm.model` is lifted
into it there) and choose a harness that runs the agent loop. HoloDeck runs the loop
itself, so what carries over is the model, its settings (`context_window` becomes the
model's, which `memory.compaction` sizes the history by) and its credentials. A harness
that is an agent product of its own is recorded: `claude-sdk` / `claude-native` run in
the Claude Agent SDK harness; the others (Codex, Cursor, ...) run only in HoloDeck's own
loop when the run says so (`--harness none`), which the runtime checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from holodeck.spec.diagnostics import FieldPath
from holodeck.spec.models.claude_settings import ClaudeSettings


class Report(Protocol):
    """Says a problem at a field: an error, or (`warning`) a key with no effect here."""

    def __call__(
        self, path: FieldPath, message: str, hint: str | None, *, warning: bool = False
    ) -> None: ...


# Keys that only tune something HoloDeck does its own way: a warning, by the
# compatibility rule (an error with --strict).
_TUNING = {
    "smart_routing_harness": (
        "hands the choice of harness and model for each turn to Omnigent's Smart Routing; "
        "HoloDeck runs the model the image names (`executor.model` or `llm.model`) for "
        "every turn",
        "remove it; `llm.fallback_models` lists models to fall back on",
    ),
}

# Harnesses that are a plain model-and-tools loop, which is what HoloDeck runs.
PLAIN_LOOP_HARNESSES = frozenset({"openai-agents", "openai-agents-sdk", "open-responses"})
PLAIN_LOOP_TYPES = frozenset({"omnigent", "agents_sdk"})
CLAUDE_HARNESSES = frozenset({"claude-sdk", "claude-native"})
PERMISSION_MODES = (
    "default",
    "acceptEdits",
    "plan",
    "auto",
    "bypassPermissions",
    "manual",
    "acceptAll",
)
REASONING_EFFORTS = ("low", "medium", "high")
MAX_ITERATIONS = 100  # ExecutionSettings.max_tool_iterations allows at most this
_CONNECTION_KEYS = {"api_key": "api_key", "base_url": "endpoint", "api_base": "endpoint"}


@dataclass(frozen=True)
class ExecutorModel:
    """What the executor block contributes; each value also says where it was written."""

    model: str | None = None
    reasoning_effort: str | None = None
    max_iterations: int | None = None
    api_key: str | None = None
    endpoint: str | None = None
    harness: str | None = None  # an agent product's loop (claude-sdk, codex...); None: ours
    permission_mode: str | None = None
    context_window: int | None = None  # tokens; the model's `context_window`


def harness_settings(executor: ExecutorModel | None) -> ClaudeSettings | None:
    """The Claude harness's settings for an executor that names it, else None."""
    if executor is None or executor.harness not in CLAUDE_HARNESSES:
        return None
    mode = executor.permission_mode or "default"
    return ClaudeSettings(permission_mode=mode, max_turns=executor.max_iterations)


def read_executor(raw: Any, report: Report, base: FieldPath = ()) -> ExecutorModel | None:
    """Map `executor:` (at `base`) to model settings; what has no meaning here is reported."""
    if raw is None:
        return None
    if isinstance(raw, str):  # the single-file Omnigent shorthand: `executor: MODEL`
        return ExecutorModel(model=raw)
    if not isinstance(raw, dict):
        report((*base, "executor"), "`executor` must be a mapping", "e.g. `executor: {model: ...}`")
        return None
    found: dict[str, Any] = {}
    for key, value in raw.items():
        where: FieldPath = (*base, "executor", str(key))
        reader = _READERS.get(str(key))
        if key in _TUNING:
            report(where, f"`executor.{key}` {_TUNING[key][0]}", _TUNING[key][1], warning=True)
            continue
        if reader is None:
            report(where, *_refusal(str(key)))
            continue
        reader(value, where, found, report)
    return ExecutorModel(**found)


def _model(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if not isinstance(value, str) or not value.strip():
        report(where, "`executor.model` must be a `provider/model` string", None)
        return
    found["model"] = value


def _effort(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if value not in REASONING_EFFORTS:
        report(where, f"reasoning_effort `{value}` is not supported", "use low, medium or high")
        return
    found["reasoning_effort"] = value


def _iterations(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        report(where, "`max_iterations` must be a positive integer", None)
    elif value > MAX_ITERATIONS:
        report(
            where,
            f"max_iterations {value} is more than the {MAX_ITERATIONS} model-and-tools "
            "rounds a turn may take here",
            f"set `max_iterations: {MAX_ITERATIONS}` or less",
        )
    else:
        found["max_iterations"] = value


def _window(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        report(where, "`context_window` must be a positive number of tokens", None)
    else:
        found["context_window"] = value


def _type(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if value in PLAIN_LOOP_TYPES:
        return  # the model-and-tools loop HoloDeck runs
    if value == "claude_sdk":
        found["harness"] = "claude-sdk"
    else:
        report(where, f"unknown executor type `{value}`", "use `omnigent`, or remove `type`")


def _config(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if not isinstance(value, dict):
        report(where, "`executor.config` must be a mapping", None)
        return
    for key, item in value.items():
        at: FieldPath = (*where, str(key))
        reader = _CONFIG_READERS.get(str(key))
        if key in _TUNING:
            message, hint = _TUNING[str(key)]
            report(at, f"`executor.config.{key}` {message}", hint, warning=True)
        elif reader is None:
            report(at, *_refusal(f"config.{key}"))
        else:
            reader(item, at, found, report)


def _harness(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if not isinstance(value, str) or not value.strip():
        report(where, "`harness` must be a harness name", "e.g. `harness: claude-sdk`")
    elif value not in PLAIN_LOOP_HARNESSES:
        found["harness"] = value  # the runtime runs it, or says what the run must allow


def _permission_mode(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if value not in PERMISSION_MODES:
        report(
            where,
            f"permission_mode `{value}` is not one the Claude harness knows",
            f"use one of {', '.join(PERMISSION_MODES)}",
        )
        return
    if value in ("bypassPermissions", "acceptAll"):
        report(
            where,
            f"permission_mode `{value}` would let the harness run any tool unchecked; an "
            "image cannot acknowledge that",
            "use `acceptEdits` or `default`, or write an agent.yaml with `claude: "
            "{permission_mode: bypassPermissions, i_understand_this_is_unsafe: true}`",
        )
        return
    found["permission_mode"] = value


def _connection(value: Any, where: FieldPath, found: dict[str, Any], report: Report) -> None:
    if not isinstance(value, dict):
        report(where, f"`{where[-1]}` must be a mapping", None)
        return
    for key, item in value.items():
        at: FieldPath = (*where, str(key))
        if key == "type" and where[-1] == "auth":
            if item != "api_key":
                report(
                    at,
                    f"auth type `{item}` uses credentials an Omnigent server keeps "
                    "(a Databricks profile or a named Omnigent provider)",
                    "use `auth: {type: api_key, api_key: ${KEY}, base_url: ...}`, or declare "
                    "the provider in HoloDeck's config.yaml `providers:`",
                )
            continue
        target = _CONNECTION_KEYS.get(str(key))
        if target is None or not isinstance(item, str):
            report(at, f"`{key}` has no meaning here", "give only `api_key` and `base_url`")
            continue
        found[target] = item


def _refusal(key: str) -> tuple[str, str | None]:
    reasons = {
        "profile": "names a Databricks credentials profile, which HoloDeck does not read",
        "config.profile": "names a Databricks credentials profile, which HoloDeck does not read",
        "timeout": "limits a whole Omnigent run; HoloDeck has no such limit",
        "variant": "selects an Omnigent model variant, which HoloDeck does not have",
    }
    hints = {
        "profile": "remove it; put the key in config.yaml `providers:` or `auth.api_key`",
        "config.profile": "remove it; put the key in config.yaml `providers:` or `auth.api_key`",
        "timeout": "remove it (a single model request is limited by its provider's timeout)",
        "variant": "remove it and name the exact model in `executor.model`",
    }
    reason = reasons.get(key, "is not an executor setting HoloDeck knows")
    return f"`executor.{key}` {reason}", hints.get(
        key,
        "executor takes model, reasoning_effort, max_iterations, context_window, connection "
        "and auth",
    )


_Reader = Callable[[Any, FieldPath, dict[str, Any], Report], None]
_CONFIG_READERS: dict[str, _Reader] = {
    "harness": _harness,
    "permission_mode": _permission_mode,
    "context_window": _window,
}
_READERS: dict[str, _Reader] = {
    "harness": _harness,
    "model": _model,
    "reasoning_effort": _effort,
    "max_iterations": _iterations,
    "context_window": _window,
    "type": _type,
    "config": _config,
    "connection": _connection,
    "auth": _connection,
}
