"""The model an image names (`executor.model`, Omnigent's name for it, or `llm.model`),
its sampling settings and credentials, and its fallbacks, each a known provider's."""

from __future__ import annotations

from typing import Any

from holodeck.spec.diagnostics import FieldPath, did_you_mean
from holodeck.spec.image.executor import ExecutorModel
from holodeck.spec.image.reading import ImageReading
from holodeck.spec.models.model_settings import (
    PROVIDER_ALIASES,
    PROVIDER_TYPES,
    ModelSettings,
    split_model_string,
)


def image_model(image: ImageReading) -> ModelSettings | None:
    """From `executor.model` (Omnigent's name for it) or `llm.model`."""
    llm, executor = image.config.llm, image.executor or ExecutorModel()
    text, where = executor.model, ("executor", "model")
    if llm is not None and text is not None and llm.model != text:
        image.error(
            where,
            f"executor.model `{text}` and llm.model `{llm.model}` disagree",
            "keep `executor.model` only",
        )
        return None
    if text is None and llm is not None:
        text, where = llm.model, ("llm", "model")
    if text is None:
        return None
    effort = executor.reasoning_effort or (llm.reasoning_effort if llm else None)
    if llm is not None and llm.reasoning_effort not in (None, effort):
        image.error(
            ("executor", "reasoning_effort"),
            "executor.reasoning_effort and llm.reasoning_effort disagree",
            "keep `executor.reasoning_effort` only",
        )
    return model_settings(
        image,
        text,
        where,
        executor,
        max_tokens=(llm.max_completion_tokens or llm.max_tokens) if llm else None,
        temperature=llm.temperature if llm else None,
        top_p=llm.top_p if llm else None,
        reasoning_effort=effort,
        fallbacks=_fallbacks(image, llm.fallback_models if llm else []),
        cost=llm.cost if llm else None,
    )


def model_settings(
    image: ImageReading, text: str, where: FieldPath, executor: ExecutorModel, **settings: Any
) -> ModelSettings | None:
    """`provider/model` text, with credentials from the executor's connection or auth."""
    parts = split_model_string(text)
    if parts is None:
        image.error(
            where,
            f"`{text}` is not `provider/model`",
            "e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, google/gemini-2.5-pro, "
            "ollama/llama3.2",
        )
        return None
    provider, name = parts
    if provider not in image.ctx.settings.providers:
        provider = PROVIDER_ALIASES.get(provider, provider)  # `azure/...` is azure_openai
    if image.ctx.settings.provider_type(provider) is None:
        known = [p for p in PROVIDER_TYPES if p != "test"] + list(image.ctx.settings.providers)
        image.error(
            where,
            f"provider `{provider}` is not supported",
            did_you_mean(provider, [*known, *PROVIDER_ALIASES]) or "supported: " + ", ".join(known),
        )
        return None
    if executor.api_key is not None:
        settings["api_key"] = executor.api_key
    if executor.endpoint is not None:
        settings["endpoint"] = executor.endpoint
    if executor.context_window is not None:
        settings["context_window"] = executor.context_window
    return ModelSettings(provider=provider, name=name, **settings)


def _fallbacks(image: ImageReading, texts: list[str]) -> list[str]:
    """`llm.fallback_models`, each a `provider/model` of a known provider."""
    kept = []
    for index, text in enumerate(texts):
        parts = split_model_string(text)
        where = ("llm", "fallback_models", index)
        if parts is None:
            image.error(where, f"`{text}` is not `provider/model`", "e.g. openai/gpt-4o-mini")
            continue
        provider = parts[0]
        if provider not in image.ctx.settings.providers:
            provider = PROVIDER_ALIASES.get(provider, provider)
        if image.ctx.settings.provider_type(provider) is None:
            known = [p for p in PROVIDER_TYPES if p != "test"] + list(image.ctx.settings.providers)
            image.error(
                where,
                f"unknown provider `{parts[0]}` (in `{text}`)",
                did_you_mean(parts[0], known) or "supported: " + ", ".join(known),
            )
            continue
        kept.append(f"{provider}/{parts[1]}")
    return kept
