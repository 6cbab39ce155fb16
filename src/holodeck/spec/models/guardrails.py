"""`guardrails:`: checks on what the model is sent before it sees it (`input`: the
request, and with `on: [tool_result]` what tools return) and on the answer before the
user sees it (`output`). Each check is one kind (`block_patterns`,
`block_keywords`, `pii`, `max_length` or `judge`) and an `action`: `block` ends the turn
with `message`; `redact` replaces what matched and the turn goes on."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from holodeck.spec.models.base import NonEmpty, Strict
from holodeck.spec.models.model_settings import ModelSettings

KINDS = ("block_patterns", "block_keywords", "pii", "max_length", "judge")
REDACTABLE = ("block_patterns", "block_keywords", "pii")
PiiKind = Literal["email", "phone", "card"]
# what a check runs on: everything sent to the model from outside it (`request`: the
# question, the history a client replays, system messages, attachments' text, context),
# what a tool returned (`tool_result`), or the answer (`response`, output checks)
Phase = Literal["request", "tool_result", "response"]


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


Pattern = Annotated[NonEmpty, AfterValidator(_compiles)]


class JudgeCheck(Strict):
    """A model decides whether the text is allowed under `criteria`."""

    criteria: NonEmpty = Field(
        description="The rule the text must keep, in your words, e.g. 'No medical advice.'"
    )
    model: ModelSettings | None = Field(
        default=None, description="The judge's model; default: the agent's (`--model` too)."
    )


class GuardrailCheck(Strict):
    """One check: exactly one kind, and what to do when it matches."""

    name: NonEmpty | None = Field(
        default=None, description="Named in events and logs; default `input.0`, `output.1`, ..."
    )
    block_patterns: list[Pattern] | None = Field(
        default=None, description="Python regular expressions; any match is a hit."
    )
    block_keywords: list[NonEmpty] | None = Field(
        default=None, description="Words or phrases, matched whole and case-insensitively."
    )
    pii: list[PiiKind] | None = Field(
        default=None,
        description="Which personal data to find: email, phone, card (Luhn-valid numbers).",
    )
    max_length: Annotated[int, Field(gt=0)] | None = Field(
        default=None, description="Most characters the text may have."
    )
    judge: JudgeCheck | None = None
    action: Literal["block", "redact"] = Field(
        default="block",
        description="block: end the turn with `message`; redact (patterns, keywords, pii): "
        "replace each match and go on.",
    )
    message: NonEmpty | None = Field(
        default=None, description="What the user is told when this check blocks."
    )
    on: Annotated[list[Phase], Field(min_length=1)] | None = Field(
        default=None,
        description="What an input check runs on: `request` (default: every text the model "
        "is sent from outside it) and/or `tool_result` (what tools return); output checks "
        "run on the `response`.",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> GuardrailCheck:
        given = [k for k in KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            listed = ", ".join(f"`{k}`" for k in KINDS)
            raise ValueError(
                f"a check has exactly one of {listed}"
                + (f"; this one has {', '.join(given)}" if given else "")
            )
        if self.action == "redact" and given[0] not in REDACTABLE:
            raise ValueError(
                f"`{given[0]}` cannot redact (only block_patterns, block_keywords and pii "
                "can): use `action: block`"
            )
        if self.action == "redact" and self.message is not None:
            raise ValueError("`message` is shown only when a check blocks: remove it")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in KINDS if getattr(self, k) is not None)


class Guardrails(Strict):
    """`guardrails:`: the checks run, in order, on each user message and each answer."""

    input: list[GuardrailCheck] = Field(
        default_factory=list, description="Run on the user's message before the model sees it."
    )
    output: list[GuardrailCheck] = Field(
        default_factory=list,
        description="Run on the answer before the user sees it; its text then arrives whole.",
    )

    @field_validator("input")
    @classmethod
    def _input_phases(cls, checks: list[GuardrailCheck]) -> list[GuardrailCheck]:
        for check in checks:
            if "response" in (check.on or ()):
                raise ValueError(
                    "an input check runs on `request` or `tool_result`; a check of the "
                    "answer (`on: [response]`) goes under `output:`"
                )
        return checks

    @field_validator("output")
    @classmethod
    def _output_phases(cls, checks: list[GuardrailCheck]) -> list[GuardrailCheck]:
        for check in checks:
            if set(check.on or ()) - {"response"}:
                raise ValueError(
                    "an output check runs on the answer (`on: [response]`); a check of "
                    "`request` or `tool_result` goes under `input:`"
                )
        return checks

    def label(self, side: Literal["input", "output"], index: int) -> str:
        check = getattr(self, side)[index]
        return check.name or f"{side}.{index}"


def overlay_guardrails(base: Guardrails | None, top: Guardrails | None) -> Guardrails | None:
    """agent.yaml's checks over config.yaml's, side by side: a side (`input`, `output`)
    the agent gives replaces the defaults' whole, an empty list included."""
    if base is None or top is None:
        return top or base
    sides = {
        side: getattr(top if side in top.model_fields_set else base, side)
        for side in ("input", "output")
    }
    return Guardrails.model_validate(sides)
