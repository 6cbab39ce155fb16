"""The cassette file: reading and checking it, and writing it (responses in a short form,
secrets redacted, atomically)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse

from holodeck.atomic_write import write_atomically
from holodeck.llm.cassette._errors import CassetteError

VERSION = 1
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
# Shorter secret values are redacted only where a whole string equals them: replacing
# them inside text would mangle ordinary words.
MIN_EMBEDDED_SECRET = 8
HEADER = (
    "# HoloDeck cassette: model exchanges recorded with --record, replayed offline with\n"
    "# --replay. `key` hashes the request; a request that changes no longer matches.\n"
)


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


def write_document(path: Path, document: Any, env: Mapping[str, str]) -> None:
    """Write `document` as the cassette at `path`, with the secrets of `env` redacted."""
    text = HEADER + _dump_yaml(_scrub(document, _secrets(env)))
    try:
        write_atomically(path, text.encode(), mode=0o600)  # may hold private exchanges
    except OSError as exc:
        raise CassetteError(f"{path}: cannot write the cassette: {exc}") from None


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
