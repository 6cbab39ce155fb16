"""What `--redact` takes out of a captured case: personal data (e-mail addresses, phone
numbers, card numbers), found as the guardrails find it, and the user's own patterns;
each replaced by its placeholder (`[email]`, `[phone]`, `[card]`, `[redacted]`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from holodeck.errors import ConfigurationError
from holodeck.runtime import find_patterns, find_pii, redact

PII_KINDS = ("email", "phone", "card")
CHOICES = (*PII_KINDS, "pii")  # `pii`: all three


@dataclass(frozen=True)
class Redaction:
    kinds: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()

    @classmethod
    def of(cls, kinds: Iterable[str], patterns: Iterable[str] = ()) -> Redaction:
        chosen: list[str] = []
        for kind in kinds:
            for one in PII_KINDS if kind == "pii" else (kind,):
                if one not in PII_KINDS:
                    raise ConfigurationError(
                        f"--redact {kind}: not a kind of personal data",
                        hint=f"give one of {', '.join(CHOICES)}, or --redact-pattern REGEX",
                    )
                if one not in chosen:
                    chosen.append(one)
        listed = tuple(patterns)
        for pattern in listed:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigurationError(
                    f"--redact-pattern {pattern!r}: not a regular expression ({exc})",
                    hint="write a Python regular expression, e.g. 'ACME-\\d{6}'",
                ) from None
        return cls(tuple(chosen), listed)

    def __bool__(self) -> bool:
        return bool(self.kinds or self.patterns)

    def text(self, text: str) -> str:
        """`text` with what this redaction finds replaced."""
        if self.kinds:
            text = redact(text, find_pii(text, self.kinds))
        if self.patterns:
            text = redact(text, find_patterns(text, self.patterns))
        return text
