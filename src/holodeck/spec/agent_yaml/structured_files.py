"""Read a JSON or YAML data file referenced from a definition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from holodeck.spec.diagnostics import SpecError
from holodeck.spec.yaml.limits import DEFINITION, read_limited, too_deep
from holodeck.spec.yaml.source import read_yaml


def read_structured(path: Path) -> tuple[Any, str | None]:
    """(data, None) or (None, problem). `.json` is read as JSON, anything else as YAML;
    both within the limits of a definition file."""
    if path.suffix.lower() == ".json":
        try:
            return json.loads(read_limited(path, DEFINITION).decode("utf-8")), None
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"cannot read {path}: {exc}"
        except SpecError as exc:
            return None, exc.render()
        except RecursionError:
            return None, too_deep(path).render()
        except json.JSONDecodeError as exc:
            return (
                None,
                f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            )
    try:
        return read_yaml(path).data, None
    except SpecError as exc:
        return None, exc.render()
