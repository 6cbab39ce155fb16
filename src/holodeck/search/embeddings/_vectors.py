"""Rows of vectors as every embedder returns them: float32, L2-normalised, in order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from holodeck.errors import ExecutionError

Vectors = npt.NDArray[np.float32]


def empty(dim: int | None) -> Vectors:
    """No rows; `dim` columns when the model's size is known (else 0)."""
    return np.zeros((0, dim or 0), dtype=np.float32)


def normalised(rows: Sequence[Sequence[float]] | npt.NDArray[np.floating], name: str) -> Vectors:
    """`rows` as one float32 matrix of unit-length rows.

    A row of zeros stays zeros: it has no direction, and NaN would poison every score."""
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ExecutionError(
            f"embedding model {name} returned vectors of shape {matrix.shape}",
            hint="check that the model is an embedding model",
        )
    if not np.isfinite(matrix).all():
        raise ExecutionError(
            f"embedding model {name} returned vectors holding NaN or infinity",
            hint="check the model and the server that runs it",
        )
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: Vectors = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0).astype(
        np.float32, copy=False
    )
    return out
