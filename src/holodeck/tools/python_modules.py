"""Import a user's Python file (a tool, middleware or metric) by path, once, in a space
of its own.

Each folder of user files becomes a package of its own (`holodeck_user.s<n>_<hash>`), so
two agents that both have a `helper.py` beside their tools each get theirs: a tool's
`import helper` finds the neighbour in its own folder first (through the `__import__` its
module sees), and anything else the usual way. A `ModuleSpace` claims a directory (an
uploaded image): files under it load in that space, and `close()` drops every module the
space loaded from `sys.modules`, so a server that replaces an agent does not keep the old
one's code. Files under no claimed directory share one space for the process's life.

A claimed space is held by each of its users (`claim` on a directory already claimed
holds that space once more) and drops its modules when the last one closes it. The
import hook (a `sys.meta_path` finder and the `holodeck_user` package) is installed when
the first space loads a file and removed when the last closes, so a host program that
opens and closes an agent has the interpreter's import machinery as it was.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import itertools
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from holodeck.tools.errors import ToolLoadError

ROOT = "holodeck_user"
_original_import = builtins.__import__
_lock = threading.RLock()
_numbers = itertools.count(1)


class ModuleLoadError(ToolLoadError):
    """A user's file failed while it was imported; `line` is where, when known."""

    def __init__(self, detail: str, file: Path, line: int | None = None) -> None:
        self.detail, self.line = detail, line
        super().__init__(f"line {line}: {detail}" if line else detail, file)


class ModuleSpace:
    """The modules loaded from the files under `root` (None: the process's shared space)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root.resolve() if root is not None else None
        self._number = next(_numbers)
        self._folders: dict[Path, str] = {}  # folder -> its package's name
        self._loaded: dict[tuple[Path, int], ModuleType] = {}
        self._lock = threading.RLock()  # one import of a file, even when two threads ask
        self._holders = 0  # users of a claimed space: the last to close it drops its modules
        self._live = False  # its packages are in sys.modules (it counts in `_live_spaces`)

    def load(self, path: Path) -> ModuleType:
        path = path.resolve()
        try:
            key = (path, path.stat().st_mtime_ns)
        except OSError as exc:
            raise ToolLoadError(f"cannot read: {exc.strerror}", path) from None
        with self._lock:
            if key not in self._loaded:
                self._loaded[key] = self._execute(path)
            return self._loaded[key]

    def hold(self) -> ModuleSpace:
        """One more user of this space, which `close()`s it when done. A space closed
        before takes imports again: its files' neighbours are found once more."""
        with _lock:
            self._holders += 1
            if self.root is not None:
                _claims.setdefault(self.root, self)
            for folder in self._folders:
                self._package_locked(folder)
        return self

    def close(self) -> None:
        """One user is done with it; after the last, forget this space's modules
        (functions taken from them still run, but an import they make from now on finds
        no neighbours)."""
        with _lock:
            self._holders = max(self._holders - 1, 0)
            if self._holders and self.root is not None:
                return
            if self.root is not None and _claims.get(self.root) is self:
                del _claims[self.root]
            for package in self._folders.values():
                _packages.pop(package, None)
                for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
                    del sys.modules[name]
            self._loaded.clear()
            if self._live:
                self._live = False
                _leave()

    def _package(self, folder: Path) -> str:
        with _lock:
            return self._package_locked(folder)

    def _package_locked(self, folder: Path) -> str:
        name = self._folders.get(folder)
        if name is None:
            digest = hashlib.sha1(str(folder).encode()).hexdigest()[:12]
            name = self._folders[folder] = f"{ROOT}.s{self._number}_{digest}"
        if not self._live:
            self._live = True
            _enter()
        _packages[name] = folder
        if name not in sys.modules:  # a package whose only place is the folder
            package = ModuleType(name)
            package.__path__ = [str(folder)]
            package.__package__ = name
            sys.modules[name] = package
        return name

    def _execute(self, path: Path) -> ModuleType:
        package = self._package(path.parent)
        stem = path.stem if path.stem.isidentifier() else "_file_" + path.stem.encode().hex()
        name = f"{package}.{stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ToolLoadError("not a Python file", path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__["__builtins__"] = _BUILTINS
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:  # user code, even SystemExit: where it failed, not our stack
            sys.modules.pop(name, None)
            raise _load_error(path, exc) from None
        return module


def _load_error(path: Path, exc: BaseException) -> ModuleLoadError:
    line = _line_in(path, exc)
    if isinstance(exc, ImportError):
        missing = f" (pip install {exc.name})" if exc.name else ""
        return ModuleLoadError(f"import failed: {exc}{missing}", path, line)
    said = str(exc)
    return ModuleLoadError(
        f"{type(exc).__name__}: {said}" if said else type(exc).__name__, path, line
    )


_SHARED = ModuleSpace()
_claims: dict[Path, ModuleSpace] = {}
_packages: dict[str, Path] = {}  # package name -> its folder


def claim(root: Path) -> ModuleSpace:
    """The space of the files under `root`, held once more if it is claimed already;
    `close()` it when they are done with."""
    with _lock:
        space = _claims.get(root.resolve()) or ModuleSpace(root)
        return space.hold()


def space_of(path: Path) -> ModuleSpace:
    for parent in path.parents:
        space = _claims.get(parent)
        if space is not None:
            return space
    return _SHARED


def load_module(path: Path) -> ModuleType:
    """The module defined by `path`, imported once per file version, in the space of the
    directory that claimed it. A tool file can import its neighbours. Any failure (even
    `SystemExit` at import) becomes a `ModuleLoadError` naming the file and line."""
    path = path.resolve()
    return space_of(path).load(path)


def _scoped_import(
    name: str,
    globals: Mapping[str, Any] | None = None,
    locals: Mapping[str, Any] | None = None,
    fromlist: Sequence[str] = (),
    level: int = 0,
) -> Any:
    """`__import__` for user modules: a top-level name found beside the importing module
    is that neighbour, in the importer's own package."""
    if level == 0 and globals is not None:
        importer = str(globals.get("__name__") or "")
        parts = importer.split(".")
        if len(parts) >= 2 and parts[0] == ROOT:
            package = f"{ROOT}.{parts[1]}"
            top = name.partition(".")[0]
            if _is_neighbour(package, top):
                module = _original_import(f"{package}.{name}", globals, locals, fromlist, 0)
                return module if fromlist else sys.modules[f"{package}.{top}"]
    return _original_import(name, globals, locals, fromlist, level)


def _is_neighbour(package: str, top: str) -> bool:
    if f"{package}.{top}" in sys.modules:
        return True
    folder = _packages.get(package)
    if folder is None:
        return False
    return importlib.machinery.PathFinder.find_spec(top, [str(folder)]) is not None


_BUILTINS: dict[str, Any] = {**builtins.__dict__, "__import__": _scoped_import}


class _Scoped(importlib.abc.Loader):
    """A loader for a module in a user package: it runs with the scoped `__import__`."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__dict__["__builtins__"] = _BUILTINS
        self._inner.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, ... for tracebacks
        return getattr(self._inner, name)


class _UserFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of user packages in their folders, to load them scoped."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(ROOT + ".") or fullname.count(".") < 2 or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _Scoped(spec.loader)
        return spec


_FINDER = _UserFinder()
_live_spaces = 0  # spaces whose packages are in sys.modules


def _enter() -> None:
    """A space loads its first file: the first one installs the hook (under `_lock`)."""
    global _live_spaces
    _live_spaces += 1
    if _live_spaces > 1:
        return
    if ROOT not in sys.modules:
        root = ModuleType(ROOT)
        root.__path__ = []
        sys.modules[ROOT] = root
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def _leave() -> None:
    """A space has dropped its modules: the last one removes the hook (under `_lock`)."""
    global _live_spaces
    _live_spaces -= 1
    if _live_spaces:
        return
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    sys.modules.pop(ROOT, None)


def _line_in(path: Path, exc: BaseException) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename) == path:
        return exc.lineno
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return frames[-1].lineno if frames else None
