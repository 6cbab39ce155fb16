"""YAML front matter at the top of an instructions file (`version`, `tags`,
`description`, `author` between `---` lines), as the shipped HoloDeck versions prompts.

It describes the prompt, so it is taken off before the model sees the text; the version
is recorded with every test run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from holodeck.spec.diagnostics import Collector, Diagnostic, Severity, SpecError
from holodeck.spec.models.prompt_version import PromptVersion
from holodeck.spec.yaml.source import parse_yaml

_FENCE = "---"


class _FrontMatter(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: str | None = None
    tags: list[str] = Field(default_factory=list)
    description: str | None = None
    author: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        """`version: 1.2` is read by YAML as a number; it is meant as a label."""
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return str(value) if number else value

    @field_validator("tags", mode="before")
    @classmethod
    def _one_tag(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """(front matter or None, the text after it, lines before the body)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != _FENCE:
        return None, text, 0
    for index in range(1, len(lines)):
        if lines[index].strip() == _FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 1
    return None, text, 0  # no closing fence: a rule line, not front matter


def instructions_with_version(
    text: str, file: Path | None, collector: Collector, *, strict: bool = False
) -> tuple[str, PromptVersion | None]:
    """The instructions without their front matter, and their version. Problems in the
    front matter go to `collector`, located in `file`; `strict` makes warnings errors."""
    front, body, _ = split_front_matter(text) if file is not None else (None, text, 0)
    if front is None:
        return text, PromptVersion.of(text)
    try:
        doc = parse_yaml(front, file)
    except SpecError as exc:
        collector.extend(_below_fence(d) for d in exc.diagnostics)
        return body, None
    data = doc.data if doc.data is not None else {}
    if not isinstance(data, dict):
        collector.add(
            Diagnostic(
                "the front matter of an instructions file must be a mapping",
                file=file,
                line=2,
                hint="write `version: 1.0.0` (and `tags`, `description`, `author`) between "
                "the `---` lines",
            )
        )
        return body, None
    try:
        found = _FrontMatter.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        key = str(first["loc"][0]) if first["loc"] else ""
        pos = doc.position((key,))
        collector.add(
            Diagnostic(
                f"front matter `{key}`: {first['msg']}",
                file=file,
                line=pos.line + 1 if pos else 2,
                hint="`version` is text, `tags` a list of text, `description` and `author` text",
            )
        )
        return body, None
    for key in sorted(found.model_extra or {}):
        pos = doc.position((key,))
        collector.add(
            Diagnostic(
                f"{'' if strict else 'ignored: '}front matter `{key}` is not recorded "
                "(version, tags, description and author are)",
                file=file,
                line=pos.line + 1 if pos else 2,
                severity=Severity.ERROR if strict else Severity.WARNING,
                hint="remove it, or put what it says in `description`",
            )
        )
    return body, PromptVersion.of(
        body,
        version=found.version,
        tags=tuple(found.tags),
        description=found.description,
        author=found.author,
    )


def _below_fence(diagnostic: Diagnostic) -> Diagnostic:
    """The front matter starts on line 2 of the file, after the `---` line."""
    if diagnostic.line is None:
        return diagnostic
    return dataclasses.replace(diagnostic, line=diagnostic.line + 1)
