"""`${VAR}` and `${VAR:-default}` substitution on parsed YAML values.

Substitution runs on values after parsing, never on raw text, so a `${...}` in a
comment is inert and a substituted value can never change the document's shape.
`$${VAR}` writes a literal `${VAR}`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from holodeck.spec.diagnostics import Collector, FieldPath
from holodeck.spec.yaml.source import YamlDocument

_REFERENCE = re.compile(r"\$(\$?)\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def substitute(doc: YamlDocument, env: Mapping[str, str], collector: Collector) -> Any:
    """Return `doc.data` with every `${VAR}` in string values replaced from `env`.

    Undefined variables without a default are reported (with file and line) and
    left as written, so every problem in the document is reported in one pass.
    """
    return _walk(doc.data, (), doc, env, collector)


def _walk(
    value: Any, path: FieldPath, doc: YamlDocument, env: Mapping[str, str], out: Collector
) -> Any:
    if isinstance(value, dict):
        return {k: _walk(v, (*path, k), doc, env, out) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, (*path, i), doc, env, out) for i, v in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        return _expand(value, path, doc, env, out)
    return value


def _expand(
    text: str, path: FieldPath, doc: YamlDocument, env: Mapping[str, str], out: Collector
) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(1):  # `$${X}` escapes to a literal `${X}`
            return match.group(0)[1:]
        body = match.group(2)
        name, has_default, default = body.partition(":-")
        if not _NAME.fullmatch(name):
            out.add(
                doc.diagnostic(
                    path,
                    f"`${{{body}}}` is not a valid variable reference",
                    hint="write ${NAME} or ${NAME:-default}; use $${...} for a literal",
                )
            )
            return match.group(0)
        if name in env and (env[name] != "" or not has_default):
            return env[name]
        if has_default:
            return default
        out.add(
            doc.diagnostic(
                path,
                f"environment variable `{name}` is not set",
                hint=f"export {name}=..., add it to .env beside the agent, "
                f"or give a default: ${{{name}:-value}}",
            )
        )
        return match.group(0)

    return _REFERENCE.sub(replace, text)


def referenced_names(value: Any) -> dict[str, bool]:
    """Each variable a parsed YAML value refers to, and whether every reference to it has a
    default (`${NAME:-x}`): what a runtime environment must provide, without resolving any."""
    found: dict[str, bool] = {}
    if isinstance(value, dict):
        items: list[Any] = list(value.values())
    elif isinstance(value, list):
        items = value
    else:
        items = []
        if isinstance(value, str):
            for match in _REFERENCE.finditer(value):
                name, has_default, _ = match.group(2).partition(":-")
                if not match.group(1) and _NAME.fullmatch(name):
                    found[name] = found.get(name, True) and bool(has_default)
    for item in items:
        for name, defaulted in referenced_names(item).items():
            found[name] = found.get(name, True) and defaulted
    return found
