"""Test case `files:` made ready for the model.

A file is read from the agent's directory (`path`) or downloaded (`url`) through the
agent's outbound policy (`network:` settings: a URL in a definition is reached only where
they allow), within `execution.download_timeout`. Downloads are kept in a cache
(`execution.cache_dir`, default `.holodeck/cache/files` beside the definition) keyed by
the URL, so a later case or run does not fetch the file again; `cache_enabled: false`, or a
file's own `cache: false`, fetches it every time. Images and PDFs go to the model as
attachments; text and CSV files, Word, PowerPoint and Excel files, chosen PDF pages and
chosen cells go as text added to the turn's input (any model reads them).
`execution.file_timeout` bounds the whole preparation of one file.

    files = CaseFiles(spec)
    attachments, text = await files.prepare(turn.files)
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from holodeck.atomic_write import write_atomically
from holodeck.errors import InputError
from holodeck.net import DownloadError, OutboundBlocked, OutboundPolicy, download, policy_for
from holodeck.runtime import Attachment
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.cases import FileInput
from holodeck.testing.document_text import office_text, pdf_pages, sheet_cells, slides

DEFAULT_CACHE_DIR = ".holodeck/cache/files"
DEFAULT_DOWNLOAD_TIMEOUT_S = 60.0
_MEDIA = {"image": "image/png", "pdf": "application/pdf", "text": "text/plain", "csv": "text/csv"}
_AS_TEXT = ("text", "csv", "word", "powerpoint", "excel")


@dataclass
class CaseFiles:
    """Prepares the files of a run's cases; one per run (downloads of one URL by cases
    running at once wait for each other, so the cache is filled once)."""

    spec: AgentSpec
    policy: OutboundPolicy | None = None
    fetched: int = 0  # downloads made (not served from the cache)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def __post_init__(self) -> None:
        execution = self.spec.execution
        if self.policy is None:
            self.policy = policy_for(self.spec, uploaded=False)
        self.download_timeout = execution.download_timeout or DEFAULT_DOWNLOAD_TIMEOUT_S
        self.file_timeout = execution.file_timeout
        self.cache_enabled = execution.cache_enabled is not False
        self.cache_dir = self.spec.resolve(execution.cache_dir or DEFAULT_CACHE_DIR)

    async def prepare(self, files: Sequence[FileInput]) -> tuple[list[Attachment], str]:
        """The attachments, and the text to add to the input (descriptions, documents)."""
        attachments: list[Attachment] = []
        text = ""
        for file in files:
            attachment, added = await self._bounded(file)
            if attachment is not None:
                attachments.append(attachment)
            text += added
        return attachments, text

    async def _bounded(self, file: FileInput) -> tuple[Attachment | None, str]:
        if self.file_timeout is None:
            return await self._one(file)
        try:
            async with asyncio.timeout(self.file_timeout):
                return await self._one(file)
        except TimeoutError:
            raise InputError(
                f"test case file {_label(file)}: not ready within {self.file_timeout:g} s",
                hint="raise execution.file_timeout, or send fewer pages",
            ) from None

    async def _one(self, file: FileInput) -> tuple[Attachment | None, str]:
        data = await (self._download(file) if file.url is not None else self._read(file))
        name = _name(file)
        kind = file.kind
        try:
            if kind in _AS_TEXT or (kind == "pdf" and file.pages):
                body = await asyncio.to_thread(_as_text, data, file)
                said = f": {file.description}" if file.description else ""
                return None, f"\n\n--- {name}{said} ---\n{body}\n--- end of {name} ---"
        except InputError as exc:
            raise InputError(f"test case file {_label(file)}: {exc.message}") from None
        media_type = mimetypes.guess_type(name)[0] or _MEDIA.get(kind, "application/octet-stream")
        if kind in _MEDIA and not media_type.startswith(_MEDIA[kind].split("/")[0]):
            media_type = _MEDIA[kind]
        added = f"\n\n(Attached {name}: {file.description})" if file.description else ""
        return Attachment(data, media_type, name), added

    async def _read(self, file: FileInput) -> bytes:
        path = self.spec.resolve(file.path or "")
        try:
            return await asyncio.to_thread(path.read_bytes)
        except OSError as exc:  # it was there when the definition loaded
            raise InputError(f"cannot read the case's file {path}: {exc.strerror or exc}") from None

    async def _download(self, file: FileInput) -> bytes:

        url = file.url or ""
        keep = file.cache if file.cache is not None else self.cache_enabled
        cached = self.cache_dir / (hashlib.sha256(url.encode()).hexdigest() + ".bin")
        async with self._locks.setdefault(url, asyncio.Lock()):
            if keep and cached.is_file():
                return await asyncio.to_thread(cached.read_bytes)
            assert self.policy is not None
            try:
                data = await download(url, self.policy, timeout=self.download_timeout)
            except OutboundBlocked as exc:
                raise InputError(
                    f"test case file {_label(file)}: {exc}",
                    hint="allow the host under `network: allow:` in agent.yaml or config.yaml",
                ) from None
            except DownloadError as exc:
                hint = (
                    "raise execution.download_timeout, or give the file as a local `path`"
                    if "within" in exc.message
                    else None
                )
                raise InputError(
                    f"test case file {_name(file)}: download failed: {exc.message}", hint=hint
                ) from None
            self.fetched += 1
            if keep:
                await asyncio.to_thread(write_atomically, cached, data)
            return data


def _as_text(data: bytes, file: FileInput) -> str:
    kind = file.kind
    if kind in ("text", "csv"):
        return data.decode("utf-8", errors="replace").strip()
    if kind == "pdf":
        return pdf_pages(data, file.pages or [])
    if kind == "excel" and (file.sheet is not None or file.range is not None):
        return sheet_cells(data, file.sheet, file.range)
    text = office_text(data, kind)
    return slides(text, file.pages) if kind == "powerpoint" and file.pages else text


def _name(file: FileInput) -> str:
    if file.path is not None:
        return Path(file.path).name
    last = unquote(urlsplit(file.url or "").path.rsplit("/", 1)[-1])
    return last or "download"


def _label(file: FileInput) -> str:
    return f"{_name(file)} ({file.url})" if file.url is not None else _name(file)
