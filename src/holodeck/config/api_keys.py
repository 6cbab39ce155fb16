"""`holodeck validate`'s check that the agent's model can authenticate: a provider that
needs an API key gets one from the definition, the environment (.env included) or a
config.yaml entry; otherwise the first run would fail, so validate says which variable
to set before then."""

from __future__ import annotations

from collections.abc import Mapping

from holodeck.config.credentials import (
    HOSTED_KEY_VARS,
    UnknownProviderError,
    key_variable,
    resolve_model,
)
from holodeck.spec.diagnostics import Diagnostic, Severity, SpecError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.model_settings import ProviderType
from holodeck.spec.models.settings import Settings
from holodeck.spec.yaml.source import read_yaml

# Providers that run without a key: the offline model, a local server, an endpoint of
# one's own, and Vertex AI (Application Default Credentials). OpenAI needs one unless an
# endpoint is given (a local server).
_KEYLESS = {
    ProviderType.TEST,
    ProviderType.OLLAMA,
    ProviderType.OPENAI_COMPATIBLE,
    ProviderType.VERTEX_AI,
}
_KEYED = {
    ProviderType.OPENAI,
    ProviderType.AZURE_OPENAI,
    ProviderType.ANTHROPIC,
    ProviderType.GOOGLE,
    *HOSTED_KEY_VARS,
}
# where the model is written, in the order looked for (agent.yaml, then an image's)
_MODEL_FIELDS = (("model",), ("executor", "model"), ("llm", "model"), ("executor",))


def missing_key(
    spec: AgentSpec, settings: Settings, env: Mapping[str, str], *, strict: bool
) -> Diagnostic | None:
    """A warning (an error with `strict`) when the agent's model needs an API key that
    nothing gives, naming the variable to set; None otherwise."""
    model = spec.model
    if model is None:
        return None
    claude = spec.claude
    if claude is not None and claude.auth_provider not in (None, "api_key"):
        return None  # the harness authenticates with a token or a cloud's credentials
    try:
        resolved = resolve_model(model, settings, env)
    except UnknownProviderError:  # reported by the loader, at its line
        return None
    kind = resolved.provider
    if resolved.api_key is not None or kind in _KEYLESS or kind not in _KEYED:
        return None
    if kind is ProviderType.OPENAI and resolved.endpoint is not None:
        return None  # a server of one's own may take no key
    variable = key_variable(kind) or "the provider's key variable"
    where = _position(spec)
    return Diagnostic(
        f"no API key for `{model.provider}`: the model `{model.provider}/{model.name}` "
        "needs one, and neither the definition, the environment (or .env) nor "
        "config.yaml gives it",
        file=spec.source,
        line=where[1] if where else None,
        column=where[2] if where else None,
        path=where[0] if where else (),
        hint=f"set {variable} (in the environment or the .env beside the agent), or write "
        f"`api_key: ${{{variable}}}` in the model's block; `--model test` runs offline "
        "without one",
        severity=Severity.ERROR if strict else Severity.WARNING,
    )


def _position(spec: AgentSpec) -> tuple[tuple[str, ...], int, int] | None:
    if spec.source is None or not spec.source.is_file():
        return None
    try:
        doc = read_yaml(spec.source)
    except SpecError:
        return None
    for field in _MODEL_FIELDS:
        pos = doc.positions.get(field)
        if pos is not None:
            return field, pos.line, pos.column
    return None
