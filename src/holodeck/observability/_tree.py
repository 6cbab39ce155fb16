"""A turn's spans as a tree in the terminal, for people without a collector.

`SpanTrees` keeps the spans of each trace until its root ends, then hands the whole
trace to a callback (`holodeck chat --trace`, `holodeck test -v`). It shows names,
durations, token counts and failures, never content."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from holodeck.observability.names import CASE_STATUS, METRIC_SCORE


@dataclass
class SpanNode:
    """One span in a printed tree."""

    name: str
    span_id: int
    parent_id: int | None
    duration_ms: float
    attributes: dict[str, Any]
    error: str | None
    start: int
    children: list[SpanNode] = field(default_factory=list)


def tree_of(spans: Sequence[Any]) -> list[SpanNode]:
    """The roots of `spans` (SDK `ReadableSpan`s), each with its children by start time."""
    nodes = {
        s.context.span_id: SpanNode(
            name=s.name,
            span_id=s.context.span_id,
            parent_id=s.parent.span_id if s.parent is not None else None,
            duration_ms=((s.end_time or 0) - (s.start_time or 0)) / 1e6,
            attributes=dict(s.attributes or {}),
            error=s.status.description or "error" if s.status.status_code.name == "ERROR" else None,
            start=s.start_time or 0,
        )
        for s in spans
    }
    roots: list[SpanNode] = []
    for node in sorted(nodes.values(), key=lambda n: n.start):
        parent = nodes.get(node.parent_id) if node.parent_id is not None else None
        (parent.children if parent is not None else roots).append(node)
    return roots


def render(roots: Sequence[SpanNode]) -> list[str]:
    """Lines of text: one span a line, drawn as a tree."""
    lines: list[str] = []

    def walk(node: SpanNode, lead: str, branch: str) -> None:
        lines.append(f"{lead}{branch}{_describe(node)}")
        below = lead + ("   " if branch == "└─ " else "│  " if branch else "")
        for index, child in enumerate(node.children):
            walk(child, below, "└─ " if index == len(node.children) - 1 else "├─ ")

    for root in roots:
        walk(root, "", "")
    return lines


def _describe(node: SpanNode) -> str:
    parts = [node.name, f"{node.duration_ms:.0f} ms"]
    a = node.attributes
    tokens_in = a.get("gen_ai.usage.input_tokens", a.get("gen_ai.aggregated_usage.input_tokens"))
    tokens_out = a.get("gen_ai.usage.output_tokens", a.get("gen_ai.aggregated_usage.output_tokens"))
    if tokens_in is not None or tokens_out is not None:
        parts.append(f"tokens {tokens_in or 0} in / {tokens_out or 0} out")
    reasons = a.get("gen_ai.response.finish_reasons")
    if reasons:
        parts.append("finish " + ",".join(map(str, reasons)))
    for key, label in ((CASE_STATUS, "status"), (METRIC_SCORE, "score")):
        if key in a:
            parts.append(f"{label} {a[key]}")
    if node.error:
        parts.append(f"FAILED: {node.error}")
    return "  ".join(parts)


def span_trees(on_trace: Callable[[list[SpanNode]], None]) -> Any:
    """A span processor calling `on_trace` with each trace's tree when its root ends."""
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor

    class SpanTrees(SpanProcessor):
        def __init__(self) -> None:
            self._lock = threading.Lock()
            self._open: dict[int, list[ReadableSpan]] = {}

        def on_end(self, span: ReadableSpan) -> None:
            trace_id = span.context.trace_id
            with self._lock:
                self._open.setdefault(trace_id, []).append(span)
                if span.parent is not None and not span.parent.is_remote:
                    return
                finished = self._open.pop(trace_id)
            on_trace(tree_of(finished))

    return SpanTrees()
