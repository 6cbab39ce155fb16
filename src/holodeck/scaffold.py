"""Create a new agent project (agent.yaml) or agent image from the packaged templates.

Templates are package data under `holodeck/templates/`:

    <template>/...          an agent.yaml project: agent.yaml, instructions/, data/,
                            tools/ and tests/, written as they are
    image/<template>/...    an agent image's own files: config.yaml, AGENTS.md,
                            skills/<skill>/SKILL.md and tests/cases.yaml

An image also receives its template's Python tools (as `tools/python/*.py`) and data
files (as `skills/<skill>/references/*`), so both formats share one copy of each. An
agent.yaml project also receives `agent.schema.json`, the JSON Schema of agent.yaml as
this HoloDeck accepts it, which the first line of its agent.yaml points editors at.

Text is rendered by replacing `{{ key }}` markers. A marker alone on its line may stand
for several lines, each indented like the marker, or for none (the line is dropped).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from holodeck.errors import ConfigurationError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

TEMPLATES = ("conversational", "research", "customer-support")
PROVIDERS = ("openai", "azure_openai", "anthropic", "google", "ollama")
FORMATS = ("agent-yaml", "image")
DEFAULT_TEMPLATE = "conversational"
DEFAULT_PROVIDER = "openai"
DEFAULT_FORMAT = "agent-yaml"

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
NAME_RULE = "letters, digits, '-' and '_', starting with a letter or digit, at most 64"

# The skill of each template's image; the template's data files become its references.
IMAGE_SKILLS = {
    "conversational": "measurement-faq",
    "research": "evidence-review",
    "customer-support": "support-playbook",
}

SCHEMA_FILE = "agent.schema.json"  # beside agent.yaml; its first line names it
_MARKER = re.compile(r"\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}")
_SKIPPED = ("__pycache__", ".DS_Store")


@dataclass(frozen=True)
class ProviderDefaults:
    """What a new agent uses for a provider, and what the user must set up first."""

    model: str
    model_extra: str  # extra lines of agent.yaml's `model:` block (comments included)
    llm_extra: str  # comment lines of an image's `llm:` block
    setup: str  # one sentence: what to do before chatting with the agent


PROVIDER_DEFAULTS: dict[str, ProviderDefaults] = {
    "openai": ProviderDefaults(
        model="gpt-4o-mini",
        model_extra="",
        llm_extra="",
        setup="set OPENAI_API_KEY (or add providers.openai to ~/.holodeck/config.yaml)",
    ),
    "azure_openai": ProviderDefaults(
        model="gpt-4o-mini",
        model_extra=(
            "# On Azure, `name` is your deployment's name. The endpoint comes from\n"
            "# AZURE_OPENAI_ENDPOINT or providers.azure_openai in ~/.holodeck/config.yaml;\n"
            "# set `endpoint` here to pin one resource for everyone."
        ),
        llm_extra=(
            "# On Azure, the model is your deployment's name; the endpoint comes from\n"
            "# AZURE_OPENAI_ENDPOINT or providers.azure_openai in ~/.holodeck/config.yaml."
        ),
        setup="set AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY, and deploy gpt-4o-mini "
        "(or change the model name to your deployment's)",
    ),
    "anthropic": ProviderDefaults(
        model="claude-sonnet-4-5",
        model_extra="",
        llm_extra="",
        setup="set ANTHROPIC_API_KEY (or add providers.anthropic to ~/.holodeck/config.yaml)",
    ),
    "google": ProviderDefaults(
        model="gemini-2.5-flash",
        model_extra="",
        llm_extra="",
        setup="set GEMINI_API_KEY (or GOOGLE_API_KEY, or add providers.google to "
        "~/.holodeck/config.yaml)",
    ),
    "ollama": ProviderDefaults(
        model="llama3.2",
        model_extra=(
            "# A local Ollama server; no API key needed. Run `ollama pull llama3.2` first.\n"
            "endpoint: http://localhost:11434/v1"
        ),
        llm_extra=(
            "# A local Ollama server: run `ollama pull llama3.2`, and set OLLAMA_BASE_URL\n"
            "# (e.g. http://localhost:11434/v1) or providers.ollama in ~/.holodeck/config.yaml."
        ),
        setup="start Ollama and run `ollama pull llama3.2`",
    ),
}


class ScaffoldError(ConfigurationError):
    """The project cannot be created; the message says why, in one line."""


class ProjectExistsError(ScaffoldError):
    """The destination exists and is not empty, and `force` was not given."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(
            f"{root} already exists and is not empty",
            hint="choose another NAME, or pass --force to overwrite the template's files "
            "(your other files are kept)",
        )


def check_name(name: str) -> None:
    """Raise `ScaffoldError` unless `name` is usable as a directory and agent name."""
    if not NAME_PATTERN.fullmatch(name):
        elsewhere = (
            "; to create it elsewhere, pass --dir PARENT" if "/" in name or "\\" in name else ""
        )
        raise ScaffoldError(
            f"invalid agent name {name!r}", hint=f"use {NAME_RULE} characters{elsewhere}"
        )


def create_project(
    name: str,
    destination: str | Path,
    template: str = DEFAULT_TEMPLATE,
    provider: str = DEFAULT_PROVIDER,
    fmt: str = DEFAULT_FORMAT,
    force: bool = False,
) -> list[Path]:
    """Write a new agent named `name` into the directory `destination`.

    `destination` is the project directory itself (created with its parents). It must
    not exist or be empty unless `force` is true; then the template's files are
    overwritten and every other file is left alone. Returns the files written, sorted.
    Raises `ScaffoldError` (`ProjectExistsError` for a non-empty destination).
    """
    check_name(name)
    _check_choice("template", template, TEMPLATES)
    _check_choice("provider", provider, PROVIDERS)
    _check_choice("format", fmt, FORMATS)
    root = Path(destination)
    if root.exists() or root.is_symlink():
        if not root.is_dir():
            raise ScaffoldError(f"{root} exists and is not a directory")
        if not force and any(root.iterdir()):
            raise ProjectExistsError(root)
        _check_format_mix(root, fmt)
    plan = sorted(_plan(template, fmt), key=lambda item: item[0].parts)
    values = _values(name, provider)
    rendered = [
        (root.joinpath(*relative.parts), render(source.read_text("utf-8"), values))
        for relative, source in plan
    ]
    if fmt == "agent-yaml":
        rendered.append((root / SCHEMA_FILE, schema_text()))
        rendered.sort(key=lambda item: item[0].relative_to(root).parts)
    for target, _ in rendered:
        _check_target(root, target)
    written: list[Path] = []
    for target, text in rendered:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
        written.append(target)
    return written


def schema_text() -> str:
    """The JSON Schema of agent.yaml, as `holodeck schema` writes it."""
    # built from the pydantic models: `holodeck init --help` loads none of pydantic
    from holodeck.spec.json_schema import agent_yaml_schema

    return json.dumps(agent_yaml_schema(), indent=2) + "\n"


def render(text: str, values: Mapping[str, str]) -> str:
    """Replace `{{ key }}` markers of known keys; unknown markers are left as written."""
    lines: list[str] = []
    for line in text.splitlines(keepends=True):
        whole = _MARKER.fullmatch(line.strip())
        if whole and whole.group(1) in values:
            indent = line[: len(line) - len(line.lstrip())]
            for part in values[whole.group(1)].splitlines():
                lines.append(f"{indent}{part}\n" if part else "\n")
            continue
        lines.append(_MARKER.sub(lambda match: _inline(match, values), line))
    return "".join(lines)


def _inline(match: re.Match[str], values: Mapping[str, str]) -> str:
    key = match.group(1)
    if key not in values:
        return match.group(0)
    value = values[key]
    if "\n" in value:
        raise ValueError(f"placeholder {{{{ {key} }}}} spans lines; put it alone on its line")
    return value


def _values(name: str, provider: str) -> dict[str, str]:
    defaults = PROVIDER_DEFAULTS[provider]
    return {
        "name": name,
        "provider": provider,
        "model": defaults.model,
        "model_extra": defaults.model_extra,
        "llm_extra": defaults.llm_extra,
    }


def _check_choice(what: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ScaffoldError(f"unknown {what} {value!r}; choose one of: {', '.join(choices)}")


def _check_format_mix(root: Path, fmt: str) -> None:
    """Refuse to write one format over the other: the two would shadow each other."""
    if fmt == "image" and (root / "agent.yaml").is_file():
        raise ScaffoldError(f"{root} holds an agent.yaml project; an image needs its own directory")
    config = root / "config.yaml"
    if fmt == "agent-yaml" and config.is_file():
        try:
            is_image = "spec_version" in config.read_text(encoding="utf-8", errors="replace")
        except OSError:
            is_image = False
        if is_image:
            raise ScaffoldError(
                f"{root} holds an agent image (config.yaml); an agent.yaml project needs its "
                "own directory"
            )


def _check_target(root: Path, target: Path) -> None:
    """Refuse, before anything is written, paths blocked by the user's own files.

    Symbolic links are refused too, so nothing is ever written outside `root`.
    """
    if target.is_symlink():
        raise ScaffoldError(f"cannot write {target}: it is a symbolic link")
    if target.is_dir():
        raise ScaffoldError(f"cannot write {target}: a directory of that name exists")
    for parent in target.relative_to(root).parents:
        directory = root / parent
        if directory == root:
            continue
        if directory.is_symlink():
            raise ScaffoldError(f"cannot write into {directory}: it is a symbolic link")
        if directory.exists() and not directory.is_dir():
            raise ScaffoldError(f"cannot create directory {directory}: a file of that name exists")


def _plan(template: str, fmt: str) -> Iterator[tuple[PurePosixPath, Traversable]]:
    """(path in the new project, template file) for every file to write."""

    base = files("holodeck").joinpath("templates")
    source = base.joinpath(template)
    if fmt == "agent-yaml":
        yield from _walk(source, PurePosixPath())
        return
    yield from _walk(base.joinpath("image", template), PurePosixPath())
    yield from _walk(source.joinpath("tools"), PurePosixPath("tools", "python"))
    references = PurePosixPath("skills", IMAGE_SKILLS[template], "references")
    yield from _walk(source.joinpath("data"), references)


def _walk(
    directory: Traversable, prefix: PurePosixPath
) -> Iterator[tuple[PurePosixPath, Traversable]]:
    for entry in directory.iterdir():
        if entry.name in _SKIPPED or entry.name.endswith(".pyc"):
            continue
        if entry.is_dir():
            yield from _walk(entry, prefix / entry.name)
        elif entry.is_file():
            yield prefix / entry.name, entry
