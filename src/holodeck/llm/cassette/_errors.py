"""Errors of cassettes: one that cannot be used, and a request it holds no answer for."""

from __future__ import annotations

from pathlib import Path

from holodeck.errors import ConfigurationError
from holodeck.llm.errors import ProviderError


class CassetteError(ConfigurationError):
    """A cassette cannot be chosen, read or written; the message names the file."""


class CassetteMiss(ProviderError):
    """A replayed run made a request the cassette holds no answer for."""

    def __init__(self, provider: str, model: str | None, path: Path, request: str) -> None:
        self.path, self.request = path, request
        super().__init__(
            provider,
            model,
            f"no response recorded in {path} for the request ({request})",
            f"Re-record it with --record {path}",
        )
