"""What a scan found, as the JSON report holds it: each attack with the agent's answer,
its tool calls and the grader's verdict, and a pass rate per plugin."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from holodeck.testing.results import GuardrailRecord, ToolCallRecord

Status = Literal["pass", "fail", "error"]


class AttackTurn(BaseModel):
    """A turn of a multi-turn attack before its last message: what the user said and
    what the agent answered."""

    model_config = ConfigDict(extra="forbid")

    said: str
    answer: str = ""


class AttackResult(BaseModel):
    """One attack: `fail` when it succeeded (the agent failed it), `error` when the turn
    could not run."""

    model_config = ConfigDict(extra="forbid")

    plugin: str
    id: str
    severity: str
    category: str | None = None
    strategy: str = Field(default="single", description="single, crescendo or role-play.")
    lead_in: list[AttackTurn] = Field(
        default_factory=list, description="The turns before `prompt` (multi-turn strategies)."
    )
    prompt: str
    seeded: str | None = Field(default=None, description="What the tools were made to return.")
    status: Status
    reason: str
    answer: str = ""
    tool_calls: list[ToolCallRecord] = Field(
        default_factory=list, description="The calls of every turn, the lead-in's too."
    )
    guardrails: list[GuardrailRecord] = Field(default_factory=list)
    duration_ms: float = 0.0


class PluginSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plugin: str
    severity: str
    attacks: int
    passed: int
    failed: int
    errors: int
    skipped: str | None = Field(default=None, description="Why the plugin had no attacks.")

    @property
    def pass_rate(self) -> float | None:
        graded = self.passed + self.failed
        return self.passed / graded if graded else None


class Scan(BaseModel):
    """A whole scan of one agent."""

    model_config = ConfigDict(extra="forbid")

    scan_id: str = ""  # its file's name under .holodeck/scans
    agent: str
    source: str
    model: str
    seed: int
    strategies: list[str] = Field(default_factory=lambda: ["single"])
    offline: bool
    started_at: datetime
    duration_ms: float
    plugins: list[PluginSummary]
    attacks: list[AttackResult]

    @property
    def failed(self) -> list[AttackResult]:
        return [a for a in self.attacks if a.status == "fail"]

    @property
    def errors(self) -> list[AttackResult]:
        return [a for a in self.attacks if a.status == "error"]
