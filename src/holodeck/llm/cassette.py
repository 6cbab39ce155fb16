"""Cassettes: every model exchange of a run recorded to a YAML file, or replayed from one.

A cassette sits between the runtime and each model it uses (the agent's, prompt tools',
sub-agents'), so one file holds the whole run. Recording passes requests through and
keeps the answers; replaying answers from the file and never calls a model, so a
replayed run is offline and deterministic.

Each interaction stores:

- `key`: a hash of what decides the answer — the messages (without timestamps, run
  ids, tool-call ids or provider details), the tool definitions, the output schema and
  the sampling settings. API keys, headers and timeouts never take part;
- `model`: `provider/name` of the model asked; a request is matched on the model and the
  key. When the run uses a model the cassette never saw (a run replayed with another
  `--model`), the key alone decides;
- `request`: a readable summary (last user message, what the request follows, tools);
- `response`: the full `ModelResponse`, as pydantic-ai serialises it.

Identical requests (a test run with `--repeat`) get their answers in recording order;
once those run out, the last one is reused. Strings equal to (or, when long enough,
containing) the value of an environment variable named `*_KEY`, `*_TOKEN` or `*_SECRET`
are redacted before the file is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    RetryPromptPart,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import (
    CompletedStreamedResponse,
    Model,
    ModelRequestParameters,
    StreamedResponse,
)
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings as SamplingSettings
from pydantic_ai.tools import RunContext, ToolDefinition

from holodeck.llm.errors import ProviderError
from holodeck.llm.providers import BuiltModel, build_model

if TYPE_CHECKING:
    from holodeck.config.settings import Settings
    from holodeck.spec.model_settings import ModelSettings
    from holodeck.spec.settings_models import ExecutionSettings

VERSION = 1
RECORD_VARIABLE = "HOLODECK_RECORD"
REPLAY_VARIABLE = "HOLODECK_REPLAY"
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
# Shorter secret values are redacted only where a whole string equals them: replacing
# them inside text would mangle ordinary words.
MIN_EMBEDDED_SECRET = 8
HEADER = (
    "# HoloDeck cassette: model exchanges recorded with --record, replayed offline with\n"
    "# --replay. `key` hashes the request; a request that changes no longer matches.\n"
)

# Settings that change how a request travels, not what the model answers.
_TRANSPORT_SETTINGS = frozenset(
    {"timeout", "request_timeout", "first_event_timeout", "max_retries", "extra_headers"}
)
# Message fields that differ between two runs making the same request.
_VOLATILE_PART_FIELDS = frozenset(
    {"timestamp", "tool_call_id", "id", "provider_name", "provider_details", "metadata"}
)
_SUMMARY_WIDTH = 120
_STREAM_CHUNKS = 4


class CassetteError(Exception):
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


@dataclass
class _Interaction:
    key: str
    model: str
    request: dict[str, Any]
    response: dict[str, Any] | None = None  # None until answered; unanswered ones are not saved


class Cassette:
    """One cassette file, recording or replaying. Share one instance across a whole run."""

    def __init__(
        self,
        path: str | Path,
        mode: Literal["record", "replay"],
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.mode = mode
        self._env = env
        self._lock = threading.Lock()
        self._recorded: list[_Interaction] = []
        self._answers: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._served: dict[tuple[str, str], int] = {}
        self._models_by_key: dict[str, list[str]] = {}
        self._models: set[str] = set()

    # --- choosing a cassette -------------------------------------------------------

    @classmethod
    def record(cls, path: str | Path, *, env: Mapping[str, str] | None = None) -> Cassette:
        """A cassette that records into `path` (written by `save()`).

        `env` is the run's environment, searched for secrets to redact; default `os.environ`.
        """
        return cls(path, "record", env=env)

    @classmethod
    def replay(cls, path: str | Path, *, env: Mapping[str, str] | None = None) -> Cassette:
        """A cassette that answers from `path`; raises `CassetteError` if it cannot be read."""
        cassette = cls(path, "replay", env=env)
        cassette._load()
        return cassette

    @classmethod
    def from_settings(
        cls,
        execution: ExecutionSettings | None,
        root: str | Path,
        env: Mapping[str, str] | None = None,
        *,
        record_path: str | Path | None = None,
        replay_path: str | Path | None = None,
    ) -> Cassette | None:
        """The run's cassette, if any: the command line's `record_path`/`replay_path` first,
        then HOLODECK_RECORD / HOLODECK_REPLAY, then agent.yaml `execution.record/replay`
        (relative to the agent's directory `root`). None when nothing asks for one."""
        environ = os.environ if env is None else env
        levels: list[tuple[str, object, object, Path | None]] = [
            ("--record and --replay", record_path, replay_path, None),
            (
                f"{RECORD_VARIABLE} and {REPLAY_VARIABLE}",
                environ.get(RECORD_VARIABLE) or None,
                environ.get(REPLAY_VARIABLE) or None,
                None,
            ),
            (
                "execution.record and execution.replay",
                execution.record if execution is not None else None,
                execution.replay if execution is not None else None,
                Path(root),
            ),
        ]
        for where, record, replay, base in levels:
            if record is not None and replay is not None:
                raise CassetteError(f"{where} are both set; give one of them")
            chosen = record if record is not None else replay
            if chosen is None:
                continue
            path = Path(str(chosen)).expanduser()
            if base is not None and not path.is_absolute():
                path = base / path
            if record is not None:
                return cls.record(path, env=env)
            return cls.replay(path, env=env)
        return None

    @property
    def recording(self) -> bool:
        return self.mode == "record"

    @property
    def replaying(self) -> bool:
        return self.mode == "replay"

    # --- models --------------------------------------------------------------------

    def wrap(self, built: BuiltModel) -> BuiltModel:
        """`built`, with its model recording into or replaying from this cassette."""
        return replace(built, model=CassetteModel(built.model, self, built.provider, built.name))

    def build(
        self,
        model: ModelSettings,
        settings: Settings,
        env: Mapping[str, str],
        **build_options: Any,
    ) -> BuiltModel:
        """`build_model(model, settings, env, **build_options)`, then `wrap`.

        When replaying, a model that cannot be built (no API key, no endpoint) is not
        needed: a stand-in that refuses to be called takes its place. An unknown provider
        is still an error."""
        try:
            built = build_model(model, settings, env, **build_options)
        except ProviderError:
            if not self.replaying or settings.provider_type(model.provider) is None:
                raise
            built = _stand_in(
                model, settings, build_options.get("timeout"), build_options.get("max_retries")
            )
        return self.wrap(built)

    # --- recording -----------------------------------------------------------------

    def save(self) -> None:
        """Write what was recorded (atomically: the file is whole or untouched).
        Does nothing when replaying."""
        if not self.recording:
            return
        with self._lock:
            answered = [i for i in self._recorded if i.response is not None]
        document = {
            "version": VERSION,
            "interactions": [
                {"key": i.key, "model": i.model, "request": i.request, "response": i.response}
                for i in answered
            ],
        }
        text = HEADER + _dump_yaml(_scrub(document, _secrets(self._environ())))
        try:
            _write_atomically(self.path, text)
        except OSError as exc:
            raise CassetteError(f"{self.path}: cannot write the cassette: {exc}") from None

    def _begin(self, model: str, key: str, request: dict[str, Any]) -> _Interaction:
        interaction = _Interaction(key, model, request)
        with self._lock:
            self._recorded.append(interaction)  # in the order requests were made
        return interaction

    @staticmethod
    def _finish(interaction: _Interaction, response: ModelResponse) -> None:
        interaction.response = _response_to_data(response)

    # --- replaying -----------------------------------------------------------------

    def _answer(
        self, model: str, key: str, request: dict[str, Any], provider: str, name: str | None
    ) -> ModelResponse:
        with self._lock:
            slot = (model, key)
            if slot not in self._answers and model not in self._models:
                # the run's model is not the recorded one (e.g. replayed with --model)
                recorded_for = self._models_by_key.get(key)
                if recorded_for:
                    slot = (recorded_for[0], key)
            answers = self._answers.get(slot)
            if not answers:
                raise CassetteMiss(provider, name, self.path, _describe(request, key))
            index = self._served.get(slot, 0)
            self._served[slot] = index + 1
            data = answers[min(index, len(answers) - 1)]  # once exhausted, the last again
        return _response_from_data(data)

    def _load(self) -> None:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CassetteError(
                f"{self.path}: no such cassette; record one with --record {self.path}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(f"{self.path}: cannot read the cassette: {exc}") from None
        try:
            document = YAML(typ="safe").load(text)
        except (YAMLError, ValueError, RecursionError) as exc:
            raise CassetteError(f"{self.path}: not a valid cassette: {exc}") from None
        if not isinstance(document, dict) or document.get("version") != VERSION:
            raise CassetteError(
                f"{self.path}: not a cassette of version {VERSION}; re-record it with --record"
            )
        interactions = document.get("interactions") or []
        if not isinstance(interactions, list):
            raise CassetteError(f"{self.path}: `interactions` must be a list")
        for number, item in enumerate(interactions, 1):
            if not (
                isinstance(item, dict)
                and isinstance(item.get("key"), str)
                and isinstance(item.get("model"), str)
                and isinstance(item.get("response"), dict)
            ):
                raise CassetteError(
                    f"{self.path}: interaction {number} needs `key`, `model` and `response`"
                )
            try:
                _response_from_data(item["response"])
            except ValueError as exc:
                raise CassetteError(
                    f"{self.path}: interaction {number} has an unreadable response: {exc}"
                ) from None
            self._answers.setdefault((item["model"], item["key"]), []).append(item["response"])
            self._models.add(item["model"])
            models = self._models_by_key.setdefault(item["key"], [])
            if item["model"] not in models:
                models.append(item["model"])

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env


class CassetteModel(WrapperModel):
    """Records the wrapped model's answers into a cassette, or replays them without it."""

    def __init__(self, wrapped: Model, cassette: Cassette, provider: str, name: str | None) -> None:
        super().__init__(wrapped)
        self.cassette = cassette
        self.holodeck_provider = provider
        self.holodeck_name = name
        self.cassette_label = f"{provider}/{name}" if name else provider

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: SamplingSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        key = request_key(messages, model_settings, model_request_parameters)
        summary = request_summary(messages, model_request_parameters)
        if self.cassette.replaying:
            return self._replayed(key, summary)
        interaction = self.cassette._begin(self.cassette_label, key, summary)
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        self.cassette._finish(interaction, response)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: SamplingSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        key = request_key(messages, model_settings, model_request_parameters)
        summary = request_summary(messages, model_request_parameters)
        if self.cassette.replaying:
            yield ReplayedStream(
                self._replayed(key, summary), model_request_parameters=model_request_parameters
            )
            return
        interaction = self.cassette._begin(self.cassette_label, key, summary)
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
        response = stream.get()
        if response.state == "complete":  # a stream cut short is not an answer to replay
            self.cassette._finish(interaction, response)

    def _replayed(self, key: str, summary: dict[str, Any]) -> ModelResponse:
        return self.cassette._answer(
            self.cassette_label, key, summary, self.holodeck_provider, self.holodeck_name
        )


class ReplayedStream(CompletedStreamedResponse):
    """A recorded response streamed again: text in a few chunks, other parts whole."""

    def __init__(
        self, response: ModelResponse, *, model_request_parameters: ModelRequestParameters
    ) -> None:
        super().__init__(
            response, model_request_parameters=model_request_parameters, replay_events=True
        )

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        for index, part in enumerate(self.response.parts):
            if isinstance(part, TextPart) and part.content:
                first, *rest = text_chunks(part.content)
                yield manager.handle_part(vendor_part_id=index, part=replace(part, content=first))
                for chunk in rest:
                    for event in manager.handle_text_delta(vendor_part_id=index, content=chunk):
                        yield event
            else:
                yield manager.handle_part(vendor_part_id=index, part=part)


def text_chunks(text: str, count: int = _STREAM_CHUNKS) -> list[str]:
    """`text` in about `count` pieces, cut at whitespace so words stay whole."""
    size = max(1, -(-len(text) // count))
    chunks: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        while end < len(text) and not text[end].isspace():
            end += 1
        chunks.append(text[start:end])
        start = end
    return chunks or [text]


# --- request keys and summaries ------------------------------------------------------


def request_key(
    messages: Sequence[ModelMessage],
    model_settings: Mapping[str, Any] | None,
    parameters: ModelRequestParameters,
) -> str:
    """A stable hash of what decides a model's answer to this request."""
    dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    output = parameters.output_object
    payload = {
        "messages": [_canonical_message(m) for m in dumped],
        "tools": [_tool(t) for t in parameters.function_tools],
        "output": {
            "schema": _jsonable(output) if output is not None else None,
            "tools": [_tool(t) for t in parameters.output_tools],
        },
        "native_tools": [_jsonable(t) for t in parameters.native_tools],
        "settings": {
            name: value
            for name, value in (model_settings or {}).items()
            if name not in _TRANSPORT_SETTINGS and not name.endswith("_headers")
        },
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def request_summary(
    messages: Sequence[ModelMessage], parameters: ModelRequestParameters
) -> dict[str, Any]:
    """What a person needs to recognise a request: the user's words, where the turn is,
    and the tools on offer."""
    summary: dict[str, Any] = {"user": _last_user_text(messages)}
    last = messages[-1] if messages else None
    if isinstance(last, ModelRequest):
        steps = [_step(p) for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if steps:
            summary["after"] = ", ".join(steps)
    summary["tools"] = [t.name for t in parameters.function_tools]
    return summary


def _describe(summary: Mapping[str, Any], key: str) -> str:
    words = [f"user {_shorten(str(summary.get('user', '')), 60)!r}"]
    if summary.get("after"):
        words.append(f"after {_shorten(str(summary['after']), 60)}")
    tools = summary.get("tools") or []
    words.append(f"tools {', '.join(tools)}" if tools else "no tools")
    words.append(f"key {key}")
    return "; ".join(words)


def _last_user_text(messages: Sequence[ModelMessage]) -> str:
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in reversed(message.parts):
            if isinstance(part, UserPromptPart):
                if isinstance(part.content, str):
                    return _shorten(part.content, _SUMMARY_WIDTH)
                texts = [c for c in part.content if isinstance(c, str)]
                others = len(part.content) - len(texts)
                text = " ".join(texts) + (f" [+{others} attachment(s)]" if others else "")
                return _shorten(text, _SUMMARY_WIDTH)
    return ""


def _step(part: ToolReturnPart | RetryPromptPart) -> str:
    kind = "retry" if isinstance(part, RetryPromptPart) else "result"
    return f"{kind} of {part.tool_name}" if part.tool_name else kind


def _shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _canonical_message(message: dict[str, Any]) -> dict[str, Any]:
    kind = message.get("kind")
    out: dict[str, Any] = {
        "kind": kind,
        "parts": [_canonical_part(p) for p in message.get("parts") or []],
    }
    if kind == "request" and message.get("instructions"):
        out["instructions"] = message["instructions"]
    return out


def _canonical_part(part: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in part.items() if k not in _VOLATILE_PART_FIELDS}
    if isinstance(out.get("args"), str):
        with contextlib.suppress(ValueError):
            out["args"] = json.loads(out["args"])  # '{"a": 1}' and '{"a":1}' are one request
    return out


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters_json_schema,
        "strict": tool.strict,
        "kind": tool.kind,
    }


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=repr)


# --- responses -----------------------------------------------------------------------

# Fields that only say when or in which run a response arrived (and `kind`, implied).
_VOLATILE_RESPONSE_FIELDS = ("timestamp", "run_id", "conversation_id", "kind")


def _response_to_data(response: ModelResponse) -> dict[str, Any]:
    full: dict[str, Any] = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
    for name in _VOLATILE_RESPONSE_FIELDS:
        full.pop(name, None)
    compact: dict[str, Any] = _without_empty(full)
    try:  # keep the short form only if it reads back as the same response
        if _comparable(_response_from_data(compact)) == _comparable(response):
            return compact
    except ValueError:
        pass
    return full


def _response_from_data(data: Mapping[str, Any]) -> ModelResponse:
    message = ModelMessagesTypeAdapter.validate_python([{**data, "kind": "response"}])[0]
    if not isinstance(message, ModelResponse):  # pragma: no cover - kind is forced above
        raise ValueError("not a model response")
    return message


def _comparable(response: ModelResponse) -> Any:
    data = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
    for name in _VOLATILE_RESPONSE_FIELDS:
        data.pop(name, None)
    return data


def _without_empty(value: Any, within: str | None = None) -> Any:
    """Drop None, empty mappings and zero token counts: the YAML stays short and readable."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            item = _without_empty(item, key)
            if item is None or item == {}:
                continue
            if within == "usage" and type(item) in (int, float) and item == 0:
                continue
            kept[key] = item
        return kept
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


# --- secrets -------------------------------------------------------------------------


def _secrets(env: Mapping[str, str]) -> list[tuple[str, str]]:
    found = [
        (name, value)
        for name, value in env.items()
        if name.upper().endswith(SECRET_SUFFIXES) and value and value.strip()
    ]
    return sorted(found, key=lambda item: -len(item[1]))  # longest first


def _scrub(value: Any, secrets: list[tuple[str, str]]) -> Any:
    if not secrets:
        return value
    if isinstance(value, str):
        for name, secret in secrets:
            if value == secret:
                return f"[redacted {name}]"
            if len(secret) >= MIN_EMBEDDED_SECRET and secret in value:
                value = value.replace(secret, f"[redacted {name}]")
        return value
    if isinstance(value, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value


# --- files ---------------------------------------------------------------------------


def _dump_yaml(document: Any) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096  # one line per value: diffs show whole changes
    yaml.indent(mapping=2, sequence=4, offset=2)
    stream = io.StringIO()
    yaml.dump(_styled(document), stream)
    return stream.getvalue()


def _styled(value: Any, key: str | None = None) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(value, dict):
        styled = CommentedMap()
        for k, v in value.items():
            styled[k] = _styled(v, k)
        return styled
    if isinstance(value, list):
        seq = CommentedSeq(_styled(v) for v in value)
        if key == "tools" and all(isinstance(v, str) for v in value):
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and _literal_friendly(value):
        return LiteralScalarString(value)
    return value


def _literal_friendly(text: str) -> bool:
    """Multi-line text that a YAML literal block holds exactly."""
    if "\n" not in text or text[:1].isspace():
        return False
    return all(line.isprintable() and line == line.rstrip() for line in text.split("\n"))


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# --- replaying without a usable model ------------------------------------------------


def _stand_in(
    model: ModelSettings, settings: Settings, timeout: float | None, max_retries: int | None
) -> BuiltModel:
    """A model for replays whose real model cannot be built; it refuses to be called."""
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from holodeck.llm.providers import _sampling
    from holodeck.spec.model_settings import ProviderType

    name = f"{model.provider}/{model.name}" if model.name else model.provider

    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise CassetteError(f"{name}: cannot be called while replaying a cassette")

    async def refuse_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise CassetteError(f"{name}: cannot be called while replaying a cassette")
        yield ""  # pragma: no cover - makes this an async generator

    kind = settings.provider_type(model.provider) or ProviderType.OPENAI
    return BuiltModel(
        model=FunctionModel(refuse, stream_function=refuse_stream, model_name=model.name or name),
        settings=_sampling(model, kind, timeout, max_retries),
        provider=model.provider,
        name=model.name,
    )
