"""How much a PDF may inflate: a cap on the decompressed size of one file's streams.

A PDF's streams are compressed (Flate, LZW, run-length, Brotli ...); a few kilobytes can
inflate to gigabytes. Before any text is extracted, every stream but images (text
extraction never decodes an image) is decoded with pypdf's own output limits set to what
is left of the file's budget, so no decoder ever allocates more than the cap. pypdf keeps
each decoded stream with its object, so extraction then reuses them: nothing is decoded
twice, and what the file holds in memory is at most the cap.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from holodeck.errors import ExecutionError

MAX_DECODED = 64 * 1024 * 1024  # bytes of decompressed streams per PDF
_LIMITS = (  # pypdf's per-stream output limits, one per decoder that can expand its input
    "zlib_maximum_output_length",
    "lzw_maximum_output_length",
    "run_length_maximum_output_length",
    "brotli_maximum_output_length",
    "jbig2_maximum_output_length",
    "array_based_stream_maximum_output_length",
)


class InflatesTooMuch(ExecutionError):
    """A PDF whose streams decompress to more than the cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"its compressed streams inflate to more than {describe(limit)} (the limit for "
            "one PDF): it is refused as a decompression bomb; if it is genuine, split it "
            "into smaller PDFs"
        )


def describe(size: int) -> str:
    """A byte count for a person: `128 MiB`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


@contextmanager
def stream_limits(limit: int) -> Iterator[None]:
    """pypdf decodes no single stream to more than `limit` bytes in this block."""
    from pypdf import apply_configuration

    limits: dict[str, Any] = dict.fromkeys(_LIMITS, max(limit, 1))  # 0 would mean no limit
    with apply_configuration(None, **limits):
        yield


def decode_within(reader: Any, limit: int) -> None:
    """Decode the PDF's streams (images aside) within `limit` bytes in all; raises
    `InflatesTooMuch` as soon as they would need more."""
    from pypdf.errors import LimitReachedError
    from pypdf.generic import IndirectObject, StreamObject

    spent = 0
    for generation, numbers in list(reader.xref.items()):
        for number in list(numbers):
            try:
                found = reader.get_object(IndirectObject(number, generation, reader))
            except Exception:  # a broken object: extraction reports it, if used
                continue
            if not isinstance(found, StreamObject) or found.get("/Subtype") == "/Image":
                continue
            left = limit - spent
            if left <= 0:
                raise InflatesTooMuch(limit)
            try:
                with stream_limits(left):
                    spent += len(found.get_data())
            except LimitReachedError:
                raise InflatesTooMuch(limit) from None
            except Exception:  # undecodable: extraction reports it, if used
                continue
    if spent > limit:
        raise InflatesTooMuch(limit)
