"""What the stores on a database server share: errors that name the server without its
password, and the client package's absence said as the extra to install."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from holodeck.sessions._store import SessionStoreError

_MASK = "***"
# `password=...` in a key=value connection string (PostgreSQL's other form of address)
_CONNINFO_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


def masked(url: str) -> str:
    """`url` with its password (in the address or its query) replaced by ***."""
    if "://" not in url:
        return _CONNINFO_PASSWORD.sub(rf"\g<1>{_MASK}", url)
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            users, _, host = netloc.rpartition("@")
            netloc = f"{users.partition(':')[0]}:{_MASK}@{host}"
        query = urlencode(
            [
                (key, _MASK if key.lower() == "password" else value)
                for key, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="*",
        )
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    except ValueError:  # not an address that parses: show none of it
        return "<unreadable url>"


def passwords(url: str) -> list[str]:
    """The password(s) written in `url`, as written and decoded."""
    found: list[str] = []
    if "://" in url:
        try:
            parts = urlsplit(url)
            if parts.password:
                found.append(parts.password)
            found += [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]
        except ValueError:
            pass
    found += [match.group(2).strip("'") for match in _CONNINFO_PASSWORD.finditer(url)]
    return [text for secret in found if secret for text in {secret, unquote(secret)}]


def server_error(store: str, url: str, error: BaseException, hint: str) -> SessionStoreError:
    """`error` of the `store` (Redis, PostgreSQL) at `url`, said with neither the url's
    password nor a traceback of the client's."""
    reason = " ".join(str(error).split()) or type(error).__name__  # one line
    for secret in passwords(url):
        reason = reason.replace(secret, _MASK)
    return SessionStoreError(f"{store} session store {masked(url)}: {reason}", hint=hint)


def missing(package: str, extra: str) -> SessionStoreError:
    return SessionStoreError(
        f"the {extra} session store needs the {package} package, which is not installed",
        hint=f"pip install 'holodeck-agents[{extra}]'",
    )
