"""The shipped HoloDeck's optimizer block, read here. It sat under `evaluations:`
(`evaluations.optimizer`); here it is the top-level `optimizer:`, so it is moved there
(errors still point at the lines it was written on). Its axes may tune blocks this
runtime does not have (`claude.*`, `tool_filtering.*`): such an axis could change
nothing, so it is dropped with a warning (an error with --strict)."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import Collector, Severity
from holodeck.spec.yaml.document import YamlDocument

# first word of an axis path -> why it tunes nothing here
ABSENT: dict[str, str] = {
    "claude": "the `claude:` block (Claude Agent SDK settings) does not exist here",
    "tool_filtering": "there is no tool filtering here: every tool is offered on every request",
}


def read_optimizer(data: Any, doc: YamlDocument, collector: Collector, *, strict: bool) -> Any:
    """agent.yaml's `data` with `evaluations.optimizer` moved to `optimizer`, and without
    the axes that tune what does not exist here (each reported at its line)."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    evaluations = out.get("evaluations")
    if isinstance(evaluations, dict) and "optimizer" in evaluations:
        if "optimizer" in out:
            collector.add(
                doc.diagnostic(
                    ("evaluations", "optimizer"),
                    "the optimizer block is given twice",
                    hint="keep the top-level `optimizer:` and remove `evaluations.optimizer`",
                )
            )
        else:
            out["optimizer"] = evaluations["optimizer"]
            for path, position in list(doc.positions.items()):
                if path[:2] == ("evaluations", "optimizer"):
                    doc.positions.setdefault(("optimizer", *path[2:]), position)
        out["evaluations"] = {k: v for k, v in evaluations.items() if k != "optimizer"}
        if not out["evaluations"]:
            del out["evaluations"]
    block = out.get("optimizer")
    axes = block.get("axes") if isinstance(block, dict) else None
    numeric = axes.get("numeric") if isinstance(axes, dict) else None
    if not isinstance(numeric, list):
        return out
    kept: list[Any] = []
    where = ("optimizer", "axes", "numeric")
    before = dict(doc.positions)
    for index, axis in enumerate(numeric):
        written = axis.get("path") if isinstance(axis, dict) else None
        first = str(written).split(".", 1)[0].split("[", 1)[0] if written else ""
        if first not in ABSENT:
            # the axes after a dropped one move up: their lines move with them
            for at, position in before.items():
                if at[:4] == (*where, index):
                    doc.positions[(*where, len(kept), *at[4:])] = position
            kept.append(axis)
            continue
        collector.add(
            doc.diagnostic(
                (*where, index, "path"),
                ("" if strict else "ignored: ")
                + f"the axis `{written}` tunes nothing: {ABSENT[first]}",
                hint="remove this axis",
                severity=Severity.ERROR if strict else Severity.WARNING,
            )
        )
    assert isinstance(block, dict) and isinstance(axes, dict)
    out["optimizer"] = {**block, "axes": {**axes, "numeric": kept}}
    return out
