"""Which kinds of input a model cannot take, as far as can be told before calling it, and
what `holodeck validate` says about an agent's declared modalities.

pydantic-ai's profile of the model says so where the provider's profile or the model
class turns a kind of file off (Anthropic's adapter sends no audio or video, OpenAI's
chat models take audio only in their `-audio` variants); its `True` means only that
nothing says otherwise. For well-known text-only models it says nothing about, a short
table of our own answers. Anything else is unknown, and unknown is not a refusal.

    refused = refused_inputs(spec.model, settings, env, ("image", "file"))
    # {"image": "openai/gpt-3.5-turbo is a text-only model"}

A declared input the model cannot take is a warning (an error with `--strict`): the
runtime sends what it is given and the provider refuses it. A declared output the
runtime cannot produce is an error (`PRODUCED_OUTPUT`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from contextlib import suppress
from pathlib import Path

from pydantic import SecretStr

from holodeck.config.loader import ARCHIVE_SUFFIXES
from holodeck.config.settings import holodeck_home
from holodeck.errors import HoloDeckError
from holodeck.llm.providers import build_model
from holodeck.llm.tool_context import ToolContext
from holodeck.spec.archives.locations import cache_entry, in_archive
from holodeck.spec.diagnostics import Diagnostic, FieldPath, Severity
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.model_settings import ModelSettings
from holodeck.spec.models.settings import Settings
from holodeck.spec.yaml.document import YamlDocument
from holodeck.spec.yaml.source import read_yaml

# what the runtime can answer with: a model's text (images and audio it cannot make yet)
PRODUCED_OUTPUT = frozenset({"text"})

# a modality -> the profile flag that says whether the model takes it
PROFILE_FLAGS: dict[str, str] = {
    "image": "supports_image_input",
    "audio": "supports_audio_file_input",
    "video": "supports_video_input",
    "file": "supports_document_input",
}
_WHAT = {"image": "images", "audio": "audio", "video": "video", "file": "documents"}
# Kinds no profile turns off for any provider HoloDeck builds (tests/runtime/test_modalities.py
# holds that true): asking would load pydantic-ai and a provider SDK (seconds of
# `holodeck validate`) to learn nothing, so the table alone answers for them.
PROFILE_SILENT = frozenset({"image", "file"})

# Text-only models pydantic-ai's profiles do not single out: name prefixes (the name after
# any `org/`), from the providers' own model pages.
TEXT_ONLY: tuple[str, ...] = (
    "gpt-3.5-turbo",
    "gpt-4-0314",
    "gpt-4-0613",
    "gpt-4-32k",
    "o1-mini",
    "o1-preview",
    "o3-mini",
    "deepseek-chat",
    "deepseek-reasoner",
    "codestral",
)
_TEXT_ONLY_EXACT = frozenset({"gpt-4"})

# building a model makes a client but sends nothing: the key only has to be there
_PLACEHOLDER_KEY = SecretStr("placeholder-for-the-profile")


def text_only(name: str) -> bool:
    """`name` is a model our table knows takes nothing but text."""
    bare = name.rsplit("/", 1)[-1].lower()
    return bare in _TEXT_ONLY_EXACT or bare.startswith(TEXT_ONLY)


def refused_inputs(
    model: ModelSettings,
    settings: Settings,
    env: Mapping[str, str],
    modalities: Collection[str],
) -> dict[str, str]:
    """Each of `modalities` (beyond text) the model is known not to take, with why."""
    wanted = [m for m in modalities if m in PROFILE_FLAGS]
    if not wanted:
        return {}
    named = f"{model.provider}/{model.name}" if model.name else model.provider
    asked = any(m not in PROFILE_SILENT for m in wanted)
    profile = _profile(model, settings, env) if asked else {}
    refused: dict[str, str] = {}
    for modality in wanted:
        if profile.get(PROFILE_FLAGS[modality]) is False:
            refused[modality] = (
                f"pydantic-ai's profile of {named} says it takes no {_WHAT[modality]}"
            )
        elif model.name and text_only(model.name):
            refused[modality] = f"{named} is a text-only model"
    return refused


def _profile(model: ModelSettings, settings: Settings, env: Mapping[str, str]) -> dict[str, object]:
    """The profile of the model as the runtime would build it; empty when it cannot be
    built here (no endpoint set, a provider's SDK missing): nothing is known then."""
    keyed = model if model.api_key else model.model_copy(update={"api_key": _PLACEHOLDER_KEY})
    try:
        built = build_model(keyed, settings, env)
    except Exception:  # any reason it cannot be built here leaves it unknown
        return {}
    return dict(built.model.profile)


def modality_diagnostics(
    spec: AgentSpec, strict: bool, context: Callable[[], ToolContext], given: Path
) -> list[Diagnostic]:
    """What is wrong with the modalities `spec` and its sub-agents declare, each at its
    line: outputs the runtime cannot produce (errors) and inputs the model cannot take
    (warnings; errors when `strict`). `context` gives the environment and settings the
    model is built with, asked for only when an agent declares more than text input.
    `given` is the path the definition was loaded from: an archive's problems are
    located inside it (`image.tar.gz!/config.yaml:5`), not in its cache."""
    found: list[Diagnostic] = []
    for agent in _agents(spec):
        interaction = agent.interaction
        outputs = [
            (i, m) for i, m in enumerate(interaction.output_modalities) if m not in PRODUCED_OUTPUT
        ]
        refused: dict[str, str] = {}
        if agent.model is not None and set(interaction.input_modalities) - {"text"}:
            ctx = context()
            refused = refused_inputs(
                agent.model, ctx.settings, ctx.env, interaction.input_modalities
            )
        if not outputs and not refused:
            continue
        doc = _document(agent)
        for index, modality in outputs:
            found.append(
                _at(
                    doc,
                    agent,
                    ("interaction", "modalities", "output", index),
                    f"{agent.name} cannot answer with {modality}: this runtime produces "
                    f"{', '.join(sorted(PRODUCED_OUTPUT))} only",
                    "remove it from interaction.modalities.output: write `output: [text]`",
                    Severity.ERROR,
                )
            )
        for index, declared in enumerate(interaction.input_modalities):
            why = refused.get(declared)
            if why is None:
                continue
            found.append(
                _at(
                    doc,
                    agent,
                    ("interaction", "modalities", "input", index),
                    f"{agent.name} declares {declared} input, but {why}",
                    f"choose a model that takes {_WHAT[declared]}, or remove `{declared}` "
                    "from interaction.modalities.input",
                    Severity.ERROR if strict else Severity.WARNING,
                )
            )
    if found and given.name.endswith(ARCHIVE_SUFFIXES) and given.is_file():
        cache = holodeck_home() / "cache" / "images"
        with suppress(ValueError):  # not unpacked in the cache: its files are where they say
            found = in_archive(found, given, cache_entry(spec.root, cache))
    return found


def _agents(spec: AgentSpec) -> list[AgentSpec]:
    """`spec` and every sub-agent below it, each once."""
    seen: dict[int, AgentSpec] = {}
    stack = [spec]
    while stack:
        agent = stack.pop()
        if id(agent) not in seen:
            seen[id(agent)] = agent
            stack.extend(agent.subagents.values())
    return list(seen.values())


def _document(agent: AgentSpec) -> YamlDocument | None:
    """The definition's file again, for the lines of its fields (None: unreadable now)."""
    try:
        return read_yaml(agent.source)
    except (HoloDeckError, OSError):
        return None


def _at(
    doc: YamlDocument | None,
    agent: AgentSpec,
    path: FieldPath,
    message: str,
    hint: str,
    severity: Severity,
) -> Diagnostic:
    if doc is None:
        return Diagnostic(message, file=agent.source, path=path, hint=hint, severity=severity)
    return doc.diagnostic(path, message, hint=hint, severity=severity)
