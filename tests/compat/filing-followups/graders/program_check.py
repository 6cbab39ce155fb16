"""Checks that a turn's arithmetic tool calls follow its `turn_config.turn_program`.

A program is a comma-separated list of steps such as `subtract(78, 83), divide(#0, 464)`;
only the operation names are compared here, in order (a literal program like `78`, a
plain lookup, has no steps and always passes).
"""

from __future__ import annotations

import re

from holodeck.lib.test_runner.code_grader import GraderContext, GraderResult

STEP = re.compile(r"([a-z_]+)\s*\(")
OPERATIONS = {"add", "subtract", "multiply", "divide"}


def follows_program(ctx: GraderContext) -> GraderResult:
    wanted = [
        op for op in STEP.findall(ctx.turn_config.get("turn_program", "")) if op in OPERATIONS
    ]
    made = [call.name for call in ctx.tool_invocations if call.name in OPERATIONS]
    if not wanted:
        return GraderResult(score=1.0, passed=True, reason="a lookup: no arithmetic to check")
    if made == wanted:
        return GraderResult(score=1.0, reason=f"steps {wanted} made in order")
    return GraderResult(
        score=0.0,
        reason=f"turn {ctx.turn_index + 1} of {ctx.test_case_name}: wanted {wanted}, made {made}",
        details={"wanted": wanted, "made": made},
    )
