"""Provider failures as one line a user can act on, naming the provider and model."""

from __future__ import annotations

from holodeck.config.credentials import key_variable
from holodeck.errors import ModelError
from holodeck.spec.models.model_settings import ProviderType


class ProviderError(ModelError):
    """A model call failed in a way the user can fix (key, model name, quota, network).

    `str()` is one line, `provider/model: problem. Fix`; `hint` is the fix alone.
    `rate_limited`: the provider refused for rate or quota (a later try may pass).
    `exit_code`: EXIT_CONFIG for what the user's settings lack (no key, no endpoint), found
    before any request is made."""

    def __init__(
        self,
        provider: str,
        model: str | None,
        problem: str,
        fix: str,
        *,
        rate_limited: bool = False,
        exit_code: int | None = None,
    ) -> None:
        self.provider, self.model, self.problem, self.fix = provider, model, problem, fix
        self.rate_limited = rate_limited
        name = f"{provider}/{model}" if model else provider
        super().__init__(f"{name}: {problem}", hint=fix, exit_code=exit_code)

    def __str__(self) -> str:
        return f"{self.message}. {self.fix}"  # the fix is a sentence of its own


def key_variable_for(provider: str) -> str | None:
    """The key variable of a provider name or alias (`gemini` -> GOOGLE_API_KEY)."""
    kind = ProviderType.lookup(provider)
    return key_variable(kind) if kind is not None else None


def explain(exc: BaseException, provider: str, model: str | None) -> ProviderError | None:
    """The user-facing error for `exc`, or None when it is not a provider failure."""
    from pydantic_ai import exceptions as e

    key_var = key_variable_for(provider) or "the provider's API key"
    where = f"set {key_var}, `model.api_key` in agent.yaml, or providers.{provider}.api_key"
    if isinstance(exc, e.ModelAuthenticationError):
        return ProviderError(
            provider, model, "the API key was refused (401/403)", f"Check it: {where}"
        )
    if isinstance(exc, e.ModelNotFoundError):
        return ProviderError(
            provider,
            model,
            "the model does not exist or this key cannot use it (404)",
            "Check `model.name` (on Azure: the deployment name)",
        )
    if isinstance(exc, e.ModelRateLimitError | e.ModelQuotaExceededError):
        return ProviderError(
            provider,
            model,
            "rate limited (429) after retries",
            "Wait and try again, lower --concurrency, or raise the quota",
            rate_limited=True,
        )
    if isinstance(exc, e.ModelTimeoutError):
        return ProviderError(
            provider,
            model,
            "the request timed out",
            "Raise `execution.model_timeout` in agent.yaml or check the endpoint is reachable",
        )
    if isinstance(exc, e.ModelConnectionError):
        return ProviderError(
            provider,
            model,
            f"cannot reach the endpoint ({_short(exc)})",
            "Check `model.endpoint` and that the server is running",
        )
    if isinstance(exc, e.ModelContextWindowExceededError):
        return ProviderError(
            provider,
            model,
            "the conversation no longer fits the model's context window",
            "Start a new conversation or lower memory.max_messages",
        )
    if isinstance(exc, e.ModelHTTPError):
        return ProviderError(
            provider,
            model,
            f"the provider answered HTTP {exc.status_code}: {_body_message(exc.body, exc)}",
            "Check the endpoint and model settings",
        )
    if isinstance(exc, e.ModelAPIError):
        return ProviderError(provider, model, _short(exc), "Check the endpoint and model settings")
    if type(exc).__module__.startswith("google.auth"):
        # Vertex AI looks for Application Default Credentials at the first request;
        # matched by module so that google.auth is never imported here
        return ProviderError(
            provider,
            model,
            f"no usable Google Cloud credentials ({type(exc).__name__})",
            "Run `gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS "
            "to a service account file, or set GOOGLE_API_KEY for Vertex AI express mode",
        )
    return None


def _body_message(body: object, exc: BaseException) -> str:
    """The provider's own explanation from an error body (OpenAI and Anthropic shapes)."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _short(error["message"])
        if isinstance(body.get("message"), str):
            return _short(body["message"])
    if isinstance(body, str) and body.strip():
        return _short(body)
    return _short(exc)


def _short(exc: BaseException | str) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 160 else text[:157] + "..."
