"""What the stores on a server share: the client package's absence said as the extra to
install, failures that name the store and its address without a password, and the
dimension check every store makes when it opens a collection."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from holodeck.errors import ConfigurationError, ExecutionError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_MASK = "***"
_PASSWORD_KEY = re.compile(r"((?:password|api_key|apikey)\s*=\s*)([^&\s]+)", re.IGNORECASE)


def masked(url: str) -> str:
    """`url` with any password (in the address or a key=value part) replaced by ***."""
    text = _PASSWORD_KEY.sub(rf"\g<1>{_MASK}", url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return "<unreadable url>"
    if parts.password is None:
        return text
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.partition(':')[0]}:{_MASK}@{host}"))


def missing(package: str, extra: str) -> ConfigurationError:
    return ConfigurationError(
        f"the {extra} vector store needs the {package} package, which is not installed",
        hint=f"pip install 'holodeck-agents[{extra}]'",
    )


def unreachable(
    store: str, where: str, error: BaseException, secrets: tuple[str, ...] = ()
) -> ExecutionError:
    """`error` of the `store` at `where`, in one line, without a password or traceback."""
    reason = " ".join(str(error).split()) or type(error).__name__
    for secret in secrets:
        if secret:
            reason = reason.replace(secret, _MASK)
    for found in _PASSWORD_KEY.finditer(reason):
        reason = reason.replace(found.group(2), _MASK)
    return ExecutionError(
        f"{store} vector store at {masked(where)}: {reason}",
        hint=f"start {store} at that address, or point the vector store's url elsewhere",
    )


def check_dimensions(store: str, collection: str, stored: int | None, wanted: int | None) -> None:
    """A collection keeps the width of the vectors it was made with."""
    if stored == wanted:
        return

    def said(width: int | None) -> str:
        return "no vectors (keywords only)" if width is None else f"{width}-dimension vectors"

    raise ConfigurationError(
        f"{store} collection {collection!r} holds {said(stored)}, "
        f"but the embedding model gives {said(wanted)}",
        hint="use the embedding model the collection was built with, or delete the collection "
        "so it is built again",
    )


def check_rows(
    vectors: npt.NDArray[np.float32] | None, chunks: int, dimensions: int | None
) -> None:
    """`replace_file` gets one vector per chunk, of the collection's width (or, in a
    collection without vectors, none)."""
    if dimensions is None and vectors is None:
        return  # keywords only
    rows, width = (0, None) if vectors is None else (vectors.shape[0], _width(vectors))
    if chunks == 0 and rows == 0:
        return  # a file with nothing to search: no vectors needed
    if rows != chunks or width != dimensions:
        raise ExecutionError(
            f"{chunks} chunks came with {rows} vectors of width {width}; "
            f"the collection expects one vector of width {dimensions} per chunk",
        )


def _width(vectors: npt.NDArray[np.float32]) -> int | None:
    return int(vectors.shape[1]) if vectors.ndim > 1 else None


def secrets_of(url: str | None) -> tuple[str, ...]:
    if not url:
        return ()
    try:
        password = urlsplit(url).password
    except ValueError:
        return ()
    return (password,) if password else ()
