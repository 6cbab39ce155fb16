"""The definition a run tested, as JSON data a saved run keeps (`TestRun.settings`), with
its secrets hidden: runs are shared as CI artifacts and reports.

What shows as `"***"`:
- every value of a field whose name says it is a secret (`api_key`, `token`, `password`,
  `client_secret`, `credentials`, `Authorization`, an MCP server's `GITHUB_TOKEN` ...),
  and every `SecretStr`;
- every value that came from a `${VAR}` reference in the definition's YAML files (the
  agent's, its config.yaml files', its sub-agents'), whatever its field: a whole string
  equal to the variable's value, or the value inside a longer string when it is at least
  `MIN_EMBEDDED` characters (shorter ones would mangle ordinary words);
- the same for the values of environment variables whose names say they are secrets.

It is kept small: no test cases (the run holds them), no skill bodies, no instructions
read from a file (the prompt version names them), no diagnostics.

    snapshot = settings_snapshot(spec)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr
from pydantic_core import to_jsonable_python

from holodeck.config.env_vars import environment_for
from holodeck.config.settings import global_config_path

if TYPE_CHECKING:
    from holodeck.spec.models.agent_spec import AgentSpec

MARK = "***"
MIN_EMBEDDED = 8
SECRET_WORDS = frozenset(
    {
        "key",
        "keys",
        "apikey",
        "token",
        "secret",
        "secrets",
        "password",
        "passwd",
        "credential",
        "credentials",
        "authorization",
    }
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_REFERENCE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_LEFT_OUT = {"test_cases", "warnings", "subagents", "skills"}
_MAX_SCANNED = 1 << 20  # a YAML file larger than this holds data, not settings


def settings_snapshot(spec: AgentSpec, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`spec` as JSON data with its secrets shown as `***` (see the module's text)."""
    env = environment_for(spec.root) if env is None else env
    secrets = _secret_values(spec, env)
    cleaned: dict[str, Any] = to_jsonable_python(_redacted(_plain(spec), secrets), fallback=str)
    return cleaned


def is_secret_name(name: str) -> bool:
    """Whether a field (or variable) named `name` holds a secret: `api_key`, `apiKey`,
    `GITHUB_TOKEN`, `X-Auth-Token`, `password`; not `max_tokens` or `keyword_weight`."""
    return any(word.lower() in SECRET_WORDS for word in _WORD.findall(name))


def _plain(spec: AgentSpec) -> dict[str, Any]:
    data = spec.model_dump(mode="python", exclude=_LEFT_OUT, exclude_none=True)
    if spec.instructions_file is not None:
        data.pop("instructions", None)  # the file's text: the prompt version names it
    data["skills"] = [
        {"name": s.name, "description": s.description, "directory": s.directory}
        for s in spec.skills
    ]
    if spec.subagents:
        data["subagents"] = {name: _plain(sub) for name, sub in spec.subagents.items()}
    return data


def _redacted(value: Any, secrets: list[str], name: str = "") -> Any:
    if name and is_secret_name(name) and value not in (None, "", [], {}, ()):
        return MARK
    if isinstance(value, SecretStr):
        return MARK
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, dict):
        return {str(k): _redacted(v, secrets, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_redacted(v, secrets) for v in value]
    if isinstance(value, str):
        for secret in secrets:
            if value == secret:
                return MARK
            if len(secret) >= MIN_EMBEDDED and secret in value:
                value = value.replace(secret, MARK)
    return value


def _secret_values(spec: AgentSpec, env: Mapping[str, str]) -> list[str]:
    """What `${VAR}` references in the definition's files stood for, and the values of
    variables with secret names; longest first, so a longer one is replaced whole."""
    found = {v for k, v in env.items() if is_secret_name(k) and v.strip()}
    for text in _definition_texts(spec, env):
        for match in _REFERENCE.finditer(text):
            name, default = match[1], match[2]
            value = env.get(name) or (default if default is not None else env.get(name, ""))
            if value.strip():
                found.add(value)
    return sorted(found, key=len, reverse=True)


def _definition_texts(spec: AgentSpec, env: Mapping[str, str]) -> Iterable[str]:
    """The YAML the definition was read from: the agent's (and its image's MCP servers'),
    the config.yaml files, and every sub-agent's."""
    paths = {spec.source, global_config_path(env)}
    for pattern in ("*.yaml", "*.yml", "tools/mcp/*.yaml", "tools/mcp/*.yml"):
        paths.update(spec.root.glob(pattern))
    for path in sorted(paths):
        yield _read(path)
    for sub in spec.subagents.values():
        yield from _definition_texts(sub, env)


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > _MAX_SCANNED:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
