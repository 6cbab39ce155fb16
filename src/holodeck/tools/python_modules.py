"""Import a user's Python file (a tool, middleware or metric) by path, once."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from holodeck.tools.errors import ToolLoadError

_LOADED: dict[tuple[Path, int], ModuleType] = {}


def load_module(path: Path) -> ModuleType:
    """The module defined by `path`, imported once per file version.

    The file's directory is importable while it loads, so a tool file can import
    its neighbours. Any failure becomes a `ToolLoadError` naming the file and line.
    """
    path = path.resolve()
    try:
        key = (path, path.stat().st_mtime_ns)
    except OSError as exc:
        raise ToolLoadError(f"cannot read: {exc.strerror}", path) from None
    if key in _LOADED:
        return _LOADED[key]
    name = "holodeck_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:12] + "_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ToolLoadError("not a Python file", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except ImportError as exc:
        sys.modules.pop(name, None)
        missing = f" (pip install {exc.name})" if exc.name else ""
        raise ToolLoadError(f"import failed: {exc}{missing}", path) from None
    except Exception as exc:  # user code: report where it failed, not our stack
        sys.modules.pop(name, None)
        line = _line_in(path, exc)
        raise ToolLoadError(
            f"line {line}: {type(exc).__name__}: {exc}" if line else f"{type(exc).__name__}: {exc}",
            path,
        ) from None
    finally:
        sys.path.remove(str(path.parent))
    _LOADED[key] = module
    return module


def _line_in(path: Path, exc: BaseException) -> int | None:
    if isinstance(exc, SyntaxError):
        return exc.lineno
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return frames[-1].lineno if frames else None
