"""The upload store: agent images sent to POST /v1/agents, kept under the server's state
directory, and how one is taken in.

An upload is loaded completely before anything is kept: its archive is written to a
private staging file, unpacked within `deployment.uploads` limits, validated (its name
too), and its Python files imported in a module space of their own; nothing long-lived
starts. Only then is the archive renamed into place. A failure at any step is an
`ApiError` naming the member inside the archive, and leaves nothing behind.

On disk (a 0700 directory, archives 0600):
    <name>.tar.gz      the archive of each uploaded agent (its name is the file's)
    images/<sha256>/   its image unpacked, named by the archive's content
Everything here runs in a worker thread: imports are user code and may take their time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from holodeck.config.loader import load_agent
from holodeck.errors import HoloDeckError
from holodeck.runtime import Agent, Hosting, RunOptions
from holodeck.server._errors import ApiError
from holodeck.spec.archives.unpack import (
    CONFIG_FILE,
    ArchiveTooLarge,
    MiB,
    extract_image,
    human_size,
)
from holodeck.spec.diagnostics import Diagnostic, SpecError
from holodeck.spec.models.agent_spec import AgentSpec
from holodeck.spec.models.settings import UploadSettings
from holodeck.spec.models.tools import FunctionTool
from holodeck.spec.sandbox_check import unwalled
from holodeck.tools.python_modules import ModuleLoadError, ModuleSpace, claim, load_module

log = logging.getLogger("holodeck.server")

# The Agent Image Spec's rule for names; an uploaded agent's name is also its file's name.
NAME_RULE = re.compile(r"[a-z0-9-]{1,64}")
UPLOAD = Path("upload.tar.gz")  # how messages name the archive a client sent
_STALE_S = 600.0  # leftovers of a process that died mid-upload are this old at least


@dataclass
class Staged:
    """An upload loaded and imported, not yet kept (`commit`) or thrown away (`discard`)."""

    spec: AgentSpec
    agent: Agent
    modules: ModuleSpace
    image: Path  # the unpacked image, images/<sha256>
    archive: Path  # the archive: a staging file until committed
    created: bool  # this load unpacked `image` (a failure removes it)


class UploadStore:
    def __init__(
        self, directory: Path, limits: UploadSettings, options: RunOptions, hosting: Hosting
    ) -> None:
        self.directory = directory
        self.images = directory / "images"
        self.limits = limits
        self.options = options  # the server's --model and --harness
        self.hosting = hosting  # the server's; an upload's own trust is added to it

    def archive_of(self, name: str) -> Path:
        return self.directory / f"{name}.tar.gz"

    def stored(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.glob("*.tar.gz") if not p.name.startswith("."))

    # -- taking an upload in

    def stage(self, data: bytes, reserved: Collection[str]) -> Staged:
        """Load the archive `data` completely; `reserved` names may not be taken."""
        self._make_private()
        fd, name = tempfile.mkstemp(prefix=".staging-", suffix=".tar.gz", dir=self.directory)
        archive = Path(name)  # mkstemp makes it 0600 whatever the umask
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            return self._load(archive, _digest(data), reserved, expected=None)
        except BaseException:
            archive.unlink(missing_ok=True)
            raise

    def load_stored(self, archive: Path, reserved: Collection[str]) -> Staged:
        """An archive kept by an earlier upload (at start-up, or taken by another process)."""
        expected = archive.name.removesuffix(".tar.gz")
        return self._load(archive, _digest(archive.read_bytes()), reserved, expected=expected)

    def commit(self, staged: Staged) -> None:
        final = self.archive_of(staged.spec.name)
        if staged.archive != final:
            staged.archive.replace(final)
            staged.archive = final

    def discard(self, staged: Staged) -> None:
        staged.modules.close()
        if staged.archive.name.startswith(".staging-"):
            staged.archive.unlink(missing_ok=True)
        if staged.created:
            shutil.rmtree(staged.image, ignore_errors=True)

    def remove_image(self, image: Path) -> None:
        """An old version's files, once a new upload of its agent replaced it."""
        shutil.rmtree(image, ignore_errors=True)

    def sweep(self) -> None:
        """Remove what a process that died mid-upload left: staging files and images no
        archive uses (only old ones: another process of this server may be unpacking)."""
        if not self.directory.is_dir():
            return
        used = {_digest(a.read_bytes()) for a in self.stored()}
        now = time.time()
        leftovers = [*self.directory.glob(".staging-*"), *self.directory.glob(".upload-*")]
        if self.images.is_dir():
            leftovers += [p for p in self.images.iterdir() if p.name not in used]
        for path in leftovers:
            try:
                if now - path.lstat().st_mtime < _STALE_S:
                    continue
            except OSError:
                continue
            log.info("removing %s, left by an upload that did not finish", path.name)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def _make_private(self) -> None:
        for directory in (self.directory, self.images):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            directory.chmod(0o700)  # mkdir's mode is cut by the umask; an old one may be 0755

    def _load(
        self, archive: Path, digest: str, reserved: Collection[str], expected: str | None
    ) -> Staged:
        self._make_private()
        image = self.images / digest
        created = not image.is_dir()
        modules: ModuleSpace | None = None
        try:
            root = self._unpack(archive, image) if created else _image_root(image)
            spec = self._spec(root, image, archive)
            self._check_name(spec.name, reserved, expected)
            self._check_walls(spec)
            self._check_room(spec.name, image, archive)
            modules = claim(image)
            agent = self._agent(spec, image)
        except BaseException:
            if modules is not None:
                modules.close()
            if created:
                shutil.rmtree(image, ignore_errors=True)
            raise
        return Staged(spec, agent, modules, image, archive, created)

    def _unpack(self, archive: Path, image: Path) -> Path:
        limit = self.limits.max_unpacked_mib * MiB
        try:
            return extract_image(
                archive,
                image,
                max_members=self.limits.max_files,
                max_total_bytes=limit,
                max_member_bytes=limit,
            )
        except ArchiveTooLarge as exc:
            raise ApiError(
                413,
                "upload_too_large",
                self._said(exc.diagnostics, image, archive),
                hint=f"this server takes images of at most {self.limits.max_unpacked_mib} MiB "
                f"and {self.limits.max_files} files unpacked: make the image smaller, or raise "
                "deployment.uploads.max_unpacked_mib / max_files in the server's config.yaml",
            ) from None
        except SpecError as exc:
            raise self._invalid(exc.diagnostics, image, archive) from None

    def _spec(self, root: Path, image: Path, archive: Path) -> AgentSpec:
        try:
            # never resolve ${VAR} from this server's environment: its secrets are not theirs
            return load_agent(root, expand_env=False)
        except SpecError as exc:
            raise self._invalid(exc.diagnostics, image, archive) from None

    def _check_walls(self, spec: AgentSpec) -> None:
        names = unwalled(spec)
        if names:
            raise ApiError(
                422,
                "invalid_agent",
                f"{', '.join(names)}: `sandbox: {{type: none}}` is refused for an uploaded "
                "agent: its commands would run on this server without walls",
                hint="remove the sandbox's `type: none`; commands then run in bubblewrap",
            )

    def _check_name(self, name: str, reserved: Collection[str], expected: str | None) -> None:
        if not NAME_RULE.fullmatch(name):
            shown = name if len(name) <= 40 else name[:40] + "..."
            raise ApiError(
                422,
                "invalid_agent",
                f"{UPLOAD}!/{CONFIG_FILE}: the agent's name {shown!r} "
                f"({len(name)} characters) cannot be served from an upload",
                hint="an uploaded agent's `name` is 1 to 64 lowercase letters, digits and "
                "hyphens (the Agent Image Spec's rule), e.g. `support-bot`",
            )
        if expected is not None and name != expected:
            raise ApiError(
                422,
                "invalid_agent",
                f"archive {expected}.tar.gz holds an agent named {name!r}",
                hint="upload the image again over POST /v1/agents",
            )
        if name in reserved:
            raise ApiError(
                409,
                "agent_exists",
                f"an agent named {name!r} is served from this server's command line",
                hint="give the uploaded agent another `name`",
            )

    def _check_room(self, name: str, image: Path, archive: Path) -> None:
        """The store's total with this upload in, and the version it replaces out."""
        replaced = self.archive_of(name)
        skip = {image, archive, replaced}
        if replaced.is_file():
            skip.add(self.images / _digest(replaced.read_bytes()))
        used = sum(_size(p) for p in self.stored() if p not in skip)
        if self.images.is_dir():
            used += sum(_size(p) for p in self.images.iterdir() if p not in skip)
        total = used + _size(image) + _size(archive)
        limit = self.limits.max_store_mib * MiB
        if total > limit:
            raise ApiError(
                413,
                "upload_store_full",
                f"with this agent the uploaded agents would take {human_size(total)}, over "
                f"this server's {self.limits.max_store_mib} MiB for uploads",
                hint="raise deployment.uploads.max_store_mib in the server's config.yaml, or "
                "upload new versions of agents rather than new agents",
            )

    def _agent(self, spec: AgentSpec, image: Path) -> Agent:
        """The runnable agent, its Python files (and its sub-agents') imported now, so a
        file that fails does so here rather than at a first turn."""
        try:
            lent = tuple(self.limits.providers)  # the server's credentials it may use
            hosting = dataclasses.replace(self.hosting, uploaded=True, upload_providers=lent)
            agent = Agent(spec, self.options, hosting=hosting)
            agent.prepare()  # its .env, model and tools: problems answer this upload
            try:
                for path in _python_files(spec):
                    load_module(path)
            except BaseException:  # dropped unopened: its hold on the modules goes with it
                agent.modules.close()
                raise
        except ModuleLoadError as exc:
            where = Diagnostic(exc.detail, file=exc.file, line=exc.line)
            raise self._invalid([where], image, image) from None
        except HoloDeckError as exc:
            raise ApiError(
                422, "invalid_agent", self._scrub(exc.message, image), hint=exc.hint
            ) from None
        except Exception as exc:  # user code or what it declares: say what, never a 500
            log.debug("uploaded agent %s does not load", spec.name, exc_info=True)
            raise ApiError(
                422,
                "invalid_agent",
                f"{UPLOAD}: the agent does not load: {type(exc).__name__}: "
                + self._scrub(str(exc), image),
            ) from None
        return agent

    # -- messages that name members of the upload, never this server's paths

    def _invalid(self, diagnostics: list[Diagnostic], image: Path, archive: Path) -> ApiError:
        return ApiError(422, "invalid_agent", self._said(diagnostics, image, archive))

    def _said(self, diagnostics: list[Diagnostic], image: Path, archive: Path) -> str:
        lines = []
        for d in diagnostics:
            file, member = d.file, d.member
            inside = _relative(file, image) if file is not None else None
            if inside is not None:
                file, member = UPLOAD, f"{inside}!/{member}" if member else inside
            elif file is not None and file.resolve() == archive.resolve():
                file = UPLOAD
            hint = self._scrub(d.hint, image) if d.hint else None
            moved = dataclasses.replace(
                d, file=file, member=member, message=self._scrub(d.message, image), hint=hint
            )
            lines.append(moved.render())
        return "\n".join(lines)

    def _scrub(self, text: str, image: Path) -> str:
        text = _inside(text, image)
        for path in (self.directory.resolve(), self.directory.absolute(), self.directory):
            text = text.replace(str(path), "the upload store")
        return without_paths(text, image)


def without_paths(text: str, image: Path) -> str:
    """`text` (an upload's error) naming no path of this server's disk: paths inside the
    image relative to it, any other absolute path by its last part only (a Python's
    install path in a tool server's complaint, say)."""
    return _ABSOLUTE.sub("", _inside(text, image))


def _inside(text: str, image: Path) -> str:
    for path in (image.resolve(), image, image.absolute()):
        text = text.replace(f"{path}/", "")
    return text


# the directories of an absolute path (`/a/b/` of `/a/b/c`), not of a URL's path
_ABSOLUTE = re.compile(r"(?<![\w./:~-])/(?:[^\s/:'\"`,;()\[\]]+/)+")


def _python_files(spec: AgentSpec) -> list[Path]:
    """The Python files `spec` and its sub-agents run: tools and middleware."""
    files = [spec.root / t.file for t in spec.tools if isinstance(t, FunctionTool)]
    files += [spec.root / m for m in spec.middleware]
    for sub in spec.subagents.values():
        files += _python_files(sub)
    return files


def _image_root(image: Path) -> Path:
    if (image / CONFIG_FILE).is_file():
        return image
    children = [c for c in image.iterdir() if c.is_dir()]
    return children[0] if len(children) == 1 else image


def _relative(file: Path, root: Path) -> str | None:
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _size(path: Path) -> int:
    try:
        if path.is_file():
            return path.stat().st_size
        return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file())
    except OSError:
        return 0
