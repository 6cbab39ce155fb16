"""The cassette file: reading and checking it, and growing it save by save (responses in
a short form, secrets redacted).

The file is one YAML document whose last key is the `interactions` list, so a save
appends the exchanges answered since the previous one to the end of the file, then a
`# saved N interactions` comment line that marks the save complete:

    version: 1
    interactions:
    # saved 0 interactions
      - key: 3f1c...
        ...
    # saved 1 interaction

A save costs what it adds, never what the file already holds, and a run that is killed
keeps every save that finished: the OS has the bytes once `write` returns (`durable`
also waits for the disk, for a power cut). A save cut short leaves text after the last
mark; reading ignores it. Files without marks (written whole by earlier versions) read as
they are.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse

from holodeck.llm.cassette._errors import CassetteError

VERSION = 1
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
# Shorter secret values are redacted only where a whole string equals them: replacing
# them inside text would mangle ordinary words.
MIN_EMBEDDED_SECRET = 8
HEADER = (
    "# HoloDeck cassette: model exchanges recorded with --record, replayed offline with\n"
    "# --replay. `key` hashes the request; a request that changes no longer matches.\n"
    "# Each save appends to the list and ends with a `# saved N interactions` line.\n"
)
# Column 0 holds no content inside the list (items are indented), so this line is a mark.
_SAVED = re.compile(r"^# saved \d+ interactions?$", re.MULTILINE)


def read_interactions(path: Path) -> list[dict[str, Any]]:
    """The interactions of the cassette at `path`, each with a `key`, a `model` and a
    readable `response`; raises `CassetteError` naming what is wrong."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(f"{path}: no such cassette; record one with --record {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"{path}: cannot read the cassette: {exc}") from None
    marks = list(_SAVED.finditer(text))
    if marks:  # what follows the last mark is a save that never finished
        text = text[: marks[-1].end()]
    try:
        document = YAML(typ="safe").load(text)
    except (YAMLError, ValueError, RecursionError) as exc:
        raise CassetteError(f"{path}: not a valid cassette: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise CassetteError(
            f"{path}: not a cassette of version {VERSION}; re-record it with --record"
        )
    interactions = document.get("interactions") or []
    if not isinstance(interactions, list):
        raise CassetteError(f"{path}: `interactions` must be a list")
    for number, item in enumerate(interactions, 1):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("key"), str)
            and isinstance(item.get("model"), str)
            and isinstance(item.get("response"), dict)
        ):
            raise CassetteError(f"{path}: interaction {number} needs `key`, `model` and `response`")
        try:
            _response_from_data(item["response"])
        except ValueError as exc:
            raise CassetteError(
                f"{path}: interaction {number} has an unreadable response: {exc}"
            ) from None
    return interactions


def saved_text(
    interactions: list[dict[str, Any]], total: int, env: Mapping[str, str], *, first: bool
) -> str:
    """What one save appends: `interactions` as items of the list (secrets of `env`
    redacted) and the mark saying `total` are saved; the first save opens the file too."""
    text = (HEADER + f"version: {VERSION}\ninteractions:\n" + _mark(0)) if first else ""
    if interactions:
        items = _dump_yaml({"interactions": _scrub(interactions, _secrets(env))})
        # the emitter ends a document after a `|+` block: the file goes on, so drop that
        text += items.removeprefix("interactions:\n").removesuffix("...\n")
        text += _mark(total)
    return text


def append_text(path: Path, text: str, at: int | None, *, durable: bool) -> int:
    """Write `text` into `path` at offset `at` (None: start the file afresh) and return
    the offset after it. A write that fails is cut off again, so the next save writes
    over it; `durable` waits until the disk holds the file."""
    try:
        if at is None:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if at is None else 0), 0o600)
    except OSError as exc:
        raise CassetteError(f"{path}: cannot write the cassette: {exc}") from None
    start = at or 0
    try:
        if at is None:
            os.fchmod(fd, 0o600)  # an older file being replaced: it may hold private exchanges
        os.lseek(fd, start, os.SEEK_SET)
        encoded = text.encode()
        data = memoryview(encoded)
        while data:
            data = data[os.write(fd, data) :]
        if durable:
            os.fsync(fd)
    except OSError as exc:
        # if this fails too, the next save still writes from `start`; reading stops at a mark
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise CassetteError(f"{path}: cannot write the cassette: {exc}") from None
    finally:
        os.close(fd)
    return start + len(encoded)


def _mark(total: int) -> str:
    return f"# saved {total} interaction{'' if total == 1 else 's'}\n"


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
