"""`Cassette`: a run's model exchanges recorded to, or replayed from, one file (see the
package's docstring)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai.messages import ModelResponse

from holodeck.llm.cassette._errors import CassetteError, CassetteMiss
from holodeck.llm.cassette._file import (
    _response_from_data,
    _response_to_data,
    append_text,
    read_interactions,
    saved_text,
)
from holodeck.llm.cassette._keys import _describe
from holodeck.llm.cassette._model import CassetteModel, _stand_in
from holodeck.llm.errors import ProviderError
from holodeck.llm.providers import BuiltModel, build_model

if TYPE_CHECKING:
    from holodeck.spec.models.model_settings import ModelSettings
    from holodeck.spec.models.settings import ExecutionSettings, Settings


RECORD_VARIABLE = "HOLODECK_RECORD"
REPLAY_VARIABLE = "HOLODECK_REPLAY"


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
        self._saving = threading.Lock()  # one save at a time, whichever thread runs it
        self._recorded: list[_Interaction] = []  # not saved yet
        self._saved = 0
        self._end: int | None = None  # where the next save writes; None: file not started
        self._synced = True
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

    def save(self, *, durable: bool = False) -> int:
        """Append the exchanges answered since the last save to the file; return how many.

        The first save starts the file afresh. The cost is that of what is appended; with
        nothing new, nothing is written. Once this returns, a killed process keeps what was
        saved; `durable=True` also waits for the disk (a power cut), which blocks: on an
        event loop use `asave()`. Does nothing when replaying."""
        if not self.recording:
            return 0
        with self._saving:
            with self._lock:
                answered = [i for i in self._recorded if i.response is not None]
            first = self._end is None
            if not answered and not first and (self._synced or not durable):
                return 0
            total = self._saved + len(answered)
            data = [
                {"key": i.key, "model": i.model, "request": i.request, "response": i.response}
                for i in answered
            ]
            text = saved_text(data, total, self._environ(), first=first)
            self._end = append_text(self.path, text, self._end, durable=durable)
            self._saved, self._synced = total, durable
            done = {id(i) for i in answered}
            with self._lock:
                self._recorded = [i for i in self._recorded if id(i) not in done]
        return len(answered)

    async def asave(self) -> int:
        """`save(durable=True)` in a worker thread, so the event loop never waits on the disk."""
        return await asyncio.to_thread(self.save, durable=True)

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
        for item in read_interactions(self.path):
            self._answers.setdefault((item["model"], item["key"]), []).append(item["response"])
            self._models.add(item["model"])
            models = self._models_by_key.setdefault(item["key"], [])
            if item["model"] not in models:
                models.append(item["model"])

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env
