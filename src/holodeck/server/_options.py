"""What one `holodeck deploy` serves and how: the agents' paths, the address, and the
limits from the `deployment:` block, with command-line flags on top. It travels to
worker processes as JSON."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal

from holodeck.net import loopback_name
from holodeck.spec.models.settings import DeploymentSettings, NamedKey, UploadSettings

DEFAULT = DeploymentSettings()


@dataclass(frozen=True)
class ServeOptions:
    paths: tuple[str, ...]
    host: str = DEFAULT.host
    port: int = DEFAULT.port
    workers: int = DEFAULT.workers
    model: str | None = None  # replaces every agent's model (`test` serves offline)
    harness: Literal["none"] | None = None  # `--harness none`: agents run in HoloDeck's loop
    api_keys: tuple[str, ...] = ()  # bare keys, each named by its digest (`key_name`)
    named_keys: tuple[tuple[str, str], ...] = ()  # (name, key)
    requests_per_minute: int | None = None
    cors_origins: tuple[str, ...] = ()
    max_request_bytes: int = DEFAULT.max_request_bytes
    max_concurrent_turns: int = DEFAULT.max_concurrent_turns
    max_queued_turns: int = DEFAULT.max_queued_turns
    max_queued_turns_per_session: int = DEFAULT.max_queued_turns_per_session
    shutdown_grace_seconds: float = DEFAULT.shutdown_grace_seconds
    allow_uploads: bool = False
    state_dir: str = ".holodeck/server"  # uploaded agent images live here
    log_dir: str | None = None  # None: ~/.holodeck/logs
    lock_wait_seconds: float = 60.0  # a turn waits this long for its session's previous turn
    uploads: UploadSettings = DEFAULT.uploads  # what uploaded agents may take

    @classmethod
    def from_settings(
        cls, paths: tuple[str, ...], settings: DeploymentSettings | None, **flags: Any
    ) -> ServeOptions:
        """Options from a `deployment:` block, then the flags that were given (not None)."""
        d = settings or DEFAULT
        auth = d.auth
        entries = auth.api_keys if auth and auth.type == "api_key" else []
        keys = tuple(k.get_secret_value() for k in entries if not isinstance(k, NamedKey))
        named = tuple(
            (k.name, k.key.get_secret_value()) for k in entries if isinstance(k, NamedKey)
        )
        options = cls(
            paths=paths,
            host=d.host,
            port=d.port,
            workers=d.workers,
            api_keys=keys,
            named_keys=named,
            requests_per_minute=d.rate_limit.requests_per_minute if d.rate_limit else None,
            cors_origins=tuple(d.cors_origins),
            max_request_bytes=d.max_request_bytes,
            max_concurrent_turns=d.max_concurrent_turns,
            max_queued_turns=d.max_queued_turns,
            max_queued_turns_per_session=d.max_queued_turns_per_session,
            shutdown_grace_seconds=d.shutdown_grace_seconds,
            allow_uploads=d.allow_uploads,
            uploads=d.uploads,
        )
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in flags.items() if v is not None and k in known}
        return replace(options, **given)

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=lambda model: model.model_dump())

    @classmethod
    def from_json(cls, data: str) -> ServeOptions:
        raw = json.loads(data)
        for name in ("paths", "api_keys", "cors_origins"):
            raw[name] = tuple(raw[name])
        raw["named_keys"] = tuple((name, key) for name, key in raw["named_keys"])
        raw["uploads"] = UploadSettings.model_validate(raw["uploads"])
        return cls(**raw)

    @property
    def keys(self) -> tuple[tuple[str, str], ...]:
        """Every key with its name: (name, key)."""
        return self.named_keys + tuple((key_name(key), key) for key in self.api_keys)

    @property
    def loopback(self) -> bool:
        """Listening only on a loopback address: only this machine can connect."""
        return loopback_name(self.host)

    @property
    def uploads_dir(self) -> Path:
        return Path(self.state_dir) / "agents"


def key_name(key: str) -> str:
    """The name of a key given without one: stable as the list changes, and not the key
    (a digest of a random key does not give it away)."""
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:8]
