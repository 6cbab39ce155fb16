"""Files made to hurt a reader: JSON nested a million deep, PDFs whose outline is nested
thousands deep, PDF streams that inflate to gigabytes. Written byte by byte (pypdf's
writer cannot make them: it recurses through an outline's parents)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

MIB = 1 << 20
_ADLER = 65521


def nested_json(depth: int) -> str:
    """A JSON document of `depth` arrays, each inside the last."""
    return "[" * depth + "]" * depth


def raw_pdf(objects: Mapping[int, str | bytes], root: int = 1) -> bytes:
    """A PDF of the given numbered objects (a body each), with a valid xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        body = objects[number]
        out += f"{number} 0 obj\n".encode()
        out += body if isinstance(body, bytes) else body.encode("latin-1")
        out += b"\nendobj\n"
    size = max(objects) + 1
    xref = len(out)
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    for number in range(1, size):
        entry = (
            f"{offsets[number]:010d} 00000 n \n" if number in offsets else "0" * 10 + " 65535 f \n"
        )
        out += entry.encode()
    out += f"trailer\n<< /Size {size} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _stream(content: bytes, flate: bool) -> bytes:
    filters = " /Filter /FlateDecode" if flate else ""
    return f"<< /Length {len(content)}{filters} >>\nstream\n".encode() + content + b"\nendstream"


def pdf_pages(
    contents: Sequence[bytes], *, flate: bool = False, catalog: str = ""
) -> dict[int, str | bytes]:
    """Objects of a PDF whose pages draw the given content streams (objects 1 to 3, then
    a page and its stream each); `catalog` adds entries to the catalog."""
    pages = [4 + 2 * index for index in range(len(contents))]
    kids = " ".join(f"{number} 0 R" for number in pages)
    objects: dict[int, str | bytes] = {
        1: f"<< /Type /Catalog /Pages 2 0 R {catalog}>>",
        2: f"<< /Type /Pages /Kids [{kids}] /Count {len(contents)} >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for number, content in zip(pages, contents, strict=True):
        objects[number] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {number + 1} 0 R >>"
        )
        objects[number + 1] = _stream(content, flate)
    return objects


def shows(text: str) -> bytes:
    """A content stream that writes `text` in Helvetica."""
    return f"BT /F1 11 Tf 72 740 Td ({text}) Tj ET".encode("latin-1")


def deep_outline_pdf(depth: int, text: str) -> bytes:
    """A one-page PDF whose outline (bookmarks) is a chain `depth` items deep."""
    first = 7  # after the page (4) and its stream (5); the outline's root is 6
    objects = pdf_pages([shows(text)], catalog=f"/Outlines {first - 1} 0 R ")
    objects[first - 1] = f"<< /Type /Outlines /First {first} 0 R /Last {first} 0 R /Count 1 >>"
    for level in range(depth):
        number = first + level
        child = number + 1
        kids = f"/First {child} 0 R /Last {child} 0 R /Count 1 " if level < depth - 1 else ""
        objects[number] = (
            f"<< /Title (Heading {level}) /Parent {number - 1} 0 R {kids}/Dest [4 0 R /Fit] >>"
        )
    return raw_pdf(objects)


def inflating(mib: int, tail: bytes) -> bytes:
    """A valid zlib stream of `mib` MiB of spaces then `tail`: about 1 KiB per MiB.

    A full flush resets the compressor, so the block of one MiB repeats byte for byte;
    the checksum of the run is worked out rather than computed over gigabytes."""
    block = b" " * MIB
    compressor = zlib.compressobj(9)
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    header, body = first[:2], first[2:]
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = raw.compress(tail) + raw.flush()
    count = mib * MIB  # adler32 of `count` bytes of value 32, from (a=1, b=0)
    a = (1 + 32 * count) % _ADLER
    b = (count + 32 * count * (count + 1) // 2) % _ADLER
    checksum = zlib.adler32(tail, (b << 16) | a)
    return header + body * mib + end + checksum.to_bytes(4, "big")


def flate_bomb_pdf(mib_per_page: Sequence[int], text: str) -> bytes:
    """A PDF whose pages' content streams inflate to the given MiB each (spaces), the
    last page's ending with `text`."""
    contents = [inflating(mib, b"") for mib in mib_per_page[:-1]]
    contents.append(inflating(mib_per_page[-1], shows(text)))
    return raw_pdf(pdf_pages(contents, flate=True))
