"""`Attachment`: a file given with a turn (an image, audio, a document)."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Attachment:
    """A file given with a turn: an image or a document."""

    data: bytes
    media_type: str
    name: str = ""

    @classmethod
    def from_path(cls, path: Path) -> Attachment:
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return cls(path.read_bytes(), media_type, path.name)

    @property
    def modality(self) -> str:
        kind = self.media_type.split("/", 1)[0]
        return kind if kind in ("image", "audio", "video") else "file"
