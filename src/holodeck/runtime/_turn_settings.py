"""`TurnSettings`: what one turn asks of the model beyond the agent's own settings, such
as a client's temperature or the JSON Schema its answer must fit (the OpenAI routes pass
a request's). Unset fields leave the agent's definition in force; sub-agents keep theirs.

    >>> from holodeck.runtime import TurnSettings
    >>> TurnSettings(temperature=0.1, stop=("END",)).model_settings()
    {'temperature': 0.1, 'stop_sequences': ['END']}

A setting the agent's model cannot take is refused (`refused`), never dropped."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.wrapper import WrapperModel

from holodeck.errors import InputRefused
from holodeck.runtime._output_check import schema_output
from holodeck.runtime.harness._model import ClaudeHarnessModel

if TYPE_CHECKING:
    from pydantic_ai.settings import ModelSettings

    from holodeck.runtime._agent import Agent

# TurnSettings field -> pydantic-ai's ModelSettings key
_MODEL_KEYS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "stop": "stop_sequences",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "parallel_tool_calls": "parallel_tool_calls",
    "tool_choice": "tool_choice",
}


@dataclass(frozen=True)
class TurnSettings:
    """Model settings and the answer's shape for one turn (None: the agent's own).

    `output`: `"text"` for free text, `"json"` for any JSON object, or a JSON Schema the
    answer must validate against (an answer that does not goes back to the model).
    `tool_choice`: `"none"` offers the model no tools this turn."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    parallel_tool_calls: bool | None = None
    tool_choice: Literal["auto", "none"] | None = None
    output: Literal["text", "json"] | dict[str, Any] | None = None
    output_name: str = "answer"  # the schema's name, as the model is shown it

    def asked(self) -> list[str]:
        """The model settings this turn sets, by field name."""
        return [f.name for f in fields(self) if f.name in _MODEL_KEYS and self._set(f.name)]

    def _set(self, name: str) -> bool:
        value = getattr(self, name)
        return value is not None and value != ()

    def model_settings(self) -> ModelSettings | None:
        """The run's model settings (pydantic-ai merges them over the agent's)."""
        settings: dict[str, Any] = {}
        for name in self.asked():
            value = getattr(self, name)
            settings[_MODEL_KEYS[name]] = list(value) if isinstance(value, tuple) else value
        return settings or None  # type: ignore[return-value]

    def output_type(self) -> Any:
        """The run's output type: None keeps the agent's."""
        if self.output is None:
            return None
        if self.output == "text":
            return str
        schema = {"type": "object"} if self.output == "json" else self.output
        return schema_output(schema, self.output_name)

    @property
    def schema(self) -> dict[str, Any] | None:
        """The JSON Schema the turn's answer must fit, when it asks for one."""
        if isinstance(self.output, dict):
            return self.output
        return {"type": "object"} if self.output == "json" else None

    def refused(self, agent: Agent) -> str | None:
        """The first setting `agent`'s model cannot take (a field name), or None."""
        model = agent.loop_model
        if _runs_its_own_loop(model):
            asked = self.asked() + (["output"] if self.output is not None else [])
            return asked[0] if asked else None
        ignored = _ignored(model)
        for name in self.asked():
            if name == "parallel_tool_calls" and self.parallel_tool_calls:
                continue  # asking for what every model does: nothing to refuse
            if _MODEL_KEYS[name] in ignored:
                return name
        return None

    def check(self, agent: Agent) -> None:
        """Raise `InputRefused` naming a setting `agent`'s model cannot take."""
        name = self.refused(agent)
        if name is not None:
            raise InputRefused(
                f"{agent.spec.name}: its model ({agent.model.provider}) cannot take `{name}`",
                hint=f"leave `{name}` unset for this agent",
            )


def _ignored(model: Model) -> frozenset[str]:
    """The settings `model` does not send (a fallback chain: any of its models)."""
    if isinstance(model, WrapperModel):
        return _ignored(model.wrapped)
    if isinstance(model, FallbackModel):
        return frozenset().union(*(_ignored(m) for m in model.models))
    # the instance's own list: an OpenAI model adds those its profile cannot take
    return model._unsupported_settings()


def _runs_its_own_loop(model: Model) -> bool:
    """A harness (the Claude Agent SDK's CLI) samples as its CLI does: nothing to set."""
    while isinstance(model, WrapperModel):
        model = model.wrapped
    return isinstance(model, ClaudeHarnessModel)
